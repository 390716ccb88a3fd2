package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The loopback targets run in a child process (this same binary with
// -serve), so the harness's own peak RSS is the scanner's, not the targets'.
// Both processes share the machine's cores, for the raw client and the
// scanner alike.

// targets is a running child process serving one fixed 402 challenge on each
// of several loopback addresses.
type targets struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	addrs  []string // host:port, one per listener
	scheme string   // http, or https behind the latency relay
}

// startTargets starts the child with n listeners and the given added latency.
func startTargets(n int, latency time.Duration) (*targets, error) {
	return startChild(n, "-latency", latency.String())
}

// startTLSTargets starts the child with n TLS listeners (the certificate and
// key in dir), each behind a loopback relay that simulates rtt.
func startTLSTargets(n int, dir string, rtt time.Duration, http1 bool) (*targets, error) {
	t, err := startChild(n, "-tls-dir", dir, "-rtt", rtt.String(), "-http1="+strconv.FormatBool(http1))
	if t != nil {
		t.scheme = "https"
	}
	return t, err
}

func startChild(n int, args ...string) (*targets, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, append([]string{"-serve", "-hosts", strconv.Itoa(n)}, args...)...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t := &targets{cmd: cmd, stdin: stdin, scheme: "http"}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready ") {
		t.stop()
		return nil, fmt.Errorf("targets did not start (%q, %v)", line, err)
	}
	t.addrs = strings.Fields(strings.TrimPrefix(line, "ready "))
	return t, nil
}

// stop ends the child: closing its stdin asks it to exit; a child that does
// not is killed by its own pid.
func (t *targets) stop() {
	_ = t.stdin.Close()
	done := make(chan struct{})
	go func() { _ = t.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = t.cmd.Process.Kill()
		<-done
	}
}

func (t *targets) pid() int { return t.cmd.Process.Pid }

// url is the single paid route of listener i.
func (t *targets) url(i int) string { return t.scheme + "://" + t.addrs[i%len(t.addrs)] + "/paid" }

// serveTargets is the child: listeners on 127.0.0.2, 127.0.0.3, … (all
// loopback on Linux), each a distinct host for the per-host limit. It prints
// "ready ADDR…" and serves until its stdin closes.
//
// With tlsDir the listeners speak TLS (HTTP/2 and HTTP/1.1 by ALPN, or
// HTTP/1.1 only) and each is reached through a relay (relay.go) that
// simulates rtt: the addresses printed are the relays'.
func serveTargets(n int, latency time.Duration, tlsDir string, rtt time.Duration, http1 bool) error {
	var addrs []string
	var servers []*http.Server
	var relays []net.Listener
	var tlsConf *tls.Config
	if tlsDir != "" {
		cert, err := tls.LoadX509KeyPair(filepath.Join(tlsDir, "cert.pem"), filepath.Join(tlsDir, "key.pem"))
		if err != nil {
			return err
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
		if http1 {
			tlsConf.NextProtos = []string{"http/1.1"}
		}
	}
	for i := 0; i < n; i++ {
		ip := loopbackIP(i)
		ln, err := net.Listen("tcp4", ip+":0")
		if err != nil {
			return fmt.Errorf("listen on %s: %w", ip, err)
		}
		addr := ln.Addr().String()
		scheme := "http"
		if tlsConf != nil {
			rl, err := net.Listen("tcp4", ip+":0")
			if err != nil {
				return fmt.Errorf("listen on %s: %w", ip, err)
			}
			relays = append(relays, rl)
			go relay(rl, addr, rtt)
			addr, scheme = rl.Addr().String(), "https"
		}
		srv := &http.Server{Handler: challengeHandler(scheme+"://"+addr+"/paid", latency), ReadHeaderTimeout: 5 * time.Second}
		if tlsConf != nil {
			srv.TLSConfig = tlsConf
			if http1 {
				srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){} // no h2
			}
			ln = tls.NewListener(ln, tlsConf)
		}
		servers = append(servers, srv)
		addrs = append(addrs, addr)
		go func() { _ = srv.Serve(ln) }()
	}
	defer func() {
		for _, rl := range relays {
			rl.Close()
		}
	}()
	fmt.Println("ready " + strings.Join(addrs, " "))
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes it (or dies)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, s := range servers {
		_ = s.Shutdown(ctx)
	}
	return nil
}

// loopbackIP is the i-th address of 127.0.0.2 … 127.255.255.254.
func loopbackIP(i int) string {
	v := 2 + i
	return fmt.Sprintf("127.%d.%d.%d", (v>>16)&0xff, (v>>8)&0xff, v&0xff)
}

// challengeHandler answers like a fail-closed x402 seller: every unpaid
// request gets the same 402 challenge (v1 body and v2 PAYMENT-REQUIRED
// header, resource equal to the route, so check grades it POPULATED); a
// request carrying payment material gets a 402 with a rejection reason. The
// bytes are built once: the target costs as little as a target can.
func challengeHandler(resource string, latency time.Duration) http.Handler {
	body := []byte(fmt.Sprintf(`{"x402Version":1,"error":"X-PAYMENT header is required","accepts":[{"scheme":"exact","network":"solana","maxAmountRequired":"10000","amount":"10000","resource":%q,"description":"Current weather for one city, as JSON.","mimeType":"application/json","payTo":"6ePDvgz6hZ2zx5W8XTHbHpZDy87426UrKfvQ788uJuiS","maxTimeoutSeconds":300,"asset":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v","extra":{"feePayer":"5a2xontTE9Zr3upmeB6VuDAQVx7sR1DEbscMUCwSWdwZ","usdc_token_account":"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin","memo":"pv-7f3a9c2e41d84b6f"}}]}`, resource))
	header := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf(`{"x402Version":2,"resource":{"url":%q},"accepts":[{"scheme":"exact","network":"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp","amount":"10000","payTo":"6ePDvgz6hZ2zx5W8XTHbHpZDy87426UrKfvQ788uJuiS","extra":{"memo":"pv-7f3a9c2e41d84b6f","usdc_token_account":"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"}}]}`, resource)))
	rejected := []byte(`{"x402Version":2,"error":"invalid_payment","accepts":[]}`)
	bodyLen := strconv.Itoa(len(body))
	rejectedLen := strconv.Itoa(len(rejected))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if latency > 0 {
			time.Sleep(latency)
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<16))
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		if r.Header.Get("X-Payment-Tx") != "" || r.Header.Get("Payment-Signature") != "" || r.Header.Get("X-Payment") != "" {
			h["Content-Length"] = []string{rejectedLen}
			w.WriteHeader(http.StatusPaymentRequired)
			_, _ = w.Write(rejected)
			return
		}
		h["Payment-Required"] = []string{header}
		h["Content-Length"] = []string{bodyLen}
		w.WriteHeader(http.StatusPaymentRequired)
		if r.Method != http.MethodHead {
			_, _ = w.Write(body)
		}
	})
}
