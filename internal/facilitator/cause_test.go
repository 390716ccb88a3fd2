package facilitator_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/facilitator"
	"github.com/exchangerebel/payability/internal/gate"
)

// A facilitator that cannot be reached is named with the call and why,
// from a closed set, never with its URL.
func TestSupportedTransportNamesTheCause(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://user:secret@" + ln.Addr().String() + "/x402"
	ln.Close()
	c, err := facilitator.NewClient(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = facilitator.Discover(context.Background(), c, gate.Mainnet)
	if want := "facilitator supported: transport (GET /supported: refused)"; err == nil || err.Error() != want {
		t.Errorf("Discover = %v, want %q", err, want)
	}
	if err != nil && strings.Contains(err.Error(), "secret") {
		t.Errorf("the error echoes the URL: %v", err)
	}
}
