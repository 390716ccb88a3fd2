package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/ops"
)

// fullWriter fails every write, as stdout redirected to /dev/full does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// shortWriter accepts one byte of each write and reports no error.
type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return min(len(p), 1), nil }

// Every command exits 1 when its output cannot be written.
func TestOutputWriteFailureExits1(t *testing.T) {
	populated := &fakeFetcher{get: []capture.Capture{fleetCapture("pv-0000000001")}, probes: closedProbes()}
	for _, args := range [][]string{
		{"criteria"}, {"criteria", "rail-probe"}, {"corpus", "verify"}, {"version"}, {"--version"},
		{"help"}, {"check", "-h"}, {"help", "memo"}, {"verify", "-h"},
		{"check", goldenURL}, {"check", "--json", goldenURL}, {"memo", goldenURL}, {"probe", "--json", goldenURL},
	} {
		for _, w := range []io.Writer{fullWriter{}, shortWriter{}} {
			var errb bytes.Buffer
			e := Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: w, Stderr: &errb,
				NewFetcher: func(bool) ops.Fetcher { return populated }, Now: func() time.Time { return fixedEnd }}
			if code := e.Run(context.Background(), args); code != ExitInternal {
				t.Errorf("%v to %T: exit %d, want %d", args, w, code, ExitInternal)
			}
			if !strings.Contains(errb.String(), "writing the output failed") {
				t.Errorf("%v to %T: stderr %q does not say the output failed", args, w, errb.String())
			}
		}
	}
}

func TestHelpOfAnUnknownCommandIsUsage(t *testing.T) {
	for _, args := range [][]string{{"nosuch"}, {"help", "nosuch"}} {
		out, stderr, code := runCLI(t, &fakeFetcher{}, false, nil, args...)
		if code != exitUsage || out != "" || !strings.Contains(stderr, `unknown command "nosuch"`) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, stderr)
		}
	}
}

func TestExpectIsCaseInsensitive(t *testing.T) {
	f := &fakeFetcher{get: []capture.Capture{fleetCapture("pv-0000000001")}}
	for _, st := range []string{"POPULATED", "populated", "Populated"} {
		if _, stderr, code := runCLI(t, f, false, nil, "check", "--expect", st, goldenURL); code != ExitOK {
			t.Errorf("--expect %s: exit %d (%s)", st, code, stderr)
		}
	}
	if _, stderr, code := runCLI(t, f, false, nil, "check", "--expect", "not-a-402", goldenURL); code != ExitUnexpected ||
		!strings.Contains(stderr, "expected NOT-A-402, got POPULATED") {
		t.Errorf("--expect not-a-402: exit %d, stderr %q", code, stderr)
	}
	f2 := &fakeFetcher{get: []capture.Capture{fleetCapture("pv-0000000001"), fleetCapture("pv-0000000002")}}
	if _, stderr, code := runCLI(t, f2, false, nil, "memo", "--expect", "bound", goldenURL); code != ExitOK {
		t.Errorf("memo --expect bound: exit %d (%s)", code, stderr)
	}
}

// An op's help names only its own flags, in the flag list and in the notes.
func TestOpHelpNamesOnlyItsOwnFlags(t *testing.T) {
	for op, foreign := range map[string]string{"check": "--expect-closed", "memo": "--expect-closed", "probe": "--expect "} {
		out, _, _ := runCLI(t, &fakeFetcher{}, false, nil, op, "-h")
		if strings.Contains(out, foreign) {
			t.Errorf("%s -h names %s:\n%s", op, foreign, out)
		}
	}
}

func TestVersion(t *testing.T) {
	saved := readBuildInfo
	t.Cleanup(func() { readBuildInfo = saved })
	readBuildInfo = func() buildinfo.Info {
		return buildinfo.FromBuildInfo(&debug.BuildInfo{GoVersion: "go1.26.8",
			Main: debug.Module{Path: "github.com/exchangerebel/payability", Version: "v0.1.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-11-29T12:00:00Z"},
				{Key: "vcs.modified", Value: "true"}}})
	}
	want := "payability 0.1.0\nmodule     github.com/exchangerebel/payability v0.1.0\nrevision   0123abcd (modified)\ntime       2026-11-29T12:00:00Z\ngo         go1.26.8\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, stderr, code := runCLI(t, &fakeFetcher{}, false, nil, args...)
		if code != ExitOK || stderr != "" || out != want {
			t.Errorf("%v: exit %d, stderr %q, out:\n%s", args, code, stderr, out)
		}
	}
	readBuildInfo = func() buildinfo.Info { return buildinfo.FromBuildInfo(&debug.BuildInfo{}) }
	out, _, _ := runCLI(t, &fakeFetcher{}, false, nil, "version")
	if !strings.Contains(out, "revision   unknown") || !strings.Contains(out, "go         unknown") {
		t.Errorf("a build without VCS stamps:\n%s", out)
	}
	usage, _, _ := runCLI(t, &fakeFetcher{}, false, nil, "help")
	if !regexp.MustCompile(`(?m)^  version +\S`).MatchString(usage) {
		t.Errorf("the usage does not list version:\n%s", usage)
	}
}

