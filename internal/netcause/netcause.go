// Package netcause names, from a closed set, why a call to a back end the
// operator configured (the Solana RPC node, the facilitator) got no usable
// answer, so an operator reading "transport" learns what to fix. It reads
// the error's type only: never its text, which may carry the URL (and with
// it an API key) or bytes of an answer.
package netcause

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strconv"
	"syscall"
)

// The causes. A non-2xx answer is "status N" (Status).
const (
	DNS      = "dns"      // the name did not resolve
	Refused  = "refused"  // nothing listens there (connection refused)
	Timeout  = "timeout"  // no answer in time
	TLS      = "tls"      // the TLS handshake or the certificate failed
	Reset    = "reset"    // the connection was reset or closed mid-answer
	Canceled = "canceled" // our side gave up (shutdown, a client gone)
	Failed   = "failed"   // none of the above (unreachable network, bad answer framing)
)

// Of returns the cause of err (nil: "").
func Of(err error) string {
	var (
		dnsErr  *net.DNSError
		netErr  net.Error
		recErr  tls.RecordHeaderError
		alert   tls.AlertError
		verify  *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
	)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return Timeout
	case errors.Is(err, context.Canceled):
		return Canceled
	case errors.As(err, &dnsErr):
		return DNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return Refused
	case errors.As(err, &recErr), errors.As(err, &alert), errors.As(err, &verify),
		errors.As(err, &unknown), errors.As(err, &host), errors.As(err, &invalid):
		return TLS
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return Reset
	}
	return Failed
}

// Status is the cause of an answer with a status the call does not take.
func Status(code int) string { return "status " + strconv.Itoa(code) }
