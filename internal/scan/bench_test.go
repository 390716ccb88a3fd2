package scan

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/exchangerebel/payability/internal/benchcpu"
	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/target"
)

// lines streams n URLs over 64 hosts without holding them.
type lines struct {
	n, i int
	buf  []byte
}

func (l *lines) Read(p []byte) (int, error) {
	for len(l.buf) < len(p) && l.i < l.n {
		l.buf = fmt.Appendf(l.buf, "https://seller%d.example/api/paid\n", l.i%64)
		l.i++
	}
	if len(l.buf) == 0 {
		return 0, io.EOF
	}
	k := copy(p, l.buf)
	l.buf = l.buf[:copy(l.buf, l.buf[k:])]
	return k, nil
}

// memFetcher answers every request with the same capture, built once.
type memFetcher struct{ c capture.Capture }

func newMemFetcher() memFetcher {
	h, body := challengeFor("https://seller.example/api/paid")
	return memFetcher{capture.Capture{Outcome: capture.OK, Status: 402, Header: capture.Header{"Payment-Required": {h}}, Body: []byte(body)}}
}

func (f memFetcher) Get(context.Context, string) capture.Capture { return f.c }

func (f memFetcher) Do(context.Context, target.Request) capture.Capture { return f.c }

func (f memFetcher) RunProbes(context.Context, string) []capture.Capture {
	return []capture.Capture{f.c, f.c, f.c, f.c, f.c, f.c, f.c}
}

// BenchmarkScanNoNetwork is the scanner's own cost per URL with the network
// taken out: input parsing, scheduling, the op (policy, grading, report) and
// the JSON line, against a fetcher that answers at once from memory.
func BenchmarkScanNoNetwork(b *testing.B) {
	for _, op := range []string{ops.OpCheck, ops.OpProbe} {
		b.Run(op, func(b *testing.B) {
			b.ReportAllocs()
			defer benchcpu.Report(b)()
			sc := New(Options{Op: op, Runner: ops.Runner{Fetcher: newMemFetcher()}, Concurrency: 64, PerHost: 4, Out: io.Discard})
			sum, err := sc.Run(context.Background(), NewInput(&lines{n: b.N}))
			if err != nil || sum.Reports != b.N {
				b.Fatalf("reports %d of %d, %v", sum.Reports, b.N, err)
			}
		})
	}
}

// BenchmarkOpCheckAlone is ops.Runner.Check with the same fetcher, one at a
// time: what BenchmarkScanNoNetwork/check costs beyond it is the scanner's.
func BenchmarkOpCheckAlone(b *testing.B) {
	r := ops.Runner{Fetcher: newMemFetcher()}
	b.ReportAllocs()
	defer benchcpu.Report(b)()
	for b.Loop() {
		_, _ = r.Check(context.Background(), "https://seller.example/api/paid")
	}
}

func BenchmarkEncodeCheckRecord(b *testing.B) {
	rep, err := ops.Runner{Fetcher: newMemFetcher()}.Check(context.Background(), "https://seller.example/api/paid")
	if err != nil {
		b.Fatal(err)
	}
	rec := Record{Line: 12, URL: rep.URL, Report: rep}
	s := New(Options{Op: ops.OpCheck})
	b.ReportAllocs()
	for b.Loop() {
		s.encode(rec).release()
	}
}