// Every closed-set fetch error reaches the JSON factors of check, memo and
// probe (state unchanged, null when none) and the text's why line.
func TestFetchErrorIsSurfaced(t *testing.T) {
	words := map[capture.FetchError]string{
		capture.AddressRefused: "--allow-private", capture.DNSFailed: "DNS lookup failed",
		capture.ConnectRefused: "connection refused", capture.TLSFailed: "TLS handshake failed",
		capture.Reset: "connection reset", capture.ProtocolError: "not a valid HTTP response",
	}
	for fe, word := range words {
		failed := capture.Capture{Outcome: capture.Failed, Error: fe}
		good := fleetCapture("pv-0000000001")

		out, _, _ := runCLI(t, &fakeFetcher{get: []capture.Capture{failed}}, false, nil, "check", "--json", goldenURL)
		var chk struct {
			State   string
			Factors map[string]any
		}
		if err := json.Unmarshal([]byte(out), &chk); err != nil {
			t.Fatal(err)
		}
		if chk.State != "NOT-A-402" || chk.Factors["reason"] != "fetch_failed" || chk.Factors["fetch_error"] != string(fe) {
			t.Errorf("%s: check state %s, factors %v", fe, chk.State, chk.Factors)
		}
		text, _, _ := runCLI(t, &fakeFetcher{get: []capture.Capture{failed}}, false, nil, "check", goldenURL)
		if !strings.Contains(text, "\nwhy: fetch failed: ") || !strings.Contains(text, word) {
			t.Errorf("%s: check text lacks the why line naming %q:\n%s", fe, word, text)
		}
		if !regexp.MustCompile(`(?m)^fetch_error +` + string(fe) + `$`).MatchString(text) {
			t.Errorf("%s: check text lacks the fetch_error row", fe)
		}

		out, _, _ = runCLI(t, &fakeFetcher{get: []capture.Capture{good, failed}}, false, nil, "memo", "--json", goldenURL)
		var memo struct {
			State   string
			Factors struct{ Fetch1, Fetch2 map[string]any }
		}
		if err := json.Unmarshal([]byte(out), &memo); err != nil {
			t.Fatal(err)
		}
		if memo.State != "NOT-A-402" || memo.Factors.Fetch1["fetch_error"] != nil || memo.Factors.Fetch2["fetch_error"] != string(fe) {
			t.Errorf("%s: memo %s fetch1 %v fetch2 %v", fe, memo.State, memo.Factors.Fetch1, memo.Factors.Fetch2)
		}
		if _, ok := memo.Factors.Fetch1["fetch_error"]; !ok {
			t.Errorf("%s: memo fetch1 has no fetch_error key (null when none)", fe)
		}
		text, _, _ = runCLI(t, &fakeFetcher{get: []capture.Capture{good, failed}}, false, nil, "memo", goldenURL)
		if !strings.Contains(text, "why: fetch 2 fetch failed: ") || !strings.Contains(text, word) {
			t.Errorf("%s: memo text:\n%s", fe, text)
		}

		out, _, _ = runCLI(t, &fakeFetcher{probes: []capture.Capture{failed}}, false, nil, "probe", "--json", goldenURL)
		var probe struct {
			Outcome string
			Probes  []map[string]any
		}
		if err := json.Unmarshal([]byte(out), &probe); err != nil {
			t.Fatal(err)
		}
		if probe.Outcome != "NOT-PROBED" || len(probe.Probes) != 7 || probe.Probes[0]["fetch_error"] != string(fe) || probe.Probes[1]["fetch_error"] != nil {
			t.Errorf("%s: probe %s %v", fe, probe.Outcome, probe.Probes)
		}
		text, _, _ = runCLI(t, &fakeFetcher{probes: []capture.Capture{failed}}, false, nil, "probe", goldenURL)
		if !strings.Contains(text, "why: baseline GET failed: ") || !strings.Contains(text, word) {
			t.Errorf("%s: probe text:\n%s", fe, text)
		}
	}
	// None: null in JSON.
	out, _, _ := runCLI(t, &fakeFetcher{get: []capture.Capture{fleetCapture("pv-0000000001")}}, false, nil, "check", "--json", goldenURL)
	if !strings.Contains(out, `"fetch_error": null`) {
		t.Errorf("a fetch that got a response has no null fetch_error:\n%s", out)
	}
}

