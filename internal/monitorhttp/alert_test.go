package monitorhttp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/monitor"
	"github.com/exchangerebel/payability/internal/schedule"
	"github.com/exchangerebel/payability/internal/webhook"
)

// rawReceiver is a loopback chat webhook: it checks the signature headers
// and keeps the raw bodies.
type rawReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  []string
	invalid int
}

func newRawReceiver(t *testing.T, secret []byte) *rawReceiver {
	rc := &rawReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if webhook.Verify(secret, body, r.Header.Get(webhook.SignatureHeader), time.Now()) != nil || r.Header.Get(webhook.EventIDHeader) == "" {
			rc.invalid++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		rc.bodies = append(rc.bodies, string(body))
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *rawReceiver) wait(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		rc.mu.Lock()
		got := append([]string(nil), rc.bodies...)
		rc.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("received %d bodies, want %d", len(got), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAlertPolicyWithSlackAndDiscord: with 2 failures before an alert and
// 2 successes before a resolution, the flaps P F P F F P F P P page twice
// (at the second failure in a row, at the second success in a row), to a
// Slack and a Discord receiver, signed as the json ones are, and carrying
// no seller text.
func TestAlertPolicyWithSlackAndDiscord(t *testing.T) {
	secret := []byte("whsec-chat")
	slack, discord := newRawReceiver(t, secret), newRawReceiver(t, secret)
	s := newSeller(t)
	s.canary = "CANARY-alert-formats"
	h := newHarnessWith(t, endpointsConfig(time.Minute, monitor.Endpoint{ID: "s", URL: s.URL + "/paid", Ops: []string{"check"},
		Alert: monitor.AlertPolicy{FailuresBeforeAlert: 2, SuccessesBeforeResolve: 2}}),
		func(o *schedule.Options) {
			o.Receivers = []schedule.Receiver{
				{ID: "slack", URL: slack.URL + "/hook", Secret: secret, Format: webhook.FormatSlack},
				{ID: "discord", URL: discord.URL + "/hook", Secret: secret, Format: webhook.FormatDiscord},
			}
		})
	for _, c := range "PFPFFPFPP" {
		s.broken.Store(c == 'F')
		h.check("s", "check")
		h.advance(time.Minute)
	}
	sl, dc := slack.wait(t, 2), discord.wait(t, 2)
	h.stop()
	slack.mu.Lock()
	discord.mu.Lock()
	defer slack.mu.Unlock()
	defer discord.mu.Unlock()
	if len(slack.bodies) != 2 || len(discord.bodies) != 2 || slack.invalid+discord.invalid != 0 {
		t.Fatalf("slack %d, discord %d, invalid %d; want 2 and 2 valid", len(slack.bodies), len(discord.bodies), slack.invalid+discord.invalid)
	}
	var m1, m2 struct{ Text string }
	json.Unmarshal([]byte(sl[0]), &m1)
	json.Unmarshal([]byte(sl[1]), &m2)
	if m1.Text != "payability: endpoint s: check went from passing to failing (status_not_402)" ||
		m2.Text != "payability: endpoint s: check went from failing to passing" {
		t.Errorf("slack texts %q, %q", m1.Text, m2.Text)
	}
	var d struct {
		Content string           `json:"content"`
		Embeds  []map[string]any `json:"embeds"`
	}
	if err := json.Unmarshal([]byte(dc[0]), &d); err != nil || d.Content != m1.Text || len(d.Embeds) != 1 {
		t.Errorf("discord body %s", dc[0])
	}
	for _, b := range append(sl, dc...) {
		if strings.Contains(b, "CANARY") {
			t.Errorf("a chat payload carries a seller's text: %s", b)
		}
	}
}
