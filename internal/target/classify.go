package target

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/exchangerebel/payability/internal/capture"
)

// classify tells a timeout (the deadline passed, in any phase) from any other
// failure, and names the other failure from the closed set of
// capture.FetchError. It reads only error types and numbers, never a message.
func classify(err error, a *attempt) (capture.Outcome, capture.FetchError) {
	if errors.Is(err, context.DeadlineExceeded) {
		return capture.Timeout, ""
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return capture.Timeout, ""
	}
	if a != nil && a.tlsFailed.Load() {
		// The handshake itself failed, whatever the error's type (some of
		// crypto/tls's have none: a version the client does not accept).
		return capture.Failed, capture.TLSFailed
	}
	return capture.Failed, fetchError(err)
}

func fetchError(err error) capture.FetchError {
	var (
		dnsErr     *net.DNSError
		recordErr  tls.RecordHeaderError
		alertErr   tls.AlertError
		certErr    *tls.CertificateVerificationError
		unknownCA  x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		invalidErr x509.CertificateInvalidError
		echErr     *tls.ECHRejectionError
	)
	switch {
	case errors.Is(err, errGuard):
		return capture.AddressRefused
	case errors.As(err, &dnsErr):
		return capture.DNSFailed
	case errors.As(err, &recordErr), errors.As(err, &alertErr), errors.As(err, &certErr),
		errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &invalidErr),
		errors.As(err, &echErr):
		return capture.TLSFailed
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.ENETUNREACH):
		return capture.ConnectRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return capture.Reset
	}
	return capture.ProtocolError
}
