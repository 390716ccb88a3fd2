package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// An IPv6 client holds a whole /64 (SLAAC, privacy addresses): rotating the
// low 64 bits must not give it a fresh allowance per address, neither in the
// per-address limiter nor in the free tier's address key.
func TestFreeTierCountsAnIPv6ClientByItsSlash64(t *testing.T) {
	h := newHarness(t, ServeAll)
	h.s.cfg.ClientLimiter = NewLimiter(1, 2, h.clock.Now)
	statuses := []int{}
	for _, addr := range []string{"[2001:db8:1:2::1]:40000", "[2001:db8:1:2:ffff::2]:40001", "[2001:db8:1:2:abcd:1:2:3]:40002"} {
		req := httptest.NewRequest(http.MethodPost, "/toll/payability/precheck", strings.NewReader(`{"url":"https://seller.example/api"}`))
		req.RemoteAddr = addr
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.s.ServeHTTP(rec, req)
		statuses = append(statuses, rec.Code)
		h.clock.Add(10 * time.Millisecond)
	}
	// One allowed; the second is the same client within 5,000 ms (free tier);
	// the third is over the limiter's burst of 2.
	if statuses[0] != http.StatusOK || statuses[1] != http.StatusPaymentRequired || statuses[2] != http.StatusTooManyRequests {
		t.Errorf("statuses %v, want [200 402 429]", statuses)
	}
}

func TestClientKey(t *testing.T) {
	for addr, want := range map[string]string{
		"192.0.2.7:5555":              "192.0.2.7",
		"[::ffff:192.0.2.7]:5555":     "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:5555": "2001:db8:1:2::/64",
		"[fe80::1%eth0]:5555":         "fe80::/64",
		"not an address":              "not an address",
	} {
		r := &http.Request{RemoteAddr: addr}
		if got := clientAddr(r); got != want {
			t.Errorf("clientAddr(%q) = %q, want %q", addr, got, want)
		}
	}
}
