package solana

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/exchangerebel/payability/internal/netcause"
)

// Closed error codes of the client.
const (
	CodeRPCError  = "rpc_error" // the node answered with a JSON-RPC error
	CodeTransport = "transport" // no answer, or an HTTP status other than 2xx
	CodeMalformed = "malformed" // an answer that is not the JSON-RPC shape we asked for
)

// Error is a closed-form client failure: a code and numbers, never a byte
// of the node's answer nor the RPC URL (which often carries an API key).
type Error struct {
	Code       string // CodeRPCError, CodeTransport or CodeMalformed
	RPCCode    int    // the JSON-RPC error code, with CodeRPCError
	HTTPStatus int    // the node's non-2xx HTTP status, with CodeTransport
	// Cause says why a CodeTransport call got no answer, from the closed
	// set of netcause (dns, refused, timeout, tls, reset, canceled,
	// failed); "status N" when the node answered a non-2xx status.
	Cause  string
	ctxErr error // context.Canceled or DeadlineExceeded, when that was the cause
}

func (e *Error) Error() string {
	switch {
	case e.Code == CodeRPCError:
		return fmt.Sprintf("solana: %s %d", e.Code, e.RPCCode)
	case e.Code == CodeTransport && e.Cause != "":
		return fmt.Sprintf("solana: %s (the RPC node: %s)", e.Code, e.Cause)
	case e.HTTPStatus != 0:
		return fmt.Sprintf("solana: %s (HTTP %d)", e.Code, e.HTTPStatus)
	default:
		return "solana: " + e.Code
	}
}

// Unwrap exposes the context's error when a cancelled or expired context
// ended the call, so errors.Is(err, context.DeadlineExceeded) works.
func (e *Error) Unwrap() error { return e.ctxErr }

var (
	// ErrNotFound: the node does not have the transaction (yet) at the
	// client's commitment.
	ErrNotFound = errors.New("solana: transaction not found")
	// ErrInvalidSignature: the signature is not the base58 text of 64
	// bytes; nothing was sent.
	ErrInvalidSignature = errors.New("solana: invalid transaction signature")
)

// maxResponse bounds an answer; a jsonParsed transaction is a few tens of
// kilobytes even with long logs.
const maxResponse = 4 << 20

// defaultTimeout bounds a call when the caller brings no client.
const defaultTimeout = 15 * time.Second

// Client calls one Solana JSON-RPC endpoint.
type Client struct {
	url        string
	http       *http.Client
	commitment string
}

// New makes a client for rpcURL. httpClient nil means a client with a 15 s
// timeout that follows no redirects; commitment "" means "confirmed".
func New(rpcURL string, httpClient *http.Client, commitment string) (*Client, error) {
	u, err := url.Parse(rpcURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("solana: the RPC URL must be an absolute http or https URL")
	}
	switch commitment {
	case "":
		commitment = CommitmentConfirmed
	case CommitmentConfirmed, CommitmentFinalized:
	default:
		return nil, errors.New(`solana: commitment must be "confirmed" or "finalized"`)
	}
	if httpClient == nil {
		httpClient = &http.Client{
			Timeout: defaultTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	}
	return &Client{url: rpcURL, http: httpClient, commitment: commitment}, nil
}

// Commitment is the level the client asks for.
func (c *Client) Commitment() string { return c.commitment }

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int    `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

type txConfig struct {
	Encoding                       string `json:"encoding"`
	MaxSupportedTransactionVersion int    `json:"maxSupportedTransactionVersion"`
	Commitment                     string `json:"commitment"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code int `json:"code"`
	} `json:"error"`
}

// requestID is the id of every call: one call per HTTP request.
const requestID = 1

// GetTransaction fetches the transaction sig in jsonParsed encoding (version
// 0 transactions included). A transaction the node does not have yet is
// ErrNotFound; other failures are *Error.
func (c *Client) GetTransaction(ctx context.Context, sig string) (*Tx, error) {
	if !ValidSignature(sig) {
		return nil, ErrInvalidSignature
	}
	body, err := json.Marshal(rpcRequest{
		JSONRPC: "2.0",
		ID:      requestID,
		Method:  "getTransaction",
		Params: []any{sig, txConfig{
			Encoding:                       "jsonParsed",
			MaxSupportedTransactionVersion: 0,
			Commitment:                     c.commitment,
		}},
	})
	if err != nil {
		return nil, &Error{Code: CodeMalformed}
	}
	raw, err := c.call(ctx, body)
	if err != nil {
		return nil, err
	}
	var resp rpcResponse
	if err := json.Unmarshal(raw, &resp); err != nil || resp.JSONRPC != "2.0" || string(resp.ID) != "1" {
		return nil, &Error{Code: CodeMalformed}
	}
	if resp.Error != nil {
		return nil, &Error{Code: CodeRPCError, RPCCode: resp.Error.Code}
	}
	if len(resp.Result) == 0 {
		return nil, &Error{Code: CodeMalformed}
	}
	if string(resp.Result) == "null" {
		return nil, ErrNotFound
	}
	var tx Tx
	if err := json.Unmarshal(resp.Result, &tx); err != nil {
		return nil, &Error{Code: CodeMalformed}
	}
	// The node must answer for the transaction we asked about.
	if sigs := tx.Transaction.Signatures; len(sigs) == 0 || sigs[0] != sig {
		return nil, &Error{Code: CodeMalformed}
	}
	return &tx, nil
}

// call posts one JSON-RPC request and returns the answer's bytes.
func (c *Client) call(ctx context.Context, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Code: CodeTransport, Cause: netcause.Failed, ctxErr: ctx.Err()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &Error{Code: CodeTransport, Cause: netcause.Of(err), ctxErr: ctx.Err()}
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &Error{Code: CodeTransport, HTTPStatus: resp.StatusCode, Cause: netcause.Status(resp.StatusCode)}
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, &Error{Code: CodeTransport, Cause: netcause.Of(err), ctxErr: ctx.Err()}
	}
	if len(raw) > maxResponse {
		return nil, &Error{Code: CodeMalformed}
	}
	return raw, nil
}
