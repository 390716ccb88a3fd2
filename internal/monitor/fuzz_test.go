package monitor

import (
	"os"
	"testing"
)

// FuzzParseConfig: any input is either a valid configuration or a
// *ConfigError; never a panic.
func FuzzParseConfig(f *testing.F) {
	if b, err := os.ReadFile("testdata/good.json"); err == nil {
		f.Add(b)
	}
	entries, _ := os.ReadDir("testdata/bad")
	for _, e := range entries {
		if b, err := os.ReadFile("testdata/bad/" + e.Name()); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			if _, ok := err.(*ConfigError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if len(c.Endpoints) == 0 {
			t.Fatal("valid config without endpoints")
		}
	})
}
