package monitor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// The endpoint set lives in the store (store.EndpointCatalog): the
// configuration file seeds it (Seed), the API and the catalog imports manage
// it. A Monitor without a Catalog reads its configuration's endpoints only.

// Limits of the endpoints API.
const (
	// MaxRequestBytes bounds a request body of the API: 1 MiB (a file may
	// be larger, to seed a directory).
	MaxRequestBytes = 1 << 20
	// MaxBatch bounds the endpoints of one POST.
	MaxBatch = 1000
)

// Statuses a list can be filtered by besides the four words: Retired, the
// endpoints no source lists any more (kept with their history, not checked).
const Retired Status = "retired"

// Query selects a page of endpoints.
type Query struct {
	Status  Status // "" every active endpoint
	Network string
	Source  string
	Offset  int
	Limit   int // 0: every one
}

// ErrBadQuery: a filter that selects nothing by construction (an unknown
// status word).
var ErrBadQuery = errors.New("monitor: bad query")

// statusStates are the states of the status ops that give each status (see
// stateStatus); the status ops' states do not overlap, so a state names its
// op.
var statusStates = map[Status][]string{
	Operational: {PreflightGo, LintConforms},
	Degraded:    {PreflightHold, LintWarnings},
	Critical:    {PreflightStop, LintErrors},
}

func (m *Monitor) maxEndpoints() int {
	if m.MaxEndpoints > 0 {
		return m.MaxEndpoints
	}
	return store.MaxEndpoints
}

// Record is e as the store keeps it.
func Record(e Endpoint) store.EndpointRecord {
	return store.EndpointRecord{ID: e.ID, URL: e.URL, Method: e.Method, Body: e.Body, Ops: slices.Clone(e.Ops), Every: e.Every,
		Network: e.Network, MaxAmount: e.MaxAmount, StatusOp: StatusSource(e)}
}

// endpointOf is the stored r with its alert policy, which the store does
// not keep: the file's for an endpoint the file lists, else the file's
// global one.
func (m *Monitor) endpointOf(r store.EndpointRecord) Endpoint {
	e := Endpoint{ID: r.ID, URL: r.URL, Method: r.Method, Body: r.Body, Ops: r.Ops, Every: r.Every, Network: r.Network,
		MaxAmount: r.MaxAmount, Sources: r.Sources, Retired: r.Retired}
	if m.Config != nil {
		e.Alert = m.Config.Alert
		if ce, ok := m.Config.Endpoint(r.ID); ok && slices.Contains(r.Sources, store.SourceConfig) {
			e.Alert = ce.Alert
		}
	}
	return e
}

// Endpoint returns the endpoint id, retired or not.
func (m *Monitor) Endpoint(ctx context.Context, id string) (Endpoint, bool, error) {
	if m.Catalog == nil {
		e, ok := m.Config.Endpoint(id)
		return e, ok, nil
	}
	r, ok, err := m.Catalog.Endpoint(ctx, id)
	if err != nil || !ok {
		return Endpoint{}, false, err
	}
	return m.endpointOf(r), true, nil
}

// Endpoints returns the page of endpoints q selects, ordered by id, and how
// many it selects in all. With a Catalog the filters run in the database on
// the summary kept as observations land.
func (m *Monitor) Endpoints(ctx context.Context, q Query) ([]Endpoint, int, error) {
	if m.Catalog == nil {
		return m.configEndpoints(ctx, q)
	}
	sq := store.EndpointQuery{Network: q.Network, Source: q.Source, Offset: q.Offset, Limit: q.Limit, Now: m.now()}
	switch q.Status {
	case "":
	case Retired:
		sq.Retired = true
	case Unknown:
		for _, st := range []Status{Operational, Degraded, Critical} {
			sq.States = append(sq.States, statusStates[st]...)
		}
		sq.NotStates = true
	default:
		states, ok := statusStates[q.Status]
		if !ok {
			return nil, 0, ErrBadQuery
		}
		sq.States = states
	}
	rs, total, err := m.Catalog.ListEndpoints(ctx, sq)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Endpoint, 0, len(rs))
	for _, r := range rs {
		out = append(out, m.endpointOf(r))
	}
	return out, total, nil
}

