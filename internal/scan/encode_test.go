package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/ops"
)

// referenceEncode is the record encoding before the pooled buffer (issue
// 23): a fresh encoder and buffer per record, then the header's texts cut.
func referenceEncode(s *Scanner, r Record) []byte {
	r.URL = RedactURL(r.URL)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil
	}
	line := b.Bytes()
	if r.Report != nil {
		for _, cut := range s.cuts {
			if i := bytes.Index(line, cut); i >= 0 {
				line = append(line[:i], line[i+len(cut):]...)
			}
		}
	}
	return line
}

// The pooled encoder writes the same bytes as before, for every op and
// record kind, with and without the header's cuts, and a reused buffer
// carries nothing over from the record before.
func TestPooledEncodeIsByteIdentical(t *testing.T) {
	ctx := context.Background()
	url := "https://user:pw@seller.example/api/paid?a=1&b=<2>"
	mem := newMemFetcher()
	html := memFetcher{capture.Capture{Outcome: capture.OK, Status: 402, Header: capture.Header{"Content-Type": {"text/html"}}, Body: []byte("<html>&amp;</html>")}}
	timeout := memFetcher{capture.Capture{Outcome: capture.Timeout}}
	var reports []ops.Report
	for _, f := range []memFetcher{mem, html, timeout} {
		r := ops.Runner{Fetcher: f}
		for _, op := range []string{ops.OpCheck, ops.OpMemo, ops.OpProbe, ops.OpLint} {
			rep, err := r.Run(ctx, op, "https://seller.example/api/paid?a=1&b=<2>")
			if err != nil {
				t.Fatal(err)
			}
			reports = append(reports, rep)
		}
	}
	urls := []string{url, "", "http://a/\u2028\"x\"", "http://a/\\b\x00\x1f\x7f", "http://a/\xff\xfe", "https://é.example/ü?q=<&>", "http://a/\t\n\r\b\f", "http://a/\u2029"}
	var recs []Record
	for i, u := range urls {
		recs = append(recs,
			Record{Line: i, URL: u, Refused: &Refusal{Rule: "url_userinfo"}},
			Record{Line: -i, URL: u, Error: &Problem{Code: CodeCancelled}},
			Record{Line: 1 << 40, URL: u, Refused: &Refusal{Rule: "a\"b\\c\u2028"}},
		)
		for j, rep := range reports {
			recs = append(recs, Record{Line: 100*i + j, URL: u, Report: rep})
		}
	}
	for _, op := range []string{ops.OpCheck, ops.OpMemo, ops.OpProbe, ops.OpLint} {
		for _, full := range []bool{false, true} {
			s := New(Options{Op: op, Full: full})
			for round := 0; round < 2; round++ { // the second round reuses pooled buffers
				for _, r := range recs {
					want := referenceEncode(s, r)
					lb := s.encode(r)
					if !bytes.Equal(lb.Bytes(), want) {
						t.Errorf("op %s full %v line %d:\n got %s\nwant %s", op, full, r.Line, lb.Bytes(), want)
					}
					lb.release()
				}
			}
		}
	}
}
