package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/exchangerebel/payability/internal/webhook"
)

func init() {
	register(command{"webhook", "check a monitor webhook delivery: webhook verify --secret-env NAME --signature HEADER", runWebhook})
}

const webhookUsage = "webhook verify --secret-env NAME --signature HEADER"

// maxWebhookBody bounds the delivery body read from stdin.
const maxWebhookBody = 1 << 20

func runWebhook(ctx context.Context, e Env, args []string) int {
	if len(args) == 0 || args[0] != "verify" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprintf(e.Stdout, "usage: payability %s\n", webhookUsage)
			return ExitOK
		}
		fmt.Fprintf(e.Stderr, "usage: payability %s\n", webhookUsage)
		return exitUsage
	}
	fs := newFlagSet(e, "webhook verify", webhookUsage,
		`Checks a delivery of payability monitor's webhooks: the raw body on stdin, the
X-Payability-Signature header's value as --signature, the shared secret in the environment
variable --secret-env names (never on the command line). Valid when the HMAC-SHA256 of
"<t>.<body>" matches and t is within 300 s of this machine's clock.
exit status: 0 valid; 3 invalid; 1 the body could not be read; 2 bad usage.`)
	var secretEnv, signature string
	fs.StringVar(&secretEnv, "secret-env", "", "the environment variable `NAME` holding the shared secret")
	fs.StringVar(&signature, "signature", "", "the X-Payability-Signature `HEADER` value of the delivery")
	pos, err := parseFlags(e, fs, args[1:])
	if err != nil {
		return usageExit(err)
	}
	if len(pos) != 0 {
		return usageError(e, fs, "takes no arguments besides its flags (the body is read from stdin)")
	}
	if secretEnv == "" || signature == "" {
		return usageError(e, fs, "--secret-env and --signature are required")
	}
	secret := e.Getenv(secretEnv)
	if secret == "" {
		fmt.Fprintf(e.Stderr, "payability webhook verify: %s is not set\n", secretEnv)
		return exitUsage
	}
	body, err := io.ReadAll(io.LimitReader(e.Stdin, maxWebhookBody+1))
	if err != nil {
		fmt.Fprintln(e.Stderr, "payability webhook verify: cannot read the body from stdin")
		return ExitInternal
	}
	if len(body) > maxWebhookBody {
		fmt.Fprintf(e.Stdout, "INVALID: body over %d bytes\n", maxWebhookBody)
		return ExitUnexpected
	}
	switch err := webhook.Verify([]byte(secret), body, signature, e.now()()); {
	case err == nil:
		fmt.Fprintln(e.Stdout, "VALID")
		return ExitOK
	case errors.Is(err, webhook.ErrStale):
		fmt.Fprintln(e.Stdout, "INVALID: the timestamp is more than 300 s from this clock")
	case errors.Is(err, webhook.ErrMalformed):
		fmt.Fprintln(e.Stdout, "INVALID: malformed signature header")
	default:
		fmt.Fprintln(e.Stdout, "INVALID: the signature does not match the body and secret")
	}
	return ExitUnexpected
}
