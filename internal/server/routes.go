package server

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/internal/eventschema"
	"github.com/syncverse/hub/pubsub"
	"github.com/syncverse/hub/web"
)

// Deps is what the edge serves: main builds each part and hands it over.
type Deps struct {
	Config     config.Config
	Redis      redis.UniversalClient // pinged by /readyz
	Publisher  *pubsub.Publisher     // POST /publish
	Subscriber *pubsub.Subscriber    // history, snapshots and topic lists, and /readyz's subscription check
	Registry   *prometheus.Registry  // served on /metrics (unless metrics.listen takes it elsewhere)
	Logger     zerolog.Logger
	// Events is GET /events, the sse handler; its Admit is Security.AdmitStream and its Authorize
	// Security.AuthorizeStream.
	Events   http.Handler
	Security *Security
	// Checker (required) holds POST /publish's data to docs/schemas (events.validation); main also wraps the hub
	// the subscriber feeds with its Receiving, which the edge does not see.
	Checker *eventschema.Checker
	// Presence answers GET /topics/{topic}/presence; nil when presence.enabled is off (404).
	Presence PresenceReader
	// Tracer, when not nil (tracing.enabled), makes POST /publish a server span, a child of its traceparent.
	Tracer trace.Tracer
}

// New returns the hub's HTTP edge: every route, the auth and limit middleware, JSON errors. The server that serves
// it takes the connection-level limits and the read deadline from Security.ServerHooks. It registers the edge's
// metrics with d.Registry, the configured limits among them.
func New(d Deps) http.Handler {
	registerLimits(d.Registry, d.Config.Limits)
	return d.Security.guard(routes(&api{
		cfg: d.Config, rdb: d.Redis, pub: d.Publisher, store: d.Subscriber.History, sub: d.Subscriber, reg: d.Registry,
		log: d.Logger, events: d.Events, published: newPublishMetrics(d.Registry),
		listTruncated: newTopicsMetrics(d.Registry), sec: d.Security, check: d.Checker, tracer: d.Tracer,
		obs: newObserver(d.Registry, d.Logger, d.Config.Log.Access), probe: &pinger{rdb: d.Redis}, presenceOf: d.Presence,
	}))
}

// routes lists every route of the hub in one place. GET /events goes to the sse handler ahead of echo, so no echo
// context outlives a request (an HTTP/1.1 stream outlives its handler); its edge checks run through
// sse.Config.Admit (Security.AdmitStream) and its credentials through sse.Config.Authorize, once the topics are known.
// Probes and the console's static files are open; everything else that shows or changes events needs credentials.
func routes(a *api) http.Handler {
	e := echoRoutes(a)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.URL.Path == "/events" {
			a.events.ServeHTTP(w, r)
			return
		}
		e.ServeHTTP(w, r)
	})
}

func echoRoutes(a *api) *echo.Echo {
	sec := a.sec
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = jsonErrors
	e.Pre(unreadBodies, a.obs.middleware, sec.crossOrigin)
	get := func(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) { // HEAD works wherever GET does
		e.Match([]string{http.MethodGet, http.MethodHead}, path, h, m...)
	}
	e.POST("/publish", a.publish, a.traced, sec.authenticate, sec.limitPublish)
	get("/topics", a.topics, sec.authenticate)
	get("/topics/:topic/history", a.history, sec.authenticate, sec.authorizeTopic)
	get("/topics/:topic/snapshot", a.snapshot, sec.authenticate, sec.authorizeTopic)
	get("/topics/:topic/presence", a.presence, sec.authenticate, sec.authorizeTopic)
	if a.cfg.Metrics.Listen == "" {
		get("/metrics", echo.WrapHandler(MetricsHandler(a.reg)), sec.authenticate)
	}
	ss := newSessions(a.cfg, sec)
	e.POST("/auth/session", ss.create)
	get("/auth/session", ss.show)
	e.DELETE("/auth/session", ss.remove)
	get("/healthz", a.healthz)
	get("/readyz", a.readyz)
	get("/*", echo.WrapHandler(web.Handler()))
	a.obs.known(e.Routes())
	return e
}

// MetricsHandler serves reg's metrics in Prometheus text format.
func MetricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}

// jsonErrors answers every error with the contract's {"error": "..."} body and the error's status.
func jsonErrors(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, msg := http.StatusInternalServerError, "internal error"
	var he *echo.HTTPError
	if errors.As(err, &he) {
		status = he.Code
		if m, ok := he.Message.(string); ok {
			msg = m
		} else {
			msg = http.StatusText(status)
		}
	}
	dropBody(c.Response(), c.Request())
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	_ = c.JSON(status, map[string]string{"error": msg})
}

// ListenMetrics opens the separate /metrics listener when metrics.listen asks for one. It has no auth: it is meant
// for an address only the scraper can reach, so the hub says so when it is not a loopback address.
func ListenMetrics(cfg config.Config, reg *prometheus.Registry, log zerolog.Logger) (*http.Server, net.Listener, error) {
	if cfg.Metrics.Listen == "" {
		return nil, nil, nil
	}
	ln, err := net.Listen("tcp", cfg.Metrics.Listen)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics.listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", MetricsHandler(reg))
	ev := log.Info()
	if !config.IsLoopback(cfg.Metrics.Listen) {
		ev = log.Warn().Str("note", "no auth on this listener: keep it reachable by the scraper only")
	}
	ev.Str("addr", ln.Addr().String()).Msg("metrics listening")
	return &http.Server{Handler: mux, ReadTimeout: cfg.Limits.RequestReadTimeout, IdleTimeout: 2 * time.Minute,
		MaxHeaderBytes: cfg.Limits.MaxHeaderBytes}, ln, nil
}
