package solana

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A transport failure says what was being reached (the RPC node) and why,
// from a closed set, and never the RPC URL (it may carry a key).
func TestTransportErrorNamesTheCause(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/?api-key=secret"
	ln.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("maintenance window, key secret"))
	}))
	defer down.Close()
	for url, want := range map[string]string{
		closed:                        "solana: transport (the RPC node: refused)",
		down.URL + "/?api-key=secret": "solana: transport (the RPC node: status 503)",
	} {
		c, err := New(url, nil, "confirmed")
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.GetTransaction(context.Background(), unknownSig)
		if err == nil || err.Error() != want {
			t.Errorf("GetTransaction = %v, want %q", err, want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("the error echoes the URL or the answer: %v", err)
		}
	}
}
