package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/limits"
	"github.com/syncverse/hub/pubsub"
)

// guards hold the limits that act before a request reaches a route: per-address connection bounds (at accept), the
// shape of a request (no GET with a body) and, in anonymous mode, the Host allow-list against DNS rebinding.
type guards struct {
	peers    *limits.Peers
	connRate *limits.Rate  // new connections and streams per address; shared by peers and AdmitStream
	hosts    *limits.Hosts // nil: any Host (credentials are required, so a rebound page gets nothing)
}

func (e *guards) init(cfg config.Config, s *Security) error {
	e.connRate = limits.NewConnRate(cfg.Limits.ConnectionRate, cfg.Limits.ConnectionBurst)
	e.peers = limits.NewPeers(cfg.Limits.MaxNonStreamConnectionsPerIP, e.connRate, s.proxies,
		func(reason string) { s.rejected.WithLabelValues(reason).Inc() })
	hosts, err := limits.NewHosts(cfg.Auth.AllowedHosts)
	if err != nil {
		return err
	}
	if s.authn.Anonymous {
		e.hosts = hosts
	}
	return nil
}

// serverHooks wires the connection-level limits and the read deadline into srv. ReadTimeout bounds the headers and
// body of every request. It never cuts a running stream: net/http lifts it once a request's body has been read (a
// GET has none) to watch the connection for the client leaving, and HTTP/2 applies it to request bodies only.
func (s *Security) ServerHooks(srv *http.Server, readTimeout time.Duration) {
	srv.ReadHeaderTimeout = readTimeout
	srv.ReadTimeout = readTimeout
	srv.ConnState = s.peers.ConnState
	srv.ConnContext = s.peers.ConnContext
}

// guard refuses, before routing, what no route may get: a GET or HEAD with a body (its sender would hold the
// connection until the read deadline), and in anonymous mode a Host name that is neither localhost nor allowed. The
// probes answer any Host: an orchestrator calls them by the pod's address.
func (s *Security) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var err error
		switch {
		case (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.ContentLength != 0:
			err = &limits.Refusal{Code: http.StatusBadRequest, Reason: limits.ReasonGetBody,
				Msg: "a " + r.Method + " request takes no body"}
		case s.hosts != nil && r.URL.Path != "/healthz" && r.URL.Path != "/readyz":
			err = s.hosts.Check(r.Host)
		}
		if err == nil {
			next.ServeHTTP(w, r)
			return
		}
		s.count(r, nil, err)
		ref := refusal{err}
		ref.SetHeaders(w.Header())
		writeJSONError(w, r, ref.Status(), err.Error())
	})
}

// writeJSONError answers outside echo with the contract's {"error": "..."} body.
func writeJSONError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	dropBody(w, r)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
	}
}

// dropBody lets a refused request go without reading the rest of its body: net/http would otherwise read it, up to
// 256 KiB, before answering or reusing the connection, and a client that declared a body and never sends it would
// hold the connection until the read deadline. The connection closes after the answer instead.
func dropBody(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 {
		return
	}
	if r.ProtoMajor == 1 {
		w.Header().Set("Connection", "close")
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

// pathTopic is the route's {topic}, percent-decoded once (wf%3A7 is wf:7, as encodeURIComponent sends it). Echo
// routes on the escaped path when it differs from the default encoding, and on the decoded one otherwise, which
// must not be decoded twice.
func pathTopic(c echo.Context) string {
	t := c.Param("topic")
	if c.Request().URL.RawPath == "" {
		return t
	}
	if d, err := url.PathUnescape(t); err == nil {
		return d
	}
	return t // refused as a topic: '%' is no topic character
}

// retryRedis is the Retry-After of a 503 while Redis is unreachable: the client library's reconnect takes about
// this long.
const retryRedis = "2"

// redisUnavailable answers a request that Redis failed: the client learns that Redis is unavailable and when to
// retry, never its address or error text, which go to the log.
func (a *api) redisUnavailable(c echo.Context, err error) error {
	a.log.Warn().Err(err).Str("route", c.Path()).Msg("redis unavailable")
	c.Response().Header().Set("Retry-After", retryRedis)
	if errors.Is(err, pubsub.ErrSlotMigrating) {
		return echo.NewHTTPError(http.StatusServiceUnavailable, "redis unavailable: the topic's slot is being migrated; retry with the same Idempotency-Key")
	}
	return echo.NewHTTPError(http.StatusServiceUnavailable, "redis unavailable")
}

// unreadBodies lets every request go without the rest of a body its handler did not read (DELETE /auth/session, an
// OPTIONS that is no preflight, a 404 with a body): when the answer's header is written and the body has not been
// read to its end, the connection is closed after the answer instead of net/http reading the body first, which for
// a declared body that never comes would hold the answer until limits.request_read_timeout.
func unreadBodies(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			return next(c)
		}
		body := &watchedBody{ReadCloser: r.Body}
		r.Body = body
		w := c.Response().Writer
		c.Response().Before(func() {
			if !body.done.Load() {
				dropBody(w, r)
			}
		})
		return next(c)
	}
}

// watchedBody notes when its reader has seen the body's end.
type watchedBody struct {
	io.ReadCloser
	done atomic.Bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.done.Store(true) // EOF, or a failure after which there is nothing more to wait for
	}
	return n, err
}
