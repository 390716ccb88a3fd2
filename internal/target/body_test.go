package target

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readBody reads what io.ReadAll over the same limited reader reads, with
// the same error, whatever length the response declares (issue 23).
func TestReadBodyMatchesReadAll(t *testing.T) {
	const limit = 1000
	boom := errors.New("boom")
	readers := map[string]func(string) io.Reader{
		"plain":    func(s string) io.Reader { return strings.NewReader(s) },
		"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"data+EOF": func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) },
		"half":     func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
		"error":    func(s string) io.Reader { return io.MultiReader(strings.NewReader(s), iotest.ErrReader(boom)) },
	}
	for _, size := range []int{0, 1, 511, 512, 513, 580, limit - 1, limit, limit + 1, 3 * limit} {
		body := strings.Repeat("x", size)
		for _, declared := range []int64{-1, 0, int64(size) - 1, int64(size), int64(size) + 1, limit, limit + 1, 1 << 40} {
			for name, mk := range readers {
				want, wantErr := io.ReadAll(io.LimitReader(mk(body), limit+1))
				got, gotErr := readBody(mk(body), declared, limit)
				if !bytes.Equal(got, want) || !errors.Is(gotErr, wantErr) && gotErr != wantErr || got == nil {
					t.Errorf("size %d declared %d %s: got %d bytes, %v; want %d bytes, %v", size, declared, name, len(got), gotErr, len(want), wantErr)
				}
			}
		}
	}
}

// A declared length reserves at most maxPresize before any byte arrives.
func TestReadBodyPresizeIsBounded(t *testing.T) {
	got, err := readBody(strings.NewReader("ab"), 1<<40, 1<<30)
	if err != nil || string(got) != "ab" || cap(got) > maxPresize+1 {
		t.Fatalf("got %q (cap %d), %v", got, cap(got), err)
	}
	got, _ = readBody(strings.NewReader("abc"), 3, 1<<20)
	if cap(got) != 4 {
		t.Fatalf("a declared 3-byte body got a %d-byte buffer, want 4", cap(got))
	}
}

func BenchmarkReadBody(b *testing.B) {
	body := strings.Repeat("x", 580)
	b.Run("readall", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = io.ReadAll(io.LimitReader(strings.NewReader(body), 1<<20+1))
		}
	})
	b.Run("declared", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = readBody(strings.NewReader(body), int64(len(body)), 1<<20)
		}
	})
}
