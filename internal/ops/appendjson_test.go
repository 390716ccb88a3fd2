package ops

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/verdict"
)

// referenceCheckJSON is the report's JSON as encoding/json writes it by
// reflection: what CheckReport.MarshalJSON returned before AppendJSON.
func referenceCheckJSON(t testing.TB, r CheckReport) []byte {
	type factors struct {
		verdict.CheckFactors
		FetchError *capture.FetchError `json:"fetch_error"`
	}
	b, err := json.Marshal(struct {
		Envelope
		State   verdict.State `json:"state"`
		Factors factors       `json:"factors"`
	}{r.Envelope, r.State, factors{r.Factors, r.FetchError}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var awkward = []string{"", "plain", "https://s.example/a?x=1&y=<2>", "q\"b\\", "\x00\n\t\x1f", "é—日", "\u2028", "\xff\xfe", "☃ <&>"}

// randomCheckReport draws every factor from nil/true/false and every string
// from awkward texts.
func randomCheckReport(rng *rand.Rand) CheckReport {
	str := func() string { return awkward[rng.IntN(len(awkward))] }
	b := func() *bool {
		switch rng.IntN(3) {
		case 0:
			return nil
		case 1:
			v := true
			return &v
		}
		v := false
		return &v
	}
	r := CheckReport{Envelope: NewEnvelope(OpCheck, str(), testTime(rng), str())}
	if rng.IntN(2) == 0 {
		r.Envelope.DisclosureSentence, r.Envelope.Corpus.ID = str(), str()
	}
	r.State = verdict.State(str())
	f := &r.Factors
	for _, p := range []**bool{&f.HeaderPresent, &f.HeaderDecodable, &f.BodyParseable, &f.RecipientPresent, &f.TokenAccountPresent,
		&f.MemoPresent, &f.AmountsPresent, &f.AmountsConsistent, &f.ResourcePresent, &f.ResourceEqualsCalledURL,
		&f.HeaderBodyMemoEqual, &f.HeaderBodyAmountEqual, &f.HeaderBodyPayToEqual, &f.DescriptionOverlong} {
		*p = b()
	}
	if rng.IntN(2) == 0 {
		s := str()
		f.Reason = &s
	}
	if rng.IntN(2) == 0 {
		n := []int{0, 200, 402, -1, 1 << 40}[rng.IntN(5)]
		f.Status = &n
	}
	if rng.IntN(2) == 0 {
		fe := capture.FetchError([]string{"dns_failed", "connect_refused", str()}[rng.IntN(3)])
		r.FetchError = &fe
	}
	return r
}

func TestCheckReportAppendJSONMatchesEncoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 1))
	for i := 0; i < 5000; i++ {
		r := randomCheckReport(rng)
		got, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if want := referenceCheckJSON(t, r); !bytes.Equal(got, want) {
			t.Fatalf("report %d:\n got %s\nwant %s", i, got, want)
		}
		// Appended after other bytes, the same.
		if got := r.AppendJSON([]byte("x")); !bytes.Equal(got[1:], referenceCheckJSON(t, r)) {
			t.Fatalf("report %d appended: %s", i, got)
		}
	}
}

func FuzzCheckReportAppendJSON(f *testing.F) {
	f.Add("https://s.example/a?x=1&y=<2>", "POPULATED", "reason \u2028", uint32(0x1234), int64(402))
	f.Fuzz(func(t *testing.T, url, state, reason string, bits uint32, status int64) {
		rng := rand.New(rand.NewPCG(uint64(bits), uint64(status)))
		r := randomCheckReport(rng)
		r.URL, r.State, r.VerdictLine = url, verdict.State(state), reason
		if bits&1 == 1 {
			r.Factors.Reason = &reason
		}
		got, _ := r.MarshalJSON()
		if want := referenceCheckJSON(t, r); !bytes.Equal(got, want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}

func testTime(rng *rand.Rand) time.Time {
	return time.Unix(1_700_000_000+rng.Int64N(1_000_000_000), rng.Int64N(1e9))
}
