package cli

import (
	"fmt"
	"strings"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/verdict"
)

// This file says, in words, why a verdict is not the passing one: one "why:"
// line naming the failing factors, from the report's factors only (never a
// fetched value), and a note when a v2 header carries what the body lacks.

// fetchErrorWords names a closed-set fetch error for people.
func fetchErrorWords(e *capture.FetchError) string {
	if e == nil {
		return ""
	}
	switch *e {
	case capture.AddressRefused:
		return "address refused by the address guard (a loopback or private target needs --allow-private)"
	case capture.DNSFailed:
		return "DNS lookup failed"
	case capture.ConnectRefused:
		return "connection refused"
	case capture.TLSFailed:
		return "TLS handshake failed"
	case capture.Reset:
		return "connection reset before a whole response arrived"
	case capture.ProtocolError:
		return "not a valid HTTP response"
	}
	return string(*e)
}

// fetchWords says why a fetch was not a 402 within the cap.
func fetchWords(reason string, status *int, fe *capture.FetchError) string {
	switch reason {
	case verdict.ReasonFetchFailed:
		if w := fetchErrorWords(fe); w != "" {
			return "fetch failed: " + w
		}
		return "fetch failed"
	case verdict.ReasonTimeout:
		return "no complete response within 5,000 ms"
	case verdict.ReasonStatusNot402:
		if status != nil {
			return fmt.Sprintf("status %d, not 402", *status)
		}
		return "status not 402"
	case verdict.ReasonBodyOverCap:
		return "body over the 65,536-byte cap"
	}
	return reason
}

func isF(b *bool) bool { return b != nil && !*b }

// equalityWords names a header-to-body equality that failed.
func equalityWords(field string, eq *bool) string {
	if isF(eq) {
		return "header and body " + field + " not equal"
	}
	return ""
}

// headerOnlyNote is printed when the body leg carries none of the graded
// fields while a decodable PAYMENT-REQUIRED header carries some.
const headerOnlyNote = "note: this endpoint speaks header-only x402 v2: the PAYMENT-REQUIRED header carries the fields and the body carries none; payability/v1 grades the body leg, so it does not grade this challenge as populated. 'payability lint URL' reads both legs."

