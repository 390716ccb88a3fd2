package scan

import (
	"bytes"
	"io"
	"testing"
)

// FuzzInput: the input reader never panics, ends, and numbers every item
// with a line that does not go backwards.
func FuzzInput(f *testing.F) {
	f.Add([]byte("https://a.example/x\n# comment\n\nhttp://b.example/\n"))
	f.Add([]byte(`["https://a.example/", "http://b.example/"]`))
	f.Add([]byte(`{"resources":[{"resource":"https://a.example/"},{"resource":7}]}`))
	f.Add([]byte(`{"items":[{"resource":"https://a.example/"}]}`))
	f.Add([]byte("[\"unterminated"))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := NewInput(bytes.NewReader(b))
		last := 0
		for i := 0; i <= len(b)+1; i++ {
			it, err := in.Next()
			if err != nil {
				if err != io.EOF {
					if _, ok := err.(*InputError); !ok {
						t.Fatalf("error %T is not an *InputError", err)
					}
				}
				return
			}
			if it.Line < last || it.Line < 1 {
				t.Fatalf("line %d after %d", it.Line, last)
			}
			last = it.Line
		}
		t.Fatal("the input did not end")
	})
}
