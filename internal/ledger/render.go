package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/store"
)

// WriteStatus writes the tripwires for a terminal: per service its Day-0
// and each tripwire with its state, current value and threshold.
func WriteStatus(w io.Writer, s Status) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Tripwires at %s (stop and review when one fires)\n", s.At.Format(store.TimestampLayout))
	fmt.Fprintf(&b, "Day-0 (first outside paid settlement, house proofs never count): %s\n", day0Text(s.Day0))
	for _, svc := range s.Services {
		fmt.Fprintf(&b, "\n%s\n", svc.Service)
		fmt.Fprintf(&b, "  %-9s %s\n", "Day-0", day0Text(svc.Day0))
		for _, t := range svc.Tripwires {
			fmt.Fprintf(&b, "  %-9s %-10s %s\n", t.Name, stateText(t), tripText(t))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func day0Text(t *time.Time) string {
	if t == nil {
		return "not yet"
	}
	return t.UTC().Format(store.TimestampLayout)
}

func stateText(t Tripwire) string {
	switch {
	case t.Fired:
		return "FIRED"
	case !t.Armed:
		return "not armed"
	}
	return "ok"
}

func tripText(t Tripwire) string {
	switch t.Name {
	case TripCorpus:
		if t.Passing != nil && *t.Passing {
			return "the graders pass 100% of the pinned corpus; paid ops are served"
		}
		return "the graders do NOT pass 100% of the pinned corpus; paid ops are refused (503)"
	case TripRefunds:
		return measureText(t, "refund", func(m Measure) string { return m.Percent() })
	case TripFreeUse:
		return measureText(t, "free call", func(m Measure) string { return m.Multiple() })
	}
	return ""
}

// count writes n and the noun, plural unless n is 1.
func count[N ~int | ~int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func measureText(t Tripwire, what string, value func(Measure) string) string {
	c := t.Current
	s := fmt.Sprintf("last 30 days (%s..%s): %s / %s = %s; threshold %s",
		c.From, c.To, count(c.Count, what), count(c.Paid, "paid call"), value(*c), t.Threshold)
	if t.Name == TripRefunds {
		s += " in any 30-day window"
	}
	if !t.Armed {
		return s + "; counts from Day-0"
	}
	if w := t.Worst; w != nil {
		s += fmt.Sprintf("; worst window (%s..%s): %s", w.From, w.To, value(*w))
	}
	return s
}

// MarshalJSON prints at and day0 to the millisecond, fixed width; the fields
// keep their order.
func (s Status) MarshalJSON() ([]byte, error) {
	return marshalNoEscape(struct {
		At       string          `json:"at"`
		Day0     *string         `json:"day0"`
		Fired    bool            `json:"fired"`
		Services []ServiceStatus `json:"services"`
	}{stamp(s.At), stampOrNil(s.Day0), s.Fired, s.Services})
}

// MarshalJSON prints day0 to the millisecond, fixed width.
func (s ServiceStatus) MarshalJSON() ([]byte, error) {
	return marshalNoEscape(struct {
		Service   string     `json:"service"`
		Day0      *string    `json:"day0"`
		Tripwires []Tripwire `json:"tripwires"`
	}{s.Service, stampOrNil(s.Day0), s.Tripwires})
}

// marshalNoEscape is json.Marshal without HTML escaping ("> 5%" stays as is).
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func stampOrNil(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := stamp(*t)
	return &s
}

// stamp is a time in UTC to the millisecond, fixed width (store.TimestampLayout).
func stamp(t time.Time) string { return t.UTC().Format(store.TimestampLayout) }