// whyLines returns the why line (and the header-only note) of a report; nil
// for a passing verdict (POPULATED, BOUND, a closed probe).
func whyLines(rep ops.Report) []string {
	var reasons []string
	note := false
	add := func(s string) {
		if s != "" {
			reasons = append(reasons, s)
		}
	}
	switch r := rep.(type) {
	case ops.CheckReport:
		f := r.Factors
		switch r.State {
		case verdict.Populated:
			return nil
		case verdict.NotA402:
			reason := ""
			if f.Reason != nil {
				reason = *f.Reason
			}
			add(fetchWords(reason, f.Status, r.FetchError))
		case verdict.ResourceMismatch:
			add("resource differs from the called URL")
		case verdict.HeaderMissing:
			if isF(f.HeaderPresent) {
				add("PAYMENT-REQUIRED header absent")
			} else {
				add("PAYMENT-REQUIRED header not base64/JSON decodable")
			}
		default: // AMOUNTS-ONLY, UNCONFIGURED
			bodyEmpty := isF(f.RecipientPresent) && isF(f.TokenAccountPresent) && isF(f.MemoPresent) &&
				isF(f.AmountsPresent) && isF(f.ResourcePresent)
			headerCarries := isF(f.HeaderBodyMemoEqual) || isF(f.HeaderBodyAmountEqual) || isF(f.HeaderBodyPayToEqual)
			note = bodyEmpty && headerCarries && f.HeaderDecodable != nil && *f.HeaderDecodable
			if isF(f.BodyParseable) {
				add("body not parseable as JSON")
			}
			if isF(f.RecipientPresent) {
				add("recipient absent")
			}
			if isF(f.TokenAccountPresent) {
				add("token account absent")
			}
			if isF(f.MemoPresent) {
				add("memo absent")
			}
			if r.State == verdict.Unconfigured {
				switch {
				case isF(f.AmountsPresent):
					add("amount absent")
				case isF(f.AmountsConsistent):
					add("amounts inconsistent")
				}
				if isF(f.ResourcePresent) {
					add("resource absent")
				}
				if !note { // the note says the header carries them
					add(equalityWords("memo", f.HeaderBodyMemoEqual))
					add(equalityWords("amount", f.HeaderBodyAmountEqual))
					add(equalityWords("payTo", f.HeaderBodyPayToEqual))
				}
			}
		}
	case ops.MemoReport:
		f := r.Factors
		fetches := [2]verdict.FetchFactors{f.Fetch1, f.Fetch2}
		switch r.State {
		case verdict.Bound:
			return nil
		case verdict.NotA402:
			for i, ff := range fetches {
				switch {
				case !ff.FetchOK:
					w := "fetch failed"
					if fe := fetchErrorWords(r.FetchErrors[i]); fe != "" {
						w += ": " + fe
					} else if r.FetchErrors[i] == nil {
						w = "fetch failed or timed out"
					}
					add(fmt.Sprintf("fetch %d %s", i+1, w))
				case ff.Is402 != nil && !*ff.Is402:
					add(fmt.Sprintf("fetch %d %s", i+1, fetchWords(verdict.ReasonStatusNot402, ff.Status, nil)))
				case ff.BodyOverCap != nil && *ff.BodyOverCap:
					add(fmt.Sprintf("fetch %d %s", i+1, fetchWords(verdict.ReasonBodyOverCap, nil, nil)))
				}
			}
		case verdict.MemoAbsent:
			b1, b2 := isF(f.Fetch1.BodyMemoPresent), isF(f.Fetch2.BodyMemoPresent)
			switch {
			case b1 && b2:
				add("body memo absent in both fetches")
				h1 := f.Fetch1.HeaderMemoPresent != nil && *f.Fetch1.HeaderMemoPresent
				h2 := f.Fetch2.HeaderMemoPresent != nil && *f.Fetch2.HeaderMemoPresent
				note = h1 || h2
			case b1:
				add("body memo absent in fetch 1")
			case b2:
				add("body memo absent in fetch 2")
			}
		case verdict.LegMismatch:
			for i, eq := range [2]*bool{f.MemoEqualityFetch1, f.MemoEqualityFetch2} {
				if isF(eq) {
					add(fmt.Sprintf("header and body memo not equal in fetch %d", i+1))
				}
			}
			if len(reasons) == 0 {
				add("memo binding not established")
			}
		case verdict.MemoReused:
			add("the same body memo in both fetches")
		}
	case ops.ProbeReport:
		if r.Closed() {
			return nil
		}
		if r.ProbeResult.Outcome == verdict.NotProbed {
			w := "baseline GET failed"
			if len(r.Probes) > 0 {
				switch r.Probes[0].Outcome {
				case capture.Timeout:
					w += ": no complete response within 5,000 ms"
				case capture.OverCap:
					w += ": body over the 65,536-byte cap"
				default:
					if fe := fetchErrorWords(r.FetchErrors[0]); fe != "" {
						w += ": " + fe
					}
				}
			}
			add(w)
			break
		}
		for _, g := range []struct {
			name string
			g    verdict.RailGrade
		}{{"direct rail", r.Grades.Direct}, {"facilitator rail", r.Grades.Facilitator}} {
			if g.g.Grade != verdict.PresentFailClosed {
				add(fmt.Sprintf("%s %s (%s)", g.name, g.g.Grade, strings.ReplaceAll(g.g.Reason, "_", " ")))
			}
		}
		if len(r.Exposures) > 0 {
			add("exposures observed: " + strings.Join(r.Exposures, ", "))
		}
	}
	if len(reasons) == 0 {
		return nil
	}
	out := []string{"why: " + strings.Join(reasons, ", ")}
	if note {
		out = append(out, headerOnlyNote)
	}
	return out
}
