package target

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A StreamClient reads a body up to its cap and fails past it; it keeps
// the guard and never follows a redirect.
func TestStreamClientLimits(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "/exact", http.StatusFound)
		case "/exact":
			io.WriteString(w, strings.Repeat("a", 1024))
		default:
			io.WriteString(w, strings.Repeat("a", 1025))
		}
	}))
	defer srv.Close()
	hc := New(Options{AllowPrivate: true}).StreamClient(1024)
	read := func(path string) ([]byte, int, error) {
		resp, err := hc.Get(srv.URL + path)
		if err != nil {
			return nil, 0, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return b, resp.StatusCode, err
	}
	if b, _, err := read("/exact"); err != nil || len(b) != 1024 {
		t.Errorf("1024 bytes at a cap of 1024: %d, %v", len(b), err)
	}
	if _, _, err := read("/over"); !errors.Is(err, ErrBodyOverCap) {
		t.Errorf("1025 bytes at a cap of 1024: %v", err)
	}
	if _, status, err := read("/redirect"); err != nil || status != http.StatusFound {
		t.Errorf("a redirect: status %d, %v (want the 302 itself)", status, err)
	}
	guarded := New(Options{}).StreamClient(1024)
	if resp, err := guarded.Get(srv.URL + "/exact"); err == nil {
		resp.Body.Close()
		t.Error("the guard let a loopback address through")
	}
}