// configEndpoints filters the configuration's endpoints (no store: a
// configuration of at most MaxEndpoints).
func (m *Monitor) configEndpoints(ctx context.Context, q Query) ([]Endpoint, int, error) {
	if q.Status == Retired || q.Source != "" && q.Source != store.SourceConfig {
		return nil, 0, nil
	}
	var sel []Endpoint
	for _, e := range m.Config.Endpoints {
		if q.Status != "" || (q.Network != "" && e.Network != q.Network) {
			latest, err := m.Latest(ctx, e)
			if err != nil {
				return nil, 0, err
			}
			if q.Status != "" && m.StatusNow(e, latest) != q.Status {
				continue
			}
			if q.Network != "" && e.Network != q.Network && latest["preflight"].Network != q.Network {
				continue
			}
		}
		sel = append(sel, e)
	}
	start := min(q.Offset, len(sel))
	end := len(sel)
	if q.Limit > 0 {
		end = min(start+q.Limit, len(sel))
	}
	return sel[start:end], len(sel), nil
}

// Active returns every endpoint that is checked (not retired).
func (m *Monitor) Active(ctx context.Context) ([]Endpoint, error) {
	eps, _, err := m.Endpoints(ctx, Query{})
	return eps, err
}

// LatestOf returns the newest observation of each op of each endpoint (by
// endpoint id, then op), in one read of the summary.
func (m *Monitor) LatestOf(ctx context.Context, eps []Endpoint) (map[string]map[string]store.Observation, error) {
	ids := make([]string, 0, len(eps))
	for _, e := range eps {
		ids = append(ids, e.ID)
	}
	obs, err := m.History.LatestObservations(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]store.Observation{}
	for _, e := range eps {
		out[e.ID] = map[string]store.Observation{}
	}
	for _, o := range obs {
		if l, ok := out[o.Endpoint]; ok {
			l[o.Op] = o
		}
	}
	return out, nil
}

// Seed writes the configuration's endpoints into the store (listed by
// store.SourceConfig) and reseeds: an endpoint the file no longer lists
// loses that source, and is retired when no other source lists it (the
// API's endpoints are never touched; a catalog's stay while it lists them).
// The file's definition replaces the stored one of the ids it lists.
func (m *Monitor) Seed(ctx context.Context) error {
	if m.Catalog == nil {
		return nil
	}
	now := m.now()
	recs := make([]store.EndpointRecord, 0, len(m.Config.Endpoints))
	ids := make([]string, 0, len(m.Config.Endpoints))
	for _, e := range m.Config.Endpoints {
		recs = append(recs, Record(e))
		ids = append(ids, e.ID)
	}
	if err := m.Catalog.PutEndpoints(ctx, recs, store.PutEndpoints{Source: store.SourceConfig, Seen: now, Max: m.maxEndpoints()}); err != nil {
		return err
	}
	if err := m.Catalog.ReleaseSource(ctx, store.SourceConfig, ids); err != nil {
		return err
	}
	_, err := m.Retire(ctx)
	return err
}

// Retire retires the endpoints no source has listed for the configuration's
// RetireAfter.
func (m *Monitor) Retire(ctx context.Context) (int64, error) {
	if m.Catalog == nil {
		return 0, nil
	}
	now := m.now()
	grace := m.Config.RetireAfter
	if grace <= 0 {
		grace = DefaultRetireAfter
	}
	n, err := m.Catalog.RetireEndpoints(ctx, now.Add(-grace), now)
	if err == nil && n > 0 {
		m.log().Info("retire", "endpoints", n)
	}
	return n, err
}

// Add adds endpoints through the API (listed by store.SourceAPI); an id that
// exists refuses the whole batch (store.ErrEndpointExists), as does the
// store's limit (store.ErrTooManyEndpoints).
func (m *Monitor) Add(ctx context.Context, eps []Endpoint) error {
	if m.Catalog == nil {
		return ErrReadOnly
	}
	recs := make([]store.EndpointRecord, 0, len(eps))
	for _, e := range eps {
		recs = append(recs, Record(e))
	}
	return m.Catalog.PutEndpoints(ctx, recs, store.PutEndpoints{Source: store.SourceAPI, Seen: m.now(), Max: m.maxEndpoints(), Create: true})
}

// Update replaces an endpoint's definition (store.ErrNoEndpoint when none).
func (m *Monitor) Update(ctx context.Context, e Endpoint) error {
	if m.Catalog == nil {
		return ErrReadOnly
	}
	return m.Catalog.UpdateEndpoint(ctx, Record(e))
}

// Delete removes an endpoint (its history stays until the retention).
func (m *Monitor) Delete(ctx context.Context, id string) (bool, error) {
	if m.Catalog == nil {
		return false, ErrReadOnly
	}
	return m.Catalog.DeleteEndpoint(ctx, id)
}

// ErrReadOnly: a change of the endpoint set on a monitor without a store
// catalog.
var ErrReadOnly = errors.New("monitor: the endpoint set is read-only")

