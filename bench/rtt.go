package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/exchangerebel/payability/internal/buildinfo"
	"github.com/exchangerebel/payability/internal/capture"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/scan"
	"github.com/exchangerebel/payability/internal/target"
)

// rttScenario is the real-network shape: TLS targets behind a loopback
// relay that simulates a round trip, one URL at a time, so each op's wall
// time is its own. The ideal for one op on one reused TLS 1.3 connection is
// 1 RTT for TCP, 1 for TLS and 1 per request: probe 9, memo 4.
func rttScenario(n int, rtt time.Duration, http1 bool) error {
	dir, err := os.MkdirTemp("", "payability-bench-tls-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := writeLoopbackCert(dir); err != nil {
		return err
	}
	// The scanner trusts the bench's own certificate through the system
	// roots, read from this file on first use.
	os.Setenv("SSL_CERT_FILE", filepath.Join(dir, "cert.pem"))
	t, err := startTLSTargets(1, dir, rtt, http1)
	if err != nil {
		return err
	}
	defer t.stop()
	proto := "HTTP/2 and HTTP/1.1 by ALPN"
	if http1 {
		proto = "HTTP/1.1 only"
	}
	header(fmt.Sprintf("rtt: TLS targets (%s) behind a %s round-trip relay, one URL at a time", proto, rtt), n, 1, 1, t, 0)
	client := target.New(target.Options{AllowPrivate: true, UserAgent: buildinfo.UserAgent})
	ctx := context.Background()
	perOp := func(name string, ideal int, f func(string) bool) {
		start := time.Now()
		ok := 0
		for i := 0; i < n; i++ {
			if f(t.url(i)) {
				ok++
			}
		}
		per := time.Since(start) / time.Duration(n)
		idealD := time.Duration(ideal) * rtt
		fmt.Printf("   %-46s %8.1f ms per URL   ideal %2d RTT = %6.1f ms   %.2f × ideal   (%d of %d answered)\n",
			name, ms(per), ideal, ms(idealD), per.Seconds()/idealD.Seconds(), ok, n)
	}
	r := ops.Runner{Fetcher: client}
	perOp("probe, one op (a scope of its own)", 9, func(u string) bool {
		rep, err := r.Probe(ctx, u)
		return err == nil && rep.ProbeResult.Outcome == "PROBED"
	})
	perOp("memo, one op (a scope of its own)", 4, func(u string) bool {
		rep, err := r.Memo(ctx, u)
		return err == nil && rep.State != "NOT-A-402"
	})
	old := ops.Runner{Fetcher: oneConnEach{client}}
	perOp("probe, a connection per request (before)", 9, func(u string) bool {
		rep, err := old.Probe(ctx, u)
		return err == nil && rep.ProbeResult.Outcome == "PROBED"
	})
	perOp("memo, a connection per request (before)", 4, func(u string) bool {
		rep, err := old.Memo(ctx, u)
		return err == nil && rep.State != "NOT-A-402"
	})
	// A scan of n URLs on this one host, one at a time: the run's pool
	// keeps the connection from one URL to the next.
	for _, op := range []string{ops.OpProbe, ops.OpMemo} {
		ideal := map[string]int{ops.OpProbe: 7, ops.OpMemo: 2}[op]
		sc := scan.New(scan.Options{Op: op, Runner: ops.Runner{Fetcher: client}, Concurrency: 1, PerHost: 1})
		start := time.Now()
		sum, err := sc.Run(ctx, scan.NewInput(&urlLines{t: t, n: n}))
		if err != nil {
			return err
		}
		per := time.Since(start) / time.Duration(n)
		idealD := time.Duration(ideal) * rtt
		fmt.Printf("   %-46s %8.1f ms per URL   reused  %d RTT = %6.1f ms   %.2f × that   (%d reports)\n",
			"scan --op "+op+" --per-host 1, one host", ms(per), ideal, ms(idealD), per.Seconds()/idealD.Seconds(), sum.Reports)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// oneConnEach is the target client as it was before connection reuse: it
// opens no scope, so every request, probes included, has a connection of its
// own.
type oneConnEach struct{ c *target.Client }

func (o oneConnEach) Get(ctx context.Context, url string) capture.Capture { return o.c.Get(ctx, url) }
func (o oneConnEach) Do(ctx context.Context, r target.Request) capture.Capture {
	return o.c.Do(ctx, r)
}
func (o oneConnEach) RunProbes(ctx context.Context, url string) []capture.Capture {
	inv := target.Inventory()
	out := make([]capture.Capture, len(inv))
	for i, p := range inv {
		if i > 0 && out[0].Outcome != capture.OK {
			out[i] = capture.Capture{Outcome: capture.NotSent}
			continue
		}
		out[i] = o.c.Do(ctx, target.Request{Method: p.Method, URL: url, Header: p.Header, Body: p.Body})
	}
	return out
}

// writeLoopbackCert writes a self-signed certificate for the loopback
// addresses the targets use, and its key, to dir.
func writeLoopbackCert(dir string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "payability bench"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	for i := 0; i < 16; i++ {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(loopbackIP(i)))
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
}
