package server

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mr-tron/base58"
)

// The criteria count the free allowance per caller wallet, so a caller is a
// Solana wallet address (base58 of 32 bytes); anything else is a free 400
// naming the rule, and never reaches the store.
func TestFreeCallerMustBeAWallet(t *testing.T) {
	h := newHarness(t, ServeAll)
	w := testWallet("alice")
	sum := sha256.Sum256([]byte("x"))
	for name, caller := range map[string]string{
		"free text":          "alice",
		"leading space":      " " + w,
		"trailing NUL":       w + "\x00",
		"empty":              "",
		"31 bytes":           base58.Encode(sum[:31]),
		"33 bytes":           base58.Encode(append(sum[:], 1)),
		"not base58 (0, O)":  "0" + w[1:],
		"16,000 characters":  strings.Repeat("1", 16000),
		"hex of 32 bytes":    fmt.Sprintf("%x", sum),
		"base64 of 32 bytes": "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=",
	} {
		q, _ := json.Marshal(caller)
		res := h.do(http.MethodPost, "/toll/payability/precheck", fmt.Sprintf(`{"url":"https://seller.example/","caller":%s}`, q), nil)
		if res.status != http.StatusBadRequest || !bytes.Contains(res.body, []byte(`"caller_invalid"`)) ||
			!bytes.Contains(res.body, []byte("32 bytes")) {
			t.Errorf("%s: %d %s, want 400 caller_invalid naming the rule", name, res.status, res.body)
		}
	}
	if n := rows(t, h, "free_use"); n != 0 {
		t.Errorf("%d free-tier rows after refused callers, want 0", n)
	}
	// A wallet is counted by its 32 bytes: one wallet, one allowance.
	if res := h.do(http.MethodPost, "/toll/payability/precheck", `{"url":"https://seller.example/","caller":"`+w+`"}`, nil); res.status != http.StatusOK {
		t.Fatalf("a wallet: %d %s", res.status, res.body)
	}
	if res := h.do(http.MethodPost, "/toll/payability/precheck", `{"url":"https://seller.example/","caller":"`+w+`"}`, nil); res.status != http.StatusPaymentRequired {
		t.Errorf("the same wallet at once: %d, want 402 (min interval)", res.status)
	}
	if n := rows(t, h, "free_use WHERE caller_key = 'payability-verdict|wallet:"+fmt.Sprintf("%x", sha256.Sum256([]byte("alice")))+"'"); n != 1 {
		t.Errorf("the wallet's row is not keyed by its 32 bytes in hex (%d rows)", n)
	}
}

// rows counts the rows of a table (and condition) of the harness's store.
func rows(t *testing.T, h *harness, from string) int {
	t.Helper()
	db, err := sql.Open("sqlite", h.dbPath+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + from).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
