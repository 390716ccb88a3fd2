package netcause

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestOfEveryCause(t *testing.T) {
	wrap := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://key@rpc.example/?api-key=secret", Err: &net.OpError{Op: "dial", Net: "tcp", Err: err}}
	}
	for want, errs := range map[string][]error{
		"":       {nil},
		DNS:      {wrap(&net.DNSError{Err: "no such host", Name: "rpc.example", IsNotFound: true})},
		Refused:  {wrap(os.NewSyscallError("connect", syscall.ECONNREFUSED))},
		Timeout:  {context.DeadlineExceeded, wrap(&net.DNSError{Err: "i/o timeout", IsTimeout: true}), fmt.Errorf("x: %w", os.ErrDeadlineExceeded)},
		TLS:      {wrap(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), wrap(x509.UnknownAuthorityError{}), wrap(x509.HostnameError{Host: "h"}), wrap(tls.AlertError(40))},
		Reset:    {wrap(os.NewSyscallError("read", syscall.ECONNRESET)), wrap(os.NewSyscallError("write", syscall.EPIPE)), io.EOF, fmt.Errorf("x: %w", io.ErrUnexpectedEOF)},
		Canceled: {context.Canceled},
		Failed:   {errors.New("something else"), wrap(os.NewSyscallError("connect", syscall.ENETUNREACH))},
	} {
		for _, err := range errs {
			if got := Of(err); got != want {
				t.Errorf("Of(%v) = %q, want %q", err, got, want)
			}
		}
	}
	if got := Status(503); got != "status 503" {
		t.Errorf("Status(503) = %q", got)
	}
}

// Real failures on loopback: a closed port, a server that hangs up, a TLS
// server spoken to by a client that does not trust it.
func TestOfRealFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	_, err = client.Get("http://" + closed + "/")
	if got := Of(err); got != Refused {
		t.Errorf("closed port: %q (%v), want refused", got, err)
	}

	hangup := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _, _ := w.(http.Hijacker).Hijack()
		c.Close()
	}))
	defer hangup.Close()
	_, err = client.Get(hangup.URL)
	if got := Of(err); got != Reset {
		t.Errorf("server hangs up: %q (%v), want reset", got, err)
	}

	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake failure is the point
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	_, err = client.Get(tlsSrv.URL)
	if got := Of(err); got != TLS {
		t.Errorf("untrusted certificate: %q (%v), want tls", got, err)
	}
	if strings.Contains(Of(err), "127.0.0.1") {
		t.Errorf("the cause names the address")
	}
}
