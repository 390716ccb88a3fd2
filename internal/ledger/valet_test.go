package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/exchangerebel/payability/internal/store"
)

// fakeValet is a Bank of Canada Valet API on loopback: it publishes the
// FXUSDCAD rates the test gives it, when the test says they are published.
type fakeValet struct {
	srv      *httptest.Server
	mu       sync.Mutex
	rates    map[string]string // date -> value, published so far
	requests atomic.Int64
	status   int // answer this status instead, when set
	lastPath string
	lastQ    string
}

func newFakeValet(t *testing.T) *fakeValet {
	f := &fakeValet{rates: map[string]string{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// URL is the base URL to configure, as --rates-url.
func (f *fakeValet) URL() string { return f.srv.URL + "/valet" }

func (f *fakeValet) publish(rates map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for d, v := range rates {
		f.rates[d] = v
	}
}

func (f *fakeValet) fail(status int) {
	f.mu.Lock()
	f.status = status
	f.mu.Unlock()
}

func (f *fakeValet) serve(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastPath, f.lastQ = r.URL.Path, r.URL.RawQuery
	if f.status != 0 {
		w.WriteHeader(f.status)
		return
	}
	if r.URL.Path != "/valet/observations/FXUSDCAD/json" {
		http.NotFound(w, r)
		return
	}
	from, to := r.URL.Query().Get("start_date"), r.URL.Query().Get("end_date")
	var days []string
	for d := range f.rates {
		if d >= from && d <= to {
			days = append(days, d)
		}
	}
	sort.Strings(days)
	type obs struct {
		D        string            `json:"d"`
		FXUSDCAD map[string]string `json:"FXUSDCAD"`
	}
	answer := struct {
		Terms        map[string]string `json:"terms"`
		SeriesDetail map[string]any    `json:"seriesDetail"`
		Observations []obs             `json:"observations"`
	}{
		Terms:        map[string]string{"url": "https://www.bankofcanada.ca/terms/"},
		SeriesDetail: map[string]any{"FXUSDCAD": map[string]any{"label": "USD/CAD", "description": "US dollar to Canadian dollar daily exchange rate"}},
		Observations: []obs{},
	}
	for _, d := range days {
		answer.Observations = append(answer.Observations, obs{D: d, FXUSDCAD: map[string]string{"v": f.rates[d]}})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(answer)
}

func TestValetAsksTheSeriesRangeAndReadsObservations(t *testing.T) {
	f := newFakeValet(t)
	f.publish(map[string]string{"2026-03-27": "1.3810", "2026-03-30": "1.3795", "2026-03-31": "1.3802", "2026-04-01": "1.3777"})
	got, err := Valet{BaseURL: f.URL()}.Observations(context.Background(), "2026-03-28", "2026-03-31")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Rate{{Date: "2026-03-30", Value: "1.3795"}, {Date: "2026-03-31", Value: "1.3802"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if f.lastPath != "/valet/observations/FXUSDCAD/json" || f.lastQ != "end_date=2026-03-31&start_date=2026-03-28" {
		t.Errorf("asked %s?%s", f.lastPath, f.lastQ)
	}
	// A trailing slash on the base URL is the same base.
	if _, err := (Valet{BaseURL: f.URL() + "/"}).Observations(context.Background(), "2026-03-28", "2026-03-31"); err != nil {
		t.Errorf("base URL with a trailing slash: %v", err)
	}
}

func TestParseObservations(t *testing.T) {
	for name, tc := range map[string]struct {
		body string
		want []store.Rate
		err  error
	}{
		"values, out of order": {
			body: `{"observations":[{"d":"2026-03-31","FXUSDCAD":{"v":"1.3802"}},{"d":"2026-03-30","FXUSDCAD":{"v":"1.3795"}}]}`,
			want: []store.Rate{{Date: "2026-03-30", Value: "1.3795"}, {Date: "2026-03-31", Value: "1.3802"}},
		},
		"a date without a value is skipped": {
			body: `{"observations":[{"d":"2026-03-30","FXUSDCAD":{"v":""}},{"d":"2026-03-31"},{"d":"2026-04-01","FXUSDCAD":null}]}`,
		},
		"dates outside the range are ignored": {
			body: `{"observations":[{"d":"2026-01-02","FXUSDCAD":{"v":"1.4"}},{"d":"2026-03-30","FXUSDCAD":{"v":"1.3795"}}]}`,
			want: []store.Rate{{Date: "2026-03-30", Value: "1.3795"}},
		},
		"no observations at all":    {body: `{"observations":[]}`},
		"not JSON":                  {body: `<html>maintenance</html>`, err: ErrRatesMalformed},
		"no observations member":    {body: `{"message":"Series not found"}`, err: ErrRatesMalformed},
		"a float, not text":         {body: `{"observations":[{"d":"2026-03-30","FXUSDCAD":{"v":1.3795}}]}`, err: ErrRatesMalformed},
		"an exponent":               {body: `{"observations":[{"d":"2026-03-30","FXUSDCAD":{"v":"1.3e0"}}]}`, err: ErrRatesMalformed},
		"a negative rate":           {body: `{"observations":[{"d":"2026-03-30","FXUSDCAD":{"v":"-1.3"}}]}`, err: ErrRatesMalformed},
		"a zero rate":               {body: `{"observations":[{"d":"2026-03-30","FXUSDCAD":{"v":"0.0000"}}]}`, err: ErrRatesMalformed},
		"an incredible rate":        {body: `{"observations":[{"d":"2026-03-30","FXUSDCAD":{"v":"136.43"}}]}`, err: ErrRatesMalformed},
		"a bad date":                {body: `{"observations":[{"d":"30/03/2026","FXUSDCAD":{"v":"1.3"}}]}`, err: ErrRatesMalformed},
		"one date twice":            {body: `{"observations":[{"d":"2026-03-30","FXUSDCAD":{"v":"1.3"}},{"d":"2026-03-30","FXUSDCAD":{"v":"1.4"}}]}`, err: ErrRatesMalformed},
		"a value with a space":      {body: `{"observations":[{"d":"2026-03-30","FXUSDCAD":{"v":" 1.3"}}]}`, err: ErrRatesMalformed},
		"a value object not object": {body: `{"observations":[{"d":"2026-03-30","FXUSDCAD":"1.3"}]}`, err: ErrRatesMalformed},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := parseObservations([]byte(tc.body), "2026-03-01", "2026-04-30")
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestValetFailuresAreClosedForm(t *testing.T) {
	ctx := context.Background()
	const secret = "SECRET-BODY-BYTES"
	mux := http.NewServeMux()
	mux.HandleFunc("/down/observations/FXUSDCAD/json", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(secret))
	})
	mux.HandleFunc("/moved/observations/FXUSDCAD/json", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/huge/observations/FXUSDCAD/json", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"observations":[` + strings.Repeat(" ", ValetBodyCap) + `]}`))
	})
	mux.HandleFunc("/garbage/observations/FXUSDCAD/json", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(secret))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for path, want := range map[string]error{
		"/down":    ErrRatesUnavailable,
		"/moved":   ErrRatesUnavailable,
		"/huge":    ErrRatesMalformed,
		"/garbage": ErrRatesMalformed,
	} {
		_, err := Valet{BaseURL: srv.URL + path}.Observations(ctx, "2026-03-01", "2026-03-31")
		if !errors.Is(err, want) || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: %v, want %v without the body", path, err, want)
		}
	}
	for name, base := range map[string]string{"not http": "ftp://127.0.0.1/valet", "no host": "https:///valet", "garbage": "::"} {
		if _, err := (Valet{BaseURL: base}).Observations(ctx, "2026-03-01", "2026-03-31"); err == nil {
			t.Errorf("%s base URL accepted", name)
		}
	}
	if _, err := (Valet{BaseURL: srv.URL}).Observations(ctx, "2026-03-31", "2026-03-01"); err == nil {
		t.Errorf("a reversed range was asked for")
	}
}
