package jsonschema_test

import (
	"testing"

	"github.com/exchangerebel/payability/internal/jsonschema"
)

// A bazaar schema and info as sellers publish them (the corpus's
// synthetic-ext-bazaar-valid case).
const (
	benchSchema = `{"$defs":{"out":{"required":["type"],"type":"object"}},"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"input":{"properties":{"method":{"enum":["GET","HEAD","DELETE"]},"type":{"const":"http"}},"required":["type","method"],"type":"object"},"output":{"$ref":"#/$defs/out"}},"required":["input"],"type":"object"}`
	benchInfo   = `{"input":{"method":"GET","type":"http"},"output":{"type":"json"}}`
)

// BenchmarkBazaar: one compile and one validation, ours against the
// reference library (which also pays, once per process, its init).
func BenchmarkBazaar(b *testing.B) {
	s, _ := decode(b, benchSchema)
	v, _ := decode(b, benchInfo)
	b.Run("ours", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sch, err := jsonschema.Compile(s)
			if err != nil {
				b.Fatal(err)
			}
			if ok, err := sch.Validate(v); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if reference(s, v) != valueValid {
				b.Fatal("invalid")
			}
		}
	})
}
