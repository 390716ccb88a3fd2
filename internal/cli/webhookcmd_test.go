package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/exchangerebel/payability/internal/webhook"
)

func TestWebhookVerify(t *testing.T) {
	secret, body := "whsec-1", `{"id":"evt_1","type":"outcome_changed"}`
	now := time.Unix(1772442000, 0)
	good := webhook.Sign([]byte(secret), []byte(body), now)
	run := func(env map[string]string, stdin string, args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		e := Env{Getenv: func(k string) string { return env[k] }, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
			Now: func() time.Time { return now }}
		code := e.Run(context.Background(), append([]string{"webhook", "verify"}, args...))
		return out.String(), errb.String(), code
	}
	env := map[string]string{"HOOK_SECRET": secret}
	for _, tc := range []struct {
		name  string
		env   map[string]string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"valid", env, body, []string{"--secret-env", "HOOK_SECRET", "--signature", good}, ExitOK, "VALID"},
		{"tampered body", env, body + " ", []string{"--secret-env", "HOOK_SECRET", "--signature", good}, ExitUnexpected, "does not match"},
		{"wrong secret", map[string]string{"HOOK_SECRET": "other"}, body, []string{"--secret-env", "HOOK_SECRET", "--signature", good}, ExitUnexpected, "does not match"},
		{"301 s old", env, body, []string{"--secret-env", "HOOK_SECRET", "--signature", webhook.Sign([]byte(secret), []byte(body), now.Add(-301*time.Second))}, ExitUnexpected, "300 s"},
		{"300 s old is valid", env, body, []string{"--secret-env", "HOOK_SECRET", "--signature", webhook.Sign([]byte(secret), []byte(body), now.Add(-300*time.Second))}, ExitOK, "VALID"},
		{"malformed", env, body, []string{"--secret-env", "HOOK_SECRET", "--signature", "v1=zz"}, ExitUnexpected, "malformed"},
		{"body over 1 MiB", env, strings.Repeat("x", maxWebhookBody+1), []string{"--secret-env", "HOOK_SECRET", "--signature", good}, ExitUnexpected, "over"},
		{"secret not set", nil, body, []string{"--secret-env", "HOOK_SECRET", "--signature", good}, exitUsage, "HOOK_SECRET is not set"},
		{"no signature", env, body, []string{"--secret-env", "HOOK_SECRET"}, exitUsage, "required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := run(tc.env, tc.stdin, tc.args...)
			if code != tc.code || !strings.Contains(out+errs, tc.want) {
				t.Errorf("exit %d, out %q err %q; want %d and %q", code, out, errs, tc.code, tc.want)
			}
			if strings.Contains(out+errs, secret) {
				t.Error("the output shows the secret")
			}
		})
	}
	var out bytes.Buffer
	e := Env{Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: io.Discard}
	if code := e.Run(context.Background(), []string{"webhook"}); code != exitUsage {
		t.Errorf("webhook alone: exit %d", code)
	}
}
