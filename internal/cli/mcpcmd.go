//go:build !quick

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exchangerebel/payability/internal/mcp"
	"github.com/exchangerebel/payability/internal/ops"
	"github.com/exchangerebel/payability/internal/reliability"
	"github.com/exchangerebel/payability/internal/report"
	"github.com/exchangerebel/payability/internal/target"
)

func init() {
	register(command{"mcp", summaryOf("mcp"), runMCP})
}

func runMCP(ctx context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "mcp", "mcp [--http ADDR [--http-public] [--token-env NAME] [--allow-origin ORIGIN]... [--session-idle D] [--max-sessions N]] [--max-calls N] [--call-wait D] [--host-conns N] [--allow-private] [--sign-key FILE] [--cortx-api URL]",
		`Serves the Model Context Protocol on stdin/stdout (the default) or, with --http, streamable HTTP
on ADDR (docs/mcp.md). The address guard, the signing key and the CORTX API are this command's
flags, never a tool's arguments.
exit status: 0 the client closed the session (stdio) or the server was stopped; 1 internal error;
2 bad usage.`)
	httpAddr := fs.String("http", "", "serve streamable HTTP on `ADDR` (host:port) instead of stdio; loopback only unless --http-public")
	httpPublic := fs.Bool("http-public", false, "let --http listen on a non-loopback address")
	allowPrivate := fs.Bool("allow-private", false, "let the tools reach loopback and private target addresses (a seller's staging)")
	signKey := fs.String("sign-key", "", "sign x402_preflight records with the Ed25519 key in `FILE`; x402_verify_report checks against it by default")
	api := fs.String("cortx-api", reliability.DefaultAPI, "the CORTX API base `URL` of x402_reliability and x402_preflight's service_id")
	var origins stringList
	fs.Var(&origins, "allow-origin", "with --http, also accept browser requests from `ORIGIN` (scheme://host[:port]); repeatable; loopback origins are always accepted")
	sessionIdle := fs.Duration("session-idle", mcp.DefaultSessionIdle, "with --http, close a session idle for `D`")
	maxSessions := fs.Int("max-sessions", mcp.DefaultMaxSessions, "with --http, keep at most `N` live sessions (a new one evicts the oldest)")
	tokenEnv := fs.String("token-env", "", "with --http, require the bearer token held by the environment variable `NAME` (at least 16 characters); needed off loopback")
	maxCalls := fs.Int("max-calls", mcp.DefaultMaxCalls, "at most `N` tool calls run at once, over every session")
	callWait := fs.Duration("call-wait", mcp.DefaultCallWait, "a tool call beyond --max-calls waits up to `D` for its turn, then fails busy")
	hostConns := fs.Int("host-conns", target.DefaultHostConns, "at most `N` simultaneous connections to one target host, over every tool call")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	switch {
	case len(pos) != 0:
		return usageError(e, fs, "takes no arguments besides its flags")
	case *sessionIdle <= 0 || *maxSessions < 1 || *maxCalls < 1 || *callWait < 0 || *hostConns < 1:
		return usageError(e, fs, "--session-idle must be positive, --call-wait not negative, and --max-sessions, --max-calls and --host-conns at least 1")
	}
	for _, o := range origins {
		if _, ok := mcp.NormalOrigin(o); !ok {
			return usageError(e, fs, "--allow-origin takes an origin: scheme://host[:port], http or https, no path")
		}
	}
	token := ""
	if *tokenEnv != "" {
		token = e.Getenv(*tokenEnv)
		if len(token) < 16 {
			return usageError(e, fs, "--token-env names an environment variable that must hold a token of at least 16 characters")
		}
	}
	wait := *callWait
	if wait == 0 {
		wait = -1 // no wait: busy at once
	}
	cfg := mcp.Config{
		Runner:         ops.Runner{Fetcher: e.fetcherLimited(*allowPrivate, *hostConns), Now: e.now()},
		MaxCalls:       *maxCalls,
		CallWait:       wait,
		CORTXAPI:       *api,
		CORTXAllowHTTP: *allowPrivate,
		Render: mcp.Renderers{
			Op:          func(w io.Writer, rep ops.Report) error { return renderText(w, rep, false) },
			Lint:        renderLint,
			Preflight:   func(w io.Writer, rep ops.PreflightReport) { RenderPreflight(w, rep, false) },
			Reliability: reliability.Render,
		},
	}
	if *signKey != "" {
		k, err := report.LoadKeyFile(*signKey)
		if err != nil {
			fmt.Fprintln(e.Stderr, "payability mcp: --sign-key: the key file cannot be used")
			return exitUsage
		}
		ks := report.NewKeySet(k)
		cfg.Key, cfg.Keys = &k, &ks
	}
	server := mcp.NewServer(cfg)
	if *httpAddr == "" {
		t := &sdk.IOTransport{Reader: io.NopCloser(e.Stdin), Writer: nopWriteCloser{e.Stdout}}
		if err := server.Run(ctx, t); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			fmt.Fprintln(e.Stderr, "payability mcp: the session ended with an error")
			return ExitInternal
		}
		return ExitOK
	}
	if !loopbackAddr(*httpAddr) {
		if !*httpPublic {
			return usageError(e, fs, "--http listens on loopback only (127.0.0.1, ::1, localhost) unless --http-public")
		}
		if token == "" {
			return usageError(e, fs, "--http off loopback needs --token-env: every request then carries the bearer token")
		}
	}
	ln, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		fmt.Fprintln(e.Stderr, "payability mcp: --http: the address cannot be listened on")
		return exitUsage
	}
	handler := mcp.NewHTTPHandler(server, mcp.HTTPOptions{AllowOrigins: origins, SessionIdle: *sessionIdle, MaxSessions: *maxSessions, Token: token})
	defer handler.Close()
	return serveMCPHTTP(ctx, e, ln, handler)
}

// serveMCPHTTP serves streamable HTTP on ln until ctx ends: then /readyz
// answers 503 while the server drains.
func serveMCPHTTP(ctx context.Context, e Env, ln net.Listener, handler *mcp.HTTPHandler) int {
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.Stderr, "payability mcp: streamable HTTP on http://%s/\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
		handler.Drain()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		<-done
		return ExitOK
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return ExitOK
		}
		fmt.Fprintln(e.Stderr, "payability mcp: the HTTP server stopped with an error")
		return ExitInternal
	}
}

// loopbackAddr reports whether host:port names a loopback host.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
