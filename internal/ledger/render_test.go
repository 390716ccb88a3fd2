package ledger

import (
	"strings"
	"testing"
	"time"
)

// TestStatusCountsReadAsEnglish: one refund of one paid call is "1 refund /
// 1 paid call", and a state as long as "not armed" keeps its column apart.
func TestStatusCountsReadAsEnglish(t *testing.T) {
	one := &Measure{From: "2026-06-01", To: "2026-06-30", Count: 1, Paid: 1}
	s := Status{At: time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC), Services: []ServiceStatus{{
		Service: "payability-verdict",
		Tripwires: []Tripwire{
			{Name: TripRefunds, Threshold: "> 5%", Armed: true, Current: one, Worst: one, Fired: true},
			{Name: TripFreeUse, Threshold: "> 10×", Current: one},
		},
	}}}
	var b strings.Builder
	if err := WriteStatus(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  refunds   FIRED      last 30 days (2026-06-01..2026-06-30): 1 refund / 1 paid call = ",
		"  free_use  not armed  last 30 days (2026-06-01..2026-06-30): 1 free call / 1 paid call = ",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in:\n%s", want, b.String())
		}
	}
}
