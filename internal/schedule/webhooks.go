package schedule

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/riverqueue/river"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/criteria"
	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/store"
	"github.com/exchangerebel/payability/internal/target"
	"github.com/exchangerebel/payability/internal/webhook"
)

// WebhookAttempts bounds the deliveries of one event to one receiver; River
// spaces them with its exponential backoff (attempt⁴ seconds, jittered:
// about 1 s, 16 s, 81 s, 4 min, 10 min, 21 min, 40 min between the eight).
const WebhookAttempts = 8

// Receiver is one configured webhook with its secret. It is known by its
// identity, its configuration id and URL (Key), never by its position: a
// delivery queued for a receiver goes to that receiver or to none.
type Receiver struct {
	ID     string // the configuration's id of the receiver, "" when none
	URL    string
	Secret []byte
	// Format is the payload's shape (webhook.Formats; "" is json).
	Format string
}

// Key is the receiver's stable identity, what a queued delivery names: a
// digest of its id and URL (the URL, which may carry a token, is not kept in
// the job).
func (r Receiver) Key() string { return ReceiverKey(r.ID, r.URL) }

// ReceiverKey is the key of the receiver with id and url.
func ReceiverKey(id, url string) string {
	sum := sha256.Sum256([]byte("payability webhook receiver\x00" + id + "\x00" + url))
	return "rcv_" + hex.EncodeToString(sum[:12])
}

// Label is the receiver's metrics label: its id, else its key.
func (r Receiver) Label() string {
	if r.ID != "" {
		return r.ID
	}
	return r.Key()
}

// Poster sends one request; *target.Client implements it (guarded, no
// redirects, bounded).
type Poster interface {
	Do(ctx context.Context, r target.Request) capture.Capture
}

// WebhookArgs is one event to deliver to one receiver, named by its Key.
// It is unique by receiver and event id: however often a change is told, it
// is delivered once per receiver (idempotent by event id). A job of an
// earlier release (which named the receiver by its position) has no
// receiver key and is dropped.
type WebhookArgs struct {
	Receiver string `json:"receiver" river:"unique"`
	EventID  string `json:"event_id" river:"unique"`
	Body     string `json:"body"`
}

// Kind implements river.JobArgs.
func (WebhookArgs) Kind() string { return "payability_monitor_webhook" }

// InsertOpts: unique by the fields marked unique, in every state.
func (WebhookArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: WebhookAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// Delivery results, a closed set (the metrics' label values).
const (
	DeliveryDelivered = "delivered" // a 2xx answer
	DeliveryRetry     = "retry"     // failed; River will try again
	DeliveryGaveUp    = "gave_up"   // failed on the last attempt
	// DeliveryDropped: the receiver left the configuration while the
	// delivery was pending; it is sent to no one (its label is the key).
	DeliveryDropped = "dropped"
)

type webhookWorker struct {
	river.WorkerDefaults[WebhookArgs]
	receivers map[string]Receiver // by Key
	post      Poster
	now       func() time.Time
	result    func(webhook, result string)
}

// errDelivery is closed-form: the receiver's answer is never echoed.
type errDelivery struct {
	status  int
	outcome capture.Outcome
}

func (e errDelivery) Error() string {
	return fmt.Sprintf("webhook: delivery failed (status %d, outcome %s)", e.status, e.outcome)
}

func (w *webhookWorker) Timeout(*river.Job[WebhookArgs]) time.Duration { return time.Minute }

func (w *webhookWorker) Work(ctx context.Context, job *river.Job[WebhookArgs]) error {
	r, ok := w.receivers[job.Args.Receiver]
	if !ok || job.Args.Receiver == "" {
		w.report(cmp.Or(job.Args.Receiver, "unknown"), DeliveryDropped)
		return river.JobCancel(errors.New("webhook: receiver no longer configured"))
	}
	body := []byte(job.Args.Body)
	c := w.post.Do(ctx, target.Request{Method: http.MethodPost, URL: r.URL, Body: body, Header: map[string]string{
		"Content-Type":          "application/json",
		webhook.SignatureHeader: webhook.Sign(r.Secret, body, w.now()),
		webhook.EventIDHeader:   job.Args.EventID,
	}})
	if c.Responded() && c.Status >= 200 && c.Status <= 299 {
		w.report(r.Label(), DeliveryDelivered)
		return nil
	}
	if job.Attempt >= job.MaxAttempts {
		w.report(r.Label(), DeliveryGaveUp)
	} else {
		w.report(r.Label(), DeliveryRetry)
	}
	return errDelivery{status: c.Status, outcome: c.Outcome}
}

func (w *webhookWorker) report(label, result string) {
	if w.result != nil {
		w.result(label, result)
	}
}

// eventOf is the outcome_changed event of a change from prev to cur.
func eventOf(prev, cur store.Observation) webhook.Event {
	return webhook.Event{
		ID: webhook.EventID(cur.Endpoint, cur.Op, cur.Slot), Type: webhook.TypeOutcomeChanged,
		Endpoint: cur.Endpoint, Op: cur.Op, From: string(monitor.OutcomeOf(prev)), To: string(monitor.OutcomeOf(cur)),
		Reasons: cur.Reasons, At: criteria.Timestamp(cur.At),
	}
}
