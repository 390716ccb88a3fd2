package schedule

import (
	"context"
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

// Receiver is one configured webhook with its secret.
type Receiver struct {
	Index  int // its position in the configuration: its only label
	URL    string
	Secret []byte
}

// Poster sends one request; *target.Client implements it (guarded, no
// redirects, bounded).
type Poster interface {
	Do(ctx context.Context, r target.Request) capture.Capture
}

// WebhookArgs is one event to deliver to one receiver. It is unique by
// receiver and event id: however often a change is told, it is delivered
// once per receiver (idempotent by event id).
type WebhookArgs struct {
	Webhook int    `json:"webhook" river:"unique"`
	EventID string `json:"event_id" river:"unique"`
	Body    string `json:"body"`
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
)

type webhookWorker struct {
	river.WorkerDefaults[WebhookArgs]
	receivers map[int]Receiver
	post      Poster
	now       func() time.Time
	result    func(webhook int, result string)
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
	r, ok := w.receivers[job.Args.Webhook]
	if !ok {
		return river.JobCancel(errors.New("webhook: receiver no longer configured"))
	}
	body := []byte(job.Args.Body)
	c := w.post.Do(ctx, target.Request{Method: http.MethodPost, URL: r.URL, Body: body, Header: map[string]string{
		"Content-Type":          "application/json",
		webhook.SignatureHeader: webhook.Sign(r.Secret, body, w.now()),
		webhook.EventIDHeader:   job.Args.EventID,
	}})
	if c.Responded() && c.Status >= 200 && c.Status <= 299 {
		w.report(job.Args.Webhook, DeliveryDelivered)
		return nil
	}
	if job.Attempt >= job.MaxAttempts {
		w.report(job.Args.Webhook, DeliveryGaveUp)
	} else {
		w.report(job.Args.Webhook, DeliveryRetry)
	}
	return errDelivery{status: c.Status, outcome: c.Outcome}
}

func (w *webhookWorker) report(i int, result string) {
	if w.result != nil {
		w.result(i, result)
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
