package facilitator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/exchangerebel/payability/internal/netcause"
)

// Closed error codes of the client.
const (
	CodeTransport = "transport" // no answer (refused, reset, timeout)
	CodeStatus    = "status"    // an HTTP status the call does not accept
	CodeMalformed = "malformed" // an answer that is not the JSON object of the API
)

// Error is a closed-form client failure: the call, a code and the HTTP
// status, never a byte of the facilitator's answer nor its URL (which may
// carry a key).
type Error struct {
	Call       string // "supported", "verify" or "settle"
	Code       string // CodeTransport, CodeStatus or CodeMalformed
	HTTPStatus int
	// Cause says why a CodeTransport call got no answer, from the closed
	// set of netcause (dns, refused, timeout, tls, reset, canceled,
	// failed).
	Cause  string
	ctxErr error
}

func (e *Error) Error() string {
	if e.Code == CodeTransport && e.Cause != "" {
		return fmt.Sprintf("facilitator %s: %s (%s %s: %s)", e.Call, e.Code, methodOf(e.Call), "/"+e.Call, e.Cause)
	}
	if e.HTTPStatus != 0 {
		return fmt.Sprintf("facilitator %s: %s (HTTP %d)", e.Call, e.Code, e.HTTPStatus)
	}
	return fmt.Sprintf("facilitator %s: %s", e.Call, e.Code)
}

// methodOf is the HTTP method of a call of the facilitator API.
func methodOf(call string) string {
	if call == "supported" {
		return http.MethodGet
	}
	return http.MethodPost
}

// Unwrap exposes a context's error when a cancelled or expired context
// ended the call.
func (e *Error) Unwrap() error { return e.ctxErr }

// maxResponse bounds an answer of the facilitator API; real ones are a few
// hundred bytes (/supported a few kilobytes).
const maxResponse = 64 << 10

// Client calls one facilitator. The facilitator is configured by the
// operator, so it is a plain HTTP client (not the target guard), with a
// timeout, no redirects and capped answers.
type Client struct {
	base string
	http *http.Client
}

// DefaultTimeout bounds one call when the caller brings no HTTP client; a
// settlement waits for the chain's confirmation, so it is generous.
const DefaultTimeout = 60 * time.Second

// NewClient makes a client for the facilitator at baseURL (its endpoints are
// baseURL + "/supported", "/verify", "/settle"). httpClient nil means a
// client with DefaultTimeout that follows no redirects.
func NewClient(baseURL string, httpClient *http.Client) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("facilitator: the URL must be an absolute http or https URL without query or fragment")
	}
	if httpClient == nil {
		httpClient = &http.Client{
			Timeout: DefaultTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), http: httpClient}, nil
}

// Supported asks GET /supported.
func (c *Client) Supported(ctx context.Context) (SupportedResponse, error) {
	var out SupportedResponse
	status, body, err := c.do(ctx, "supported", http.MethodGet, nil)
	if err != nil {
		return out, err
	}
	if status != http.StatusOK {
		return out, &Error{Call: "supported", Code: CodeStatus, HTTPStatus: status}
	}
	if json.Unmarshal(body, &out) != nil || out.Kinds == nil {
		return out, &Error{Call: "supported", Code: CodeMalformed, HTTPStatus: status}
	}
	return out, nil
}

// Verify asks POST /verify. An answer that says isValid, whatever its
// status, is returned; a non-200 answer is never taken as valid.
func (c *Client) Verify(ctx context.Context, req Request) (VerifyResponse, error) {
	var out VerifyResponse
	status, body, err := c.post(ctx, "verify", req)
	if err != nil {
		return out, err
	}
	if json.Unmarshal(body, &out) != nil || out.IsValid == nil {
		if status != http.StatusOK {
			return VerifyResponse{}, &Error{Call: "verify", Code: CodeStatus, HTTPStatus: status}
		}
		return VerifyResponse{}, &Error{Call: "verify", Code: CodeMalformed, HTTPStatus: status}
	}
	if *out.IsValid && status != http.StatusOK {
		return VerifyResponse{}, &Error{Call: "verify", Code: CodeStatus, HTTPStatus: status}
	}
	return out, nil
}

// Settle asks POST /settle. An answer that says success, whatever its
// status, is returned; a non-200 answer is never taken as a success.
func (c *Client) Settle(ctx context.Context, req Request) (SettleResponse, error) {
	var out SettleResponse
	status, body, err := c.post(ctx, "settle", req)
	if err != nil {
		return out, err
	}
	if json.Unmarshal(body, &out) != nil || out.Success == nil {
		if status != http.StatusOK {
			return SettleResponse{}, &Error{Call: "settle", Code: CodeStatus, HTTPStatus: status}
		}
		return SettleResponse{}, &Error{Call: "settle", Code: CodeMalformed, HTTPStatus: status}
	}
	if *out.Success && status != http.StatusOK {
		return SettleResponse{}, &Error{Call: "settle", Code: CodeStatus, HTTPStatus: status}
	}
	return out, nil
}

func (c *Client) post(ctx context.Context, call string, req Request) (int, []byte, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return 0, nil, &Error{Call: call, Code: CodeMalformed}
	}
	return c.do(ctx, call, http.MethodPost, body)
}

func (c *Client) do(ctx context.Context, call, method string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/"+call, rd)
	if err != nil {
		return 0, nil, &Error{Call: call, Code: CodeTransport, Cause: netcause.Failed}
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, &Error{Call: call, Code: CodeTransport, Cause: netcause.Of(err), ctxErr: ctx.Err()}
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxResponse+1))
	if err != nil {
		return 0, nil, &Error{Call: call, Code: CodeTransport, HTTPStatus: res.StatusCode, Cause: netcause.Of(err), ctxErr: ctx.Err()}
	}
	if len(raw) > maxResponse {
		return 0, nil, &Error{Call: call, Code: CodeMalformed, HTTPStatus: res.StatusCode}
	}
	return res.StatusCode, raw, nil
}
