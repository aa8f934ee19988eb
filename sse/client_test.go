package sse

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/hub/hubtest"
	"github.com/syncverse/hub/internal/rig"
)

// transport is a way a client reaches the handler. Every stream test runs over each: the raw engine takes HTTP/1.1
// over plain TCP; net/http keeps it when the engine is off, and always keeps HTTP/2 (over TLS, or h2c behind a
// proxy).
type transport struct {
	name     string
	noDetach bool
	proto    int // the response's ProtoMajor
	start    func(h http.Handler) (*httptest.Server, *http.Client)
}

var (
	rawHTTP1 = transport{name: "raw-http1", proto: 1, start: startPlain}
	netHTTP1 = transport{name: "nethttp-http1", noDetach: true, proto: 1, start: startPlain}
	http2TLS = transport{name: "http2-tls", proto: 2, start: func(h http.Handler) (*httptest.Server, *http.Client) {
		srv := httptest.NewUnstartedServer(h)
		srv.EnableHTTP2 = true
		srv.StartTLS()
		return srv, srv.Client()
	}}
	h2c = transport{name: "h2c", proto: 2, start: func(h http.Handler) (*httptest.Server, *http.Client) {
		srv := httptest.NewUnstartedServer(h)
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Start()
		tr := &http.Transport{Protocols: new(http.Protocols)}
		tr.Protocols.SetUnencryptedHTTP2(true)
		return srv, &http.Client{Transport: tr}
	}}
	transports = []transport{rawHTTP1, netHTTP1, http2TLS, h2c}
)

func startPlain(h http.Handler) (*httptest.Server, *http.Client) {
	srv := httptest.NewServer(h)
	return srv, &http.Client{Transport: &http.Transport{}}
}

// overTransports runs test once per transport, as a subtest.
func overTransports(t *testing.T, test func(t *testing.T, tr transport)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) { test(t, tr) })
	}
}

// env is a hub with an in-memory store behind an /events handler on a real HTTP server.
type env struct {
	store  *hubtest.Store
	hub    *hub.Hub
	srv    *httptest.Server
	hd     *Handler
	client *http.Client
	tr     transport
}

// newEnv serves the handler over raw HTTP/1.1, the transport of the raw engine's own tests.
func newEnv(t *testing.T, cfg Config) *env { return newEnvOver(t, rawHTTP1, hub.Config{}, cfg) }

func newEnvOver(t *testing.T, tr transport, hcfg hub.Config, cfg Config) *env {
	t.Helper()
	st := hubtest.NewStore()
	h := hub.New(st, hcfg)
	cfg.NoDetach = tr.noDetach
	hd := New(h, cfg)
	srv, client := tr.start(hd)
	e := &env{store: st, hub: h, srv: srv, hd: hd, client: client, tr: tr}
	t.Cleanup(func() {
		h.Close() // ends the streams, so the server can close
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hd.Shutdown(ctx); err != nil {
			t.Errorf("streams still open 5s after the hub closed: %v", err)
		}
		client.CloseIdleConnections()
	})
	return e
}

func (e *env) get(t *testing.T, query string, header http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+"/events?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatalf("GET /events?%s: %v", query, err)
	}
	if resp.ProtoMajor != e.tr.proto {
		t.Fatalf("GET /events?%s over %s came back as %s", query, e.tr.name, resp.Proto)
	}
	return resp
}

// open opens a stream that must answer 200, read by the tests' one SSE client.
func (e *env) open(t *testing.T, query string, lastEventID string) *rig.Stream {
	t.Helper()
	h := http.Header{}
	if lastEventID != "" {
		h.Set("Last-Event-ID", lastEventID)
	}
	resp := e.get(t, query, h)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET /events?%s (Last-Event-ID %q) = %d %s, want 200", query, lastEventID, resp.StatusCode, b)
	}
	return rig.ReadStream(t, resp)
}

func retryMillis(t *testing.T, f rig.Frame) time.Duration {
	t.Helper()
	n, err := strconv.Atoi(f.Retry)
	if err != nil {
		t.Fatalf("frame %+v is not a retry hint", f)
	}
	return time.Duration(n) * time.Millisecond
}
