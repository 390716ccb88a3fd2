package target

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/capture"
)

// noDNS is a resolver that answers nothing and sends nothing: its "server"
// cannot be dialled, so a lookup fails the way an unresolvable name does,
// without a packet leaving the machine.
var noDNS = &net.Resolver{
	PreferGo: true,
	Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no resolver in tests")
	},
}

// TestFetchErrorClasses: one loopback case per class of capture.FetchError,
// and "" whenever a response arrived or the fetch timed out.
func TestFetchErrorClasses(t *testing.T) {
	ok := newServer(t, http.HandlerFunc(answer402))
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close() // nothing listens there any more
	badCert := httptest.NewTLSServer(http.HandlerFunc(answer402))
	t.Cleanup(badCert.Close)
	big := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Big", strings.Repeat("h", 40<<10))
		w.WriteHeader(402)
	}))
	handler := func(h http.HandlerFunc) string { return newServer(t, h).URL }

	tests := []struct {
		name    string
		client  *Client
		req     Request
		wantOut capture.Outcome
		want    capture.FetchError
	}{
		{"a response", privateClient(), Request{URL: ok.URL}, capture.OK, ""},
		{"a timeout", shortClient(), Request{URL: handler(func(w http.ResponseWriter, r *http.Request) { stall(r) })}, capture.Timeout, ""},
		{"over the cap is a response", privateClient(), Request{URL: handler(func(w http.ResponseWriter, r *http.Request) { writeN(w, capture.BodyCapBytes+1) })}, capture.OverCap, ""},
		{"the guard refuses loopback", New(Options{Timeout: testTimeout}), Request{URL: ok.URL}, capture.Failed, capture.AddressRefused},
		{"a name that does not resolve", New(Options{AllowPrivate: true, Timeout: testTimeout, resolver: noDNS}), Request{URL: "http://payability-test.invalid/paid"}, capture.Failed, capture.DNSFailed},
		{"a closed port", privateClient(), Request{URL: closedURL}, capture.Failed, capture.ConnectRefused},
		{"https to a plain-HTTP target", privateClient(), Request{URL: strings.Replace(ok.URL, "http://", "https://", 1)}, capture.Failed, capture.TLSFailed},
		{"a certificate nobody vouches for", privateClient(), Request{URL: badCert.URL}, capture.Failed, capture.TLSFailed},
		{"reset before a response", privateClient(), Request{URL: handler(func(w http.ResponseWriter, r *http.Request) { reset(t, w, "") })}, capture.Failed, capture.Reset},
		{"closed before a response", privateClient(), Request{URL: handler(func(w http.ResponseWriter, r *http.Request) { hangUp(t, w, "") })}, capture.Failed, capture.Reset},
		{"closed mid-body", privateClient(), Request{URL: handler(func(w http.ResponseWriter, r *http.Request) {
			hangUp(t, w, "HTTP/1.1 402 Payment Required\r\nContent-Length: 100\r\n\r\npartial")
		})}, capture.Failed, capture.Reset},
		{"a garbage status line", privateClient(), Request{URL: handler(func(w http.ResponseWriter, r *http.Request) {
			hangUp(t, w, "NOT-HTTP garbage\r\n\r\n")
		})}, capture.Failed, capture.ProtocolError},
		{"headers over the cap", privateClient(), Request{URL: big.URL}, capture.Failed, capture.ProtocolError},
		{"a request this client will not send", privateClient(), Request{Method: http.MethodDelete, URL: ok.URL}, capture.Failed, capture.ProtocolError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, via := range []string{"client", "session"} {
				var got capture.Capture
				if via == "client" {
					got = tt.client.Do(context.Background(), tt.req)
				} else {
					s := tt.client.Session()
					got = s.Do(context.Background(), tt.req)
					s.Close()
				}
				if got.Outcome != tt.wantOut || got.Error != tt.want {
					t.Errorf("%s: capture = %v %q, want %v %q", via, got.Outcome, got.Error, tt.wantOut, tt.want)
				}
			}
		})
	}
}

// The classification reads types, not messages: an error of no known kind is
// a protocol error, and a wrapped guard refusal is still the guard's.
func TestFetchErrorOfWrappedErrors(t *testing.T) {
	if got := fetchError(errors.New("something else")); got != capture.ProtocolError {
		t.Errorf("unknown error = %q", got)
	}
	if got := fetchError(&net.OpError{Op: "dial", Err: errGuard}); got != capture.AddressRefused {
		t.Errorf("wrapped guard refusal = %q", got)
	}
}