// Why lines name the failing factors; passing verdicts have none.
func TestWhyLines(t *testing.T) {
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	hdr := `{"x402Version":2,"resource":{"url":"` + goldenURL + `"},"accepts":[{"amount":"10000","payTo":"Wallet111","extra":{"memo":"pv-0000000001"}}]}`
	headerOnly := capture.Capture{Outcome: capture.OK, Status: 402, Body: []byte(`{}`), Header: capture.Header{"Payment-Required": {enc(hdr)}}}
	noTokenNoMemo := capture.Capture{Outcome: capture.OK, Status: 402, Header: headerOnly.Header,
		Body: []byte(`{"accepts":[{"amount":"10000","payTo":"Wallet111","resource":"` + goldenURL + `","extra":{}}]}`)}
	tests := []struct {
		name string
		args []string
		f    *fakeFetcher
		why  string // "" means no why line
		note bool
	}{
		{"populated", []string{"check"}, &fakeFetcher{get: []capture.Capture{fleetCapture("pv-0000000001")}}, "", false},
		{"token and memo absent", []string{"check"}, &fakeFetcher{get: []capture.Capture{noTokenNoMemo}}, "why: token account absent, memo absent, header and body memo not equal", false},
		{"header-only v2", []string{"check"}, &fakeFetcher{get: []capture.Capture{headerOnly}}, "why: recipient absent, token account absent, memo absent, amount absent, resource absent", true},
		{"status 200", []string{"check"}, &fakeFetcher{get: []capture.Capture{{Outcome: capture.OK, Status: 200}}}, "why: status 200, not 402", false},
		{"no header", []string{"check"}, &fakeFetcher{get: []capture.Capture{{Outcome: capture.OK, Status: 402, Body: []byte(`{}`)}}}, "why: PAYMENT-REQUIRED header absent", false},
		{"bound", []string{"memo"}, &fakeFetcher{get: []capture.Capture{fleetCapture("pv-0000000001"), fleetCapture("pv-0000000002")}}, "", false},
		{"reused", []string{"memo"}, &fakeFetcher{get: []capture.Capture{fleetCapture("pv-0000000001")}}, "why: the same body memo in both fetches", false},
		{"memo header-only v2", []string{"memo"}, &fakeFetcher{get: []capture.Capture{headerOnly}}, "why: body memo absent in both fetches", true},
		{"probe closed", []string{"probe"}, &fakeFetcher{probes: closedProbes()}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, _ := runCLI(t, tt.f, false, nil, append(tt.args, goldenURL)...)
			lines := strings.Split(out, "\n")
			got := ""
			if len(lines) > 1 && strings.HasPrefix(lines[1], "why: ") {
				got = lines[1]
			}
			if got != tt.why {
				t.Errorf("why line %q, want %q", got, tt.why)
			}
			if hasNote := strings.Contains(out, "header-only x402 v2") && strings.Contains(out, "payability lint URL"); hasNote != tt.note {
				t.Errorf("header-only note printed %v, want %v:\n%s", hasNote, tt.note, out)
			}
		})
	}
}

// The memo text prints the memo op's honesty statement, not the check op's
// honesty line (which speaks of POPULATED).
func TestMemoPrintsItsOwnHonestyLine(t *testing.T) {
	out, _, _ := runCLI(t, &fakeFetcher{get: []capture.Capture{fleetCapture("pv-0000000001"), fleetCapture("pv-0000000002")}}, false, nil, "memo", goldenURL)
	if strings.Contains(out, "POPULATED verdict") {
		t.Errorf("memo prints the check op's honesty line:\n%s", out)
	}
	if !strings.Contains(out, memoBoundary()) || memoBoundary() == "" {
		t.Errorf("memo does not print the memo op's statement:\n%s", out)
	}
}
