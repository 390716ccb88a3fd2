package server

import (
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/exchangerebel/payability/internal/report"
)

// Verification is the answer of POST /verify: whether a pasted report (or
// pre-check answer) carries a valid signature by one of this server's keys.
// Kid is set only when verified (a kid that did not verify came from the
// pasted bytes and is never repeated); Reason is a closed code of report's
// Err values (malformed, no_signature, bad_alg, unknown_kid, bad_signature)
// when not verified.
type Verification struct {
	Verified bool    `json:"verified"`
	Kid      *string `json:"kid"`
	// Key is "current" or "retired" when verified.
	Key    *string `json:"key"`
	Reason *string `json:"reason"`
}

// Closed request-error codes of /verify and the page's forms.
const (
	errCrossSite = "cross_site_refused"
)

// verifyDoc checks doc against this server's key set. Nothing of doc is kept.
func (s *Server) verifyDoc(doc []byte) Verification {
	kid, err := report.Verify(doc, s.cfg.KeySet)
	if err != nil {
		code := "malformed"
		var re *report.Error
		if errors.As(err, &re) {
			code = re.Code()
		}
		return Verification{Reason: &code}
	}
	key := "current"
	if kid != s.cfg.KeySet.Current.Kid {
		key = "retired"
	}
	return Verification{Verified: true, Kid: &kid, Key: &key}
}

// isJSON reports whether the request says its body is JSON.
func isJSON(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// readCapped reads a request body under the published cap; ok is false when
// an answer has been written.
func (s *Server) readCapped(w http.ResponseWriter, r *http.Request, route string) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(RequestBodyCap)+1))
	if err != nil {
		s.count(route, "bad_request")
		writeJSON(w, http.StatusBadRequest, problem{errBodyMalformed, "The request body could not be read."})
		return nil, false
	}
	if len(body) > RequestBodyCap {
		s.count(route, "too_large")
		writeJSON(w, http.StatusRequestEntityTooLarge, problem{errBodyOverCap,
			"The request body is over the cap of 262,144 bytes."})
		return nil, false
	}
	return body, true
}

// handleVerify is POST /verify (at the root and under each service root):
// free, the body is the signed JSON, the answer a Verification. The body is
// read into memory, verified and dropped: never stored, logged or counted
// beyond the closed outcome.
func (s *Server) handleVerify(route string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !isJSON(r) {
			s.count(route, "unsupported_media_type")
			writeJSON(w, http.StatusUnsupportedMediaType, problem{errContentType,
				"The request body must be the report JSON, sent with Content-Type: application/json."})
			return
		}
		body, ok := s.readCapped(w, r, route)
		if !ok {
			return
		}
		v := s.verifyDoc(body)
		outcome := "verified"
		if !v.Verified {
			outcome = "not_verified"
		}
		s.count(route, outcome)
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, http.StatusOK, v)
	}
}
