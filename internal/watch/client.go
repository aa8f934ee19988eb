package watch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to one hub's HTTP API.
type Client struct {
	// Base is the hub's URL, e.g. http://127.0.0.1:8080, without a trailing slash.
	Base string
	// Token returns the bearer token to send, or "" for none. It is asked before every request, so a token file
	// renewed while a watch runs is picked up at the next reconnect.
	Token func() (string, error)
	HTTP  *http.Client
}

// NewClient returns a client of base with a transport of its own; Close releases its idle connections.
func NewClient(base string, token func() (string, error)) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--url %q: want http://host:port or https://host:port", base)
	}
	if token == nil {
		token = func() (string, error) { return "", nil }
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 15 * time.Second,
		// The SSE stream must arrive as sent: no transparent gzip, which the hub never uses on /events anyway.
		DisableCompression: true,
		ForceAttemptHTTP2:  true,
	}
	return &Client{Base: strings.TrimRight(base, "/"), Token: token, HTTP: &http.Client{Transport: tr}}, nil
}

// Close closes the client's idle connections.
func (c *Client) Close() { c.HTTP.CloseIdleConnections() }

// StatusError is a hub's refusal: the status, the {"error"} text and any Retry-After.
type StatusError struct {
	Method, Path string
	Code         int
	Msg          string
	RetryAfter   time.Duration
	Hint         string // what to do about it, for a 401: how to give a token
}

func (e *StatusError) Error() string {
	msg := e.Msg
	if msg == "" {
		msg = http.StatusText(e.Code)
	}
	s := fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Code, msg)
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// Fatal says that asking again will not help: a bad request, missing or refused credentials, an unknown route.
func (e *StatusError) Fatal() bool {
	return e.Code >= 400 && e.Code < 500 && e.Code != http.StatusRequestTimeout && e.Code != http.StatusTooManyRequests
}

// fatalError is a problem of the watch's own that no retry mends, such as an unreadable token file.
type fatalError struct{ error }

func (e fatalError) Unwrap() error { return e.error }

// isFatal reports whether err ends a watch instead of being retried.
func isFatal(err error) bool {
	var se *StatusError
	var fe fatalError
	return errors.As(err, &fe) || (errors.As(err, &se) && se.Fatal())
}

// request builds a request for path (which carries its own query) with the credentials.
func (c *Client) request(ctx context.Context, path, accept string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	tok, err := c.Token()
	if err != nil {
		return nil, fatalError{err}
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return req, nil
}

// get sends a GET and returns the response when it is 200, else the hub's refusal as a *StatusError.
func (c *Client) get(ctx context.Context, path, accept string, hdr http.Header) (*http.Response, error) {
	req, err := c.request(ctx, path, accept)
	if err != nil {
		return nil, err
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", c.Base+shortPath(path), err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, refusal(resp, shortPath(path))
}

// refusal reads a non-200 answer: the contract's JSON {"error"} or, from something in front of the hub, plain text.
func refusal(resp *http.Response, path string) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var body struct {
		Error string `json:"error"`
	}
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &body) == nil && body.Error != "" {
		msg = body.Error
	}
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	e := &StatusError{Method: http.MethodGet, Path: path, Code: resp.StatusCode, Msg: msg}
	if resp.Request != nil {
		e.Method = resp.Request.Method
	}
	if resp.StatusCode == http.StatusUnauthorized {
		e.Hint = authHint(resp.Request)
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	return e
}

// shortPath is path without its query, for messages.
func shortPath(path string) string {
	p, _, _ := strings.Cut(path, "?")
	return p
}

// GetJSON fetches path and returns its body, at most 64 MiB, once it is valid JSON.
func (c *Client) GetJSON(ctx context.Context, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := c.get(ctx, path, "application/json", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", shortPath(path), err)
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("GET %s: the answer is not JSON", shortPath(path))
	}
	return b, nil
}

// Snapshot is GET /topics/{topic}/snapshot: the latest envelope per workflow, lock and verdict, and the cursor
// they are consistent with.
type Snapshot struct {
	Topic     string                     `json:"topic"`
	Cursor    string                     `json:"cursor"`
	Workflows map[string]json.RawMessage `json:"workflows"`
	Locks     map[string]json.RawMessage `json:"locks"`
	Health    map[string]json.RawMessage `json:"health"`
	Truncated bool                       `json:"truncated"`
}

// Snapshot fetches topic's snapshot.
func (c *Client) Snapshot(ctx context.Context, topic string) (*Snapshot, error) {
	b, err := c.GetJSON(ctx, "/topics/"+url.PathEscape(topic)+"/snapshot")
	if err != nil {
		return nil, err
	}
	var s Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("snapshot of %s: %w", topic, err)
	}
	if s.Cursor == "" {
		s.Cursor = "0-0"
	}
	return &s, nil
}
