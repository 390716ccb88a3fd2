package schedule

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/target"
	"github.com/exchangerebel/payability/internal/webhook"
)

// recordingPoster answers 200 and keeps every request.
type recordingPoster struct{ got []target.Request }

func (p *recordingPoster) Do(_ context.Context, r target.Request) capture.Capture {
	p.got = append(p.got, r)
	return capture.Capture{Status: 200, Outcome: capture.OK}
}

// TestAPendingDeliveryIsNeverRedirected reproduces the finding: with
// receivers [A, B], a delivery queued for A, then a configuration without A
// (B now first), the delivery once went to B (the receiver at A's old
// position), signed with B's secret. It is now dropped and counted; B's own
// delivery still goes to B.
func TestAPendingDeliveryIsNeverRedirected(t *testing.T) {
	a := Receiver{URL: "http://127.0.0.1:1/a", Secret: []byte("secret-a")}
	b := Receiver{ID: "ops", URL: "http://127.0.0.1:1/b", Secret: []byte("secret-b")}
	c := Receiver{URL: "http://127.0.0.1:1/c", Secret: []byte("secret-c")}
	body := `{"id":"evt_1"}`
	forA := WebhookArgs{Receiver: a.Key(), EventID: "evt_1", Body: body}
	forB := WebhookArgs{Receiver: b.Key(), EventID: "evt_1", Body: body}

	post := &recordingPoster{}
	results := map[[2]string]int{}
	now := time.Unix(1_700_000_000, 0)
	w := &webhookWorker{receivers: map[string]Receiver{}, post: post, now: func() time.Time { return now },
		result: func(label, result string) { results[[2]string{label, result}]++ }}
	for _, r := range []Receiver{b, c} { // the new configuration: A removed, B first
		w.receivers[r.Key()] = r
	}
	job := func(args WebhookArgs) *river.Job[WebhookArgs] {
		return &river.Job[WebhookArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: WebhookAttempts}, Args: args}
	}
	err := w.Work(context.Background(), job(forA))
	var cancel *rivertype.JobCancelError
	if !errors.As(err, &cancel) {
		t.Fatalf("A's delivery: %v, want the job cancelled", err)
	}
	if len(post.got) != 0 {
		t.Fatalf("A's delivery was sent to %s", post.got[0].URL)
	}
	if results[[2]string{a.Key(), DeliveryDropped}] != 1 {
		t.Errorf("results %v, want A's delivery counted as dropped under its key", results)
	}
	if err := w.Work(context.Background(), job(forB)); err != nil {
		t.Fatal(err)
	}
	if len(post.got) != 1 || post.got[0].URL != b.URL ||
		webhook.Verify(b.Secret, []byte(body), post.got[0].Header[webhook.SignatureHeader], now) != nil {
		t.Fatalf("B's delivery: %+v", post.got)
	}
	if results[[2]string{"ops", DeliveryDelivered}] != 1 {
		t.Errorf("results %v, want B's delivery counted under its id", results)
	}
	// A job of the earlier release named the receiver by position only: it
	// has no key and is dropped, not sent to whoever is at that position.
	legacy := job(WebhookArgs{EventID: "evt_2", Body: body})
	if err := w.Work(context.Background(), legacy); !errors.As(err, &cancel) || len(post.got) != 1 {
		t.Errorf("a positional job: %v, %d sent", err, len(post.got))
	}
}

// TestReceiverKey: the identity is the id and URL together, and the URL is
// not in it.
func TestReceiverKey(t *testing.T) {
	u := "https://hooks.example/p?token=SECRET"
	keys := map[string]bool{}
	for _, r := range []Receiver{{URL: u}, {ID: "x", URL: u}, {ID: "y", URL: u}, {ID: "x", URL: u + "2"}} {
		k := r.Key()
		if keys[k] || len(k) != 28 || k != (Receiver{ID: r.ID, URL: r.URL, Secret: []byte("other")}).Key() {
			t.Errorf("key %q of %+v: repeated, malformed or secret-dependent", k, r)
		}
		keys[k] = true
	}
	if r := (Receiver{URL: u}); r.Label() != r.Key() || (Receiver{ID: "x", URL: u}).Label() != "x" {
		t.Error("label: the id, else the key")
	}
}
