package report

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/gowebpki/jcs"
)

// The two worked examples of RFC 8785 §3.2.2 (values) and §3.2.3 (member
// sorting by UTF-16 code units), written here from the RFC as facts.
const (
	rfcValuesIn = `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`
	rfcValuesOut = `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"` + "\u20ac" + `$\u000f\nA'B\"\\\\\"/"}`

	rfcSortingIn = `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`
	// Written with escapes: the expected bytes are the raw UTF-8 of each name.
	rfcSortingOut = "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"
)

func TestCanonicalRFC8785Vectors(t *testing.T) {
	t.Run("sorting example canonicalizes exactly", func(t *testing.T) {
		got, err := Canonical(json.RawMessage(rfcSortingIn))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != rfcSortingOut {
			t.Errorf("got  %s\nwant %s", got, rfcSortingOut)
		}
	})
	t.Run("values example: the engine matches the RFC", func(t *testing.T) {
		got, err := jcs.Transform([]byte(rfcValuesIn))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != rfcValuesOut {
			t.Errorf("got  %s\nwant %s", got, rfcValuesOut)
		}
	})
	t.Run("values example: refused for its fractional numbers", func(t *testing.T) {
		if _, err := Canonical(json.RawMessage(rfcValuesIn)); !errors.Is(err, ErrUnsafeNumber) {
			t.Errorf("got %v, want %v", err, ErrUnsafeNumber)
		}
	})
	t.Run("values example without numbers", func(t *testing.T) {
		in := `{"string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}`
		want := `{"literals":[null,true,false],"string":"` + "\u20ac" + `$\u000f\nA'B\"\\\\\"/"}`
		got, err := Canonical(json.RawMessage(in))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}

func TestCanonicalIsStable(t *testing.T) {
	want := `{"a":{"x":10,"y":"x"},"b":[1,2],"c":"10000"}`
	inputs := []string{
		`{"b":[1,2],"a":{"y":"x","x":10},"c":"10000"}`,
		`{ "c" : "10000", "a" : { "x" : 1e1, "y" : "x" }, "b" : [ 1.0, 2E0 ] }`,
		"{\n\t\"a\": {\"x\": 10.000, \"y\": \"\\u0078\"},\n\t\"c\": \"1\\u0030000\",\n\t\"b\": [0.1e1, 20e-1]\n}",
	}
	for _, in := range inputs {
		got, err := Canonical(json.RawMessage(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if string(got) != want {
			t.Errorf("%s:\ngot  %s\nwant %s", in, got, want)
		}
	}
	t.Run("Go values canonicalize like their JSON", func(t *testing.T) {
		type inner struct {
			Y string `json:"y"`
			X int    `json:"x"`
		}
		v := struct {
			C string `json:"c"`
			B []int  `json:"b"`
			A inner  `json:"a"`
		}{C: "10000", B: []int{1, 2}, A: inner{Y: "x", X: 10}}
		for _, v := range []any{v, map[string]any{"c": "10000", "b": []any{1, 2.0}, "a": map[string]any{"x": 10, "y": "x"}}} {
			got, err := Canonical(v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("got %s, want %s", got, want)
			}
		}
	})
	t.Run("HTML characters are not escaped", func(t *testing.T) {
		got, err := Canonical(map[string]string{"u": "https://a.example/?x=1&y=<2>"})
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"u":"https://a.example/?x=1&y=<2>"}`; string(got) != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
}

func TestCanonicalNumbers(t *testing.T) {
	accepted := map[string]string{
		`9007199254740991`:  `9007199254740991`,
		`-9007199254740991`: `-9007199254740991`,
		`0`:                 `0`,
		`-0`:                `0`,
		`1e3`:               `1000`,
		`1000.0`:            `1000`,
	}
	for in, want := range accepted {
		got, err := Canonical(json.RawMessage(`{"n":[` + in + `]}`))
		if err != nil {
			t.Errorf("%s: refused: %v", in, err)
			continue
		}
		if string(got) != `{"n":[`+want+`]}` {
			t.Errorf("%s: got %s", in, got)
		}
	}
	refused := []string{
		`9007199254740992`, // 2^53: the first integer that is not safe
		`-9007199254740992`,
		`9007199254740993`,
		`12345678901234567890`,
		`1e16`,
		`1e21`,
		`1e300`,
		`0.5`,
		`-1.5`,
		`1e-7`,
		`333333333.33333329`,
	}
	for _, in := range refused {
		for _, doc := range []string{in, `[` + in + `]`, `{"a":{"b":[1,` + in + `]}}`} {
			if _, err := Canonical(json.RawMessage(doc)); !errors.Is(err, ErrUnsafeNumber) {
				t.Errorf("%s: got %v, want %v", doc, err, ErrUnsafeNumber)
			}
		}
	}
	for _, v := range []any{uint64(math.MaxUint64), int64(1) << 53, 0.1, float32(2.5), map[string]any{"lamports": uint64(1) << 60}} {
		if _, err := Canonical(v); !errors.Is(err, ErrUnsafeNumber) {
			t.Errorf("%#v: got %v, want %v", v, err, ErrUnsafeNumber)
		}
	}
	t.Run("numbers inside strings are not numbers", func(t *testing.T) {
		if _, err := Canonical(map[string]string{"amount": "18446744073709551615", "x": "0.5"}); err != nil {
			t.Error(err)
		}
	})
}

func TestCanonicalInvalid(t *testing.T) {
	for name, v := range map[string]any{
		"duplicate member":  json.RawMessage(`{"a":1,"a":2}`),
		"invalid UTF-8":     json.RawMessage("{\"a\":\"\xff\"}"),
		"lone surrogate":    json.RawMessage(`{"a":"\ud800"}`),
		"not marshalable":   make(chan int),
		"infinity":          math.Inf(1),
		"NaN in a map":      map[string]float64{"x": math.NaN()},
		"syntax error":      json.RawMessage(`{"a":}`),
		"trailing garbage":  json.RawMessage(`{"a":1} x`),
		"unterminated text": json.RawMessage(`{"a":"b`),
	} {
		if _, err := Canonical(v); !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("%s: got %v, want %v", name, err, ErrInvalidJSON)
		}
	}
}