// The bodies of the API: one endpoint (the configuration's object), or a
// batch {"endpoints": [...]}; a change is the object without its id, every
// key optional.
var (
	batchSchema = &schema{keys: map[string]*schema{"endpoints": {elem: endpointSchema}}}
	patchSchema = objectOf(endpointKeys[1:])
)

// ParseEndpoints reads the body of a POST strictly, as the configuration's
// endpoints are read: unknown and repeated keys refused, at most MaxBatch
// endpoints, ids distinct, every value validated (URLs by the target policy).
func ParseEndpoints(data []byte) ([]Endpoint, error) {
	if len(data) > MaxRequestBytes {
		return nil, &ConfigError{Reason: fmt.Sprintf("body is over %d bytes", MaxRequestBytes)}
	}
	batch := IsBatch(data)
	sc := endpointSchema
	if batch {
		sc = batchSchema
	}
	pos, err := scanKeysOf(data, sc)
	if err != nil {
		return nil, err
	}
	v := validator{pos: pos, data: data}
	var raws []rawEndpoint
	prefix := func(i int) string { return "" }
	if batch {
		var b struct {
			Endpoints []rawEndpoint `json:"endpoints"`
		}
		if err := strictDecode(data, &b); err != nil {
			return nil, err
		}
		if len(b.Endpoints) == 0 {
			return nil, v.fail("endpoints", "at least one endpoint is required")
		}
		if len(b.Endpoints) > MaxBatch {
			return nil, v.fail("endpoints", fmt.Sprintf("at most %d endpoints", MaxBatch))
		}
		raws = b.Endpoints
		prefix = func(i int) string { return fmt.Sprintf("endpoints[%d]", i) }
	} else {
		var r rawEndpoint
		if err := strictDecode(data, &r); err != nil {
			return nil, err
		}
		raws = []rawEndpoint{r}
	}
	var out []Endpoint
	seen := map[string]bool{}
	for i, re := range raws {
		at := prefix(i)
		e, err := v.endpoint(at, re)
		if err != nil {
			return nil, topField(err)
		}
		if seen[e.ID] {
			return nil, v.fail(join(at, "id"), "repeats an earlier endpoint's id")
		}
		seen[e.ID] = true
		out = append(out, e)
	}
	return out, nil
}

// ParsePatch applies the body of a PATCH to e: the keys it has replace e's
// (body null removes the body), and the result is validated whole.
func ParsePatch(e Endpoint, data []byte) (Endpoint, error) {
	if len(data) > MaxRequestBytes {
		return e, &ConfigError{Reason: fmt.Sprintf("body is over %d bytes", MaxRequestBytes)}
	}
	pos, err := scanKeysOf(data, patchSchema)
	if err != nil {
		return e, err
	}
	re := rawEndpoint{ID: e.ID, URL: e.URL, Method: e.Method, Ops: slices.Clone(e.Ops), Every: FormatEvery(e.Every),
		Network: e.Network, MaxAmount: e.MaxAmount}
	if e.Method == "POST" && e.Body != "" {
		b := e.Body
		re.Body = &b
	}
	if err := strictDecode(data, &re); err != nil {
		return e, err
	}
	v := validator{pos: pos, data: data}
	next, err := v.endpoint("", re)
	if err != nil {
		return e, topField(err)
	}
	next.Sources, next.Retired = e.Sources, e.Retired
	return next, nil
}

// topField names a field of a single endpoint's body without the leading
// dot the validator's paths have there.
func topField(err error) error {
	var ce *ConfigError
	if errors.As(err, &ce) {
		ce.Field = strings.TrimPrefix(ce.Field, ".")
	}
	return err
}

// FormatEvery writes an interval as ParseDuration reads it.
func FormatEvery(d time.Duration) string { return d.String() }

func join(at, field string) string {
	if at == "" {
		return field
	}
	return at + "." + field
}

// IsBatch reports whether a POST body is a batch ({"endpoints": [...]}).
func IsBatch(data []byte) bool {
	trimmed := bytes.TrimSpace(data)
	return bytes.HasPrefix(trimmed, []byte("{")) && isBatch(trimmed)
}

// isBatch reports whether the object's keys include "endpoints".
func isBatch(data []byte) bool {
	var keys map[string]json.RawMessage
	if json.Unmarshal(data, &keys) != nil {
		return false
	}
	_, ok := keys["endpoints"]
	return ok
}

func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &ConfigError{Field: te.Field, Reason: "wrong type (want " + typeWord(te.Type.Kind().String()) + ")"}
		}
		return &ConfigError{Reason: "not a valid document"}
	}
	return nil
}
