package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// DefaultValetURL is the base URL of the Bank of Canada Valet API.
const DefaultValetURL = "https://www.bankofcanada.ca/valet"

// Series is the Valet series of the CAD valuation: CAD per USD, daily.
const Series = "FXUSDCAD"

// Limits of one Valet request.
const (
	// ValetTimeout bounds one request, connection to last byte.
	ValetTimeout = 20 * time.Second
	// ValetBodyCap bounds an answer: a year of daily observations is about
	// 15 kB; anything near the cap is not the answer we asked for.
	ValetBodyCap = 1 << 20
	// maxRate bounds a credible CAD-per-USD rate; a value above it means
	// the source answered some other series.
	maxRate = 100
)

// Valet is the client of the Bank of Canada Valet API for the FXUSDCAD
// series: a GET of /observations/FXUSDCAD/json with a date range.
type Valet struct {
	// BaseURL is the API's base (DefaultValetURL); the series path is
	// appended to it.
	BaseURL string
	// Client sends the requests; nil means a client with ValetTimeout that
	// follows no redirect.
	Client *http.Client
}

// Errors of the Valet client, closed-form: never a byte of the answer.
var (
	ErrRatesUnavailable = errors.New("ledger: the rate source did not answer")
	ErrRatesMalformed   = errors.New("ledger: the rate source's answer is malformed")
)

// valetAnswer is the part of a Valet answer we read.
type valetAnswer struct {
	Observations []map[string]json.RawMessage `json:"observations"`
}

// Observations returns the FXUSDCAD rates published for the dates from..to
// (YYYY-MM-DD, both included), oldest first.
func (v Valet) Observations(ctx context.Context, from, to string) ([]store.Rate, error) {
	if !store.IsDate(from) || !store.IsDate(to) || from > to {
		return nil, errors.New("ledger: invalid date range")
	}
	base := v.BaseURL
	if base == "" {
		base = DefaultValetURL
	}
	u, err := url.Parse(strings.TrimRight(base, "/") + "/observations/" + Series + "/json")
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errors.New("ledger: the rates URL is not an http(s) URL")
	}
	q := url.Values{}
	q.Set("start_date", from)
	q.Set("end_date", to)
	u.RawQuery = q.Encode()

	client := v.Client
	if client == nil {
		client = &http.Client{
			Timeout: ValetTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	}
	ctx, cancel := context.WithTimeout(ctx, ValetTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, ErrRatesUnavailable
	}
	req.Header.Set("Accept", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return nil, ErrRatesUnavailable
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w (HTTP status %d)", ErrRatesUnavailable, res.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, ValetBodyCap+1))
	if err != nil {
		return nil, ErrRatesUnavailable
	}
	if len(body) > ValetBodyCap {
		return nil, fmt.Errorf("%w (over %d bytes)", ErrRatesMalformed, ValetBodyCap)
	}
	return parseObservations(body, from, to)
}

// parseObservations reads the FXUSDCAD rates of a Valet answer: each
// observation {"d": "YYYY-MM-DD", "FXUSDCAD": {"v": "1.3643"}}. A date
// without a value is skipped (nothing published); a malformed date or value
// refuses the whole answer, so nothing doubtful is ever cached.
func parseObservations(body []byte, from, to string) ([]store.Rate, error) {
	var a valetAnswer
	if err := json.Unmarshal(body, &a); err != nil || a.Observations == nil {
		return nil, ErrRatesMalformed
	}
	limit, _ := ParseDecimal(fmt.Sprint(maxRate))
	seen := map[string]bool{}
	var rs []store.Rate
	for _, o := range a.Observations {
		var day string
		if err := json.Unmarshal(o["d"], &day); err != nil || !store.IsDate(day) {
			return nil, ErrRatesMalformed
		}
		raw, ok := o[Series]
		if !ok || string(raw) == "null" {
			continue
		}
		var obs struct {
			V *string `json:"v"`
		}
		if err := json.Unmarshal(raw, &obs); err != nil {
			return nil, ErrRatesMalformed
		}
		if obs.V == nil || *obs.V == "" {
			continue
		}
		d, err := ParseDecimal(*obs.V)
		if err != nil || d.Sign() <= 0 || d.Cmp(limit) >= 0 || seen[day] {
			return nil, ErrRatesMalformed
		}
		seen[day] = true
		if day < from || day > to {
			continue // not asked for: ignored, not trusted
		}
		rs = append(rs, store.Rate{Date: day, Value: *obs.V})
	}
	sortRates(rs)
	return rs, nil
}
