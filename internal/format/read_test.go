package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/preflight"
	"github.com/exchangerebel/payability/internal/verdict"
)

func marshal(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadReportsRoundTrip: what the ops print as JSON reads back into the
// same results the adapters make from the reports themselves.
func TestReadReportsRoundTrip(t *testing.T) {
	unconf := populated()
	unconf.MemoPresent = bp(false)
	check := checkReport(verdict.Unconfigured, unconf)
	memo := memoReport(verdict.MemoReused, nil, bound())
	probe := probeReport(func(r *verdict.ProbeResult) { r.Exposures = []string{"METHOD-UNPAID-2XX:GET"} })
	pre := ops.NewPreflightReport(testURL, testEnd, preflight.Result{Decision: preflight.Stop,
		Reasons: []preflight.Reason{preflight.ReasonFailOpen, preflight.ReasonChallengeStatic}})
	preRes, err := FromPreflightReport(pre)
	if err != nil {
		t.Fatal(err)
	}
	var indented bytes.Buffer
	enc := json.NewEncoder(&indented)
	enc.SetIndent("", "  ")
	_ = enc.Encode(check)
	_ = enc.Encode(check)
	tests := []struct {
		name  string
		input string
		op    string
		want  []Result
	}{
		{"indented check reports", indented.String(), "check", []Result{FromReport(check), FromReport(check)}},
		{"memo", marshal(t, memo), "memo", []Result{FromReport(memo)}},
		{"probe", marshal(t, probe), "probe", []Result{FromReport(probe)}},
		{"preflight", marshal(t, pre), "preflight", []Result{preRes}},
		{"scan records, in line order", `{"line":3,"url":"https://y.example/","error":{"code":"cancelled"}}` + "\n" +
			`{"line":1,"url":"` + testURL + `","report":` + marshal(t, check) + "}\n" +
			`{"line":2,"url":"ftp://x.example/","refused":{"rule":"scheme_not_http"}}` + "\n",
			"check", []Result{FromReport(check), Refused("check", "ftp://x.example/", "scheme_not_http"), Problem("check", "https://y.example/", "cancelled")}},
		{"a scan's header, then its records", `{"header":{"op":"check","omitted":["disclosure_sentence"],"disclosure_sentence":"…"}}` + "\n" +
			`{"line":2,"url":"ftp://x.example/","refused":{"rule":"scheme_not_http"}}` + "\n" +
			`{"line":1,"url":"` + testURL + `","report":` + marshal(t, check) + "}\n",
			"check", []Result{FromReport(check), Refused("check", "ftp://x.example/", "scheme_not_http")}},
		{"nothing", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, got, err := ReadReports(strings.NewReader(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			if op != tt.op || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("op %q results\n%+v\nwant %q\n%+v", op, got, tt.op, tt.want)
			}
		})
	}
}

// TestReadReportsRefuses: anything but payability's JSON is refused with a
// closed-form error naming the value, never echoing it.
func TestReadReportsRefuses(t *testing.T) {
	check := marshal(t, checkReport(verdict.Populated, populated()))
	memo := marshal(t, memoReport(verdict.Bound, nil, bound()))
	canary := "CANARY-7f3e"
	tests := []struct {
		name, input string
		value       int
		reason      string
	}{
		{"not JSON", canary, 1, ReadNotJSON},
		{"second not JSON", check + "\n{" + canary, 2, ReadNotJSON},
		{"an array", `["` + canary + `"]`, 1, ReadNotAReport},
		{"unknown op", `{"op":"` + canary + `"}`, 1, ReadNotAReport},
		{"a header naming no op of payability", `{"header":{"op":"` + canary + `"}}`, 1, ReadNotAReport},
		{"unknown state", strings.Replace(check, `"state":"POPULATED"`, `"state":"`+canary+`"`, 1), 1, ReadUnknownState},
		{"unknown grade", strings.Replace(marshal(t, probeReport(func(*verdict.ProbeResult) {})), `"grade":"PRESENT-FAIL-CLOSED"`, `"grade":"`+canary+`"`, 1), 1, ReadUnknownState},
		{"unknown reason", strings.Replace(marshal(t, ops.NewPreflightReport(testURL, testEnd, preflight.Result{Decision: preflight.Hold, Reasons: []preflight.Reason{preflight.ReasonMethodOpen}})), `"method_open"`, `"`+canary+`"`, 1), 1, ReadUnknownState},
		{"mixed ops", check + "\n" + memo, 2, ReadMixedOps},
		{"a record without a verdict", `{"line":1,"url":"x"}`, 1, ReadNotAReport},
		{"over the cap", `{"op":"check","pad":"` + strings.Repeat("a", MaxReadValue) + `"}`, 1, ReadTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, res, err := ReadReports(strings.NewReader(tt.input))
			var re *ReadError
			if !errors.As(err, &re) || re.Value != tt.value || re.Reason != tt.reason {
				t.Fatalf("error %v, want value %d: %s", err, tt.value, tt.reason)
			}
			if res != nil || strings.Contains(err.Error(), canary) {
				t.Errorf("results %v, error %q", res, err)
			}
		})
	}
}

// TestReadReportsBoundsOneValue: a value larger than the cap fails without
// the whole of it being read.
func TestReadReportsBoundsOneValue(t *testing.T) {
	r := &countingReader{r: strings.NewReader(`{"op":"check","pad":"` + strings.Repeat("a", 8*MaxReadValue) + `"}`)}
	_, _, err := ReadReports(r)
	var re *ReadError
	if !errors.As(err, &re) || re.Reason != ReadTooLarge {
		t.Fatalf("error %v", err)
	}
	if r.n > MaxReadValue+2*readSlack {
		t.Errorf("read %d bytes of an over-cap value", r.n)
	}
}

type countingReader struct {
	r interface{ Read([]byte) (int, error) }
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// FuzzReadReports: any input either reads or is refused with a ReadError;
// what reads renders in every format.
func FuzzReadReports(f *testing.F) {
	f.Add(marshal(f, checkReport(verdict.Populated, populated())))
	f.Add(marshal(f, memoReport(verdict.MemoAbsent, strp("memo_absent_one_fetch"), bound())))
	f.Add(marshal(f, probeReport(func(*verdict.ProbeResult) {})))
	f.Add(`{"line":2,"url":"ftp://x.example/","refused":{"rule":"scheme_not_http"}}`)
	f.Add(marshal(f, ops.NewPreflightReport(testURL, testEnd, preflight.Result{Decision: preflight.Go})))
	f.Fuzz(func(t *testing.T, in string) {
		op, results, err := ReadReports(strings.NewReader(in))
		if err != nil {
			var re *ReadError
			if !errors.As(err, &re) {
				t.Fatalf("not a ReadError: %v", err)
			}
			return
		}
		run := Run{Op: op, Rules: RulesOf(op), Results: results}
		var b bytes.Buffer
		for _, render := range []func() error{
			func() error { return GitHub(&b, results) },
			func() error { return SARIF(&b, run) },
			func() error { return JUnit(&b, run, FailOnWarn) },
			func() error { return Markdown(&b, run) },
			func() error { return Lines(&b, results) },
		} {
			if err := render(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// A lint --mcp report is many results; render refuses it rather than read
// it as one clean endpoint.
func TestReadReportsRefusesAnMCPReport(t *testing.T) {
	_, _, err := ReadReports(strings.NewReader(`{"op":"lint","mode":"mcp","url":"https://mcp.example/mcp","tools":[]}`))
	var re *ReadError
	if !errors.As(err, &re) || re.Reason != ReadNotOneEndpoint {
		t.Errorf("got %v", err)
	}
}
