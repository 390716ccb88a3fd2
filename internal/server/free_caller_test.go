package server

import (
	"crypto/rand"
	"net/http"
	"testing"
)

// The caller of a free pre-check is free text chosen by the client, up to the
// body cap. Whatever it is, the allowance is counted (here on PostgreSQL,
// whose index rows are limited to about 2.7 kB), and the store's row for it
// stays small.
func TestFreeTierCountsAnyCaller(t *testing.T) {
	c := newCluster(t)
	n := c.start("A", nodeOptions{})
	caller := rand.Text()
	for len(caller) < 16000 {
		caller += rand.Text()
	}
	res, err := freeCall(n, caller)
	if err != nil {
		t.Fatal(err)
	}
	if res.status != http.StatusOK {
		t.Fatalf("a long caller: %d %s", res.status, res.body)
	}
	if res, _ := freeCall(n, caller); res.status != http.StatusPaymentRequired {
		t.Errorf("the same caller again at once: %d, want 402 (min interval)", res.status)
	}
	if got := c.count(`SELECT count(*) FROM free_use WHERE length(caller_key) > 200`); got != 0 {
		t.Errorf("%d free-tier rows hold a key over 200 characters", got)
	}
}
