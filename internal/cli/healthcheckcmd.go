package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/exchangerebel/payability/internal/netcause"
)

func init() {
	register(command{"healthcheck", "ask this machine's serve, monitor or mcp --http whether it is healthy (a container's HEALTHCHECK)", runHealthcheck})
}

// healthcheckTimeout bounds the whole check: a HEALTHCHECK's own timeout is
// the container runtime's, this one keeps the command from hanging without it.
const healthcheckTimeout = 5 * time.Second

func runHealthcheck(ctx context.Context, e Env, args []string) int {
	fs := newFlagSet(e, "healthcheck", "healthcheck [URL]",
		"GETs URL (default http://127.0.0.1:PORT/healthz, PORT from PAYABILITY_ADDR, else 8402) and exits 0 on 200, 1 otherwise. "+
			"Only loopback addresses are asked: it is the container image's HEALTHCHECK, which has no curl (docs/operations.md). "+
			"It prints nothing on success and one closed-form line on failure, never a byte of the answer.")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return usageExit(err)
	}
	if len(pos) > 1 {
		return usageError(e, fs, "healthcheck takes at most one URL")
	}
	raw := ""
	if len(pos) == 1 {
		raw = pos[0]
	} else if raw, err = healthURLFromAddr(e.Getenv("PAYABILITY_ADDR")); err != nil {
		return usageError(e, fs, "PAYABILITY_ADDR: %v", err)
	}
	u, err := loopbackHealthURL(raw)
	if err != nil {
		return usageError(e, fs, "%v", err)
	}
	status, err := getHealth(ctx, u)
	switch {
	case err != nil:
		fmt.Fprintf(e.Stderr, "payability healthcheck: unhealthy: %s\n", netcause.Of(err))
		return ExitInternal
	case status != http.StatusOK:
		fmt.Fprintf(e.Stderr, "payability healthcheck: unhealthy: status %d\n", status)
		return ExitInternal
	}
	return ExitOK
}

// healthURLFromAddr is the default health URL for a listen address
// (HOST:PORT, as --addr takes it): loopback, the same port, /healthz.
func healthURLFromAddr(addr string) (string, error) {
	port := "8402"
	if addr != "" {
		_, p, err := net.SplitHostPort(addr)
		if err != nil || p == "" {
			return "", errors.New("not HOST:PORT")
		}
		port = p
	}
	return "http://" + net.JoinHostPort("127.0.0.1", port) + "/healthz", nil
}

// loopbackHealthURL accepts an http URL whose host is localhost or a
// loopback IP literal, with no user information.
func loopbackHealthURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil {
		return nil, errors.New("URL must be http://HOST[:PORT]/PATH with no user information")
	}
	if !isLoopbackHost(u.Hostname()) {
		return nil, errors.New("URL host must be localhost or a loopback address")
	}
	return u, nil
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// loopbackOnly is the dialer's Control: it refuses any address that is not
// loopback, whatever "localhost" resolves to.
func loopbackOnly(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return errors.New("healthcheck: address refused: not loopback")
	}
	return nil
}

// getHealth sends one GET and returns the status; the body is drained up to
// 64 KiB and never read otherwise. Redirects are not followed.
func getHealth(ctx context.Context, u *url.URL) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	tr := &http.Transport{
		Proxy:             nil,
		DialContext:       (&net.Dialer{Control: loopbackOnly}).DialContext,
		DisableKeepAlives: true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var buf [4096]byte
	for n := 0; n < 64<<10; {
		k, err := resp.Body.Read(buf[:])
		n += k
		if err != nil {
			break
		}
	}
	return resp.StatusCode, nil
}
