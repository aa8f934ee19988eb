package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/internal/config"
)

// observer counts, times and (with log.access) logs every request but the /events streams, whose figures are sse's
// (opened, closed by reason, rejected) and whose lines are sse's stream opened/closed.
type observer struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	log      zerolog.Logger
	access   bool
}

func newObserver(reg prometheus.Registerer, log zerolog.Logger, access bool) *observer {
	o := &observer{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hub_http_requests_total",
			Help: "HTTP requests answered, by route (the pattern, e.g. /topics/:topic/history; other: no route) and status code; /events streams are counted by hub_sse_*.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "hub_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route; /events streams are not timed here.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 9), // 0.5ms .. ~33s
		}, []string{"route"}),
		log: log, access: access,
	}
	reg.MustRegister(o.requests, o.duration)
	return o
}

// known makes each route's series exist from the start, at its success code.
func (o *observer) known(routes []*echo.Route) {
	for _, r := range routes {
		if r.Path == "/events" {
			continue
		}
		code := http.StatusOK
		if r.Method == http.MethodPost {
			code = http.StatusAccepted
		}
		o.requests.WithLabelValues(r.Path, strconv.Itoa(code))
		o.duration.WithLabelValues(r.Path)
	}
}

// middleware runs before routing, so a refusal before any route (CORS) is counted too.
func (o *observer) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.URL.Path == "/events" {
			return next(c)
		}
		start := time.Now()
		if err := next(c); err != nil {
			c.Error(err) // answered here, so the status below is the one sent
		}
		took := time.Since(start)
		route, resp := c.Path(), c.Response()
		if route == "" {
			route = "other"
		}
		o.requests.WithLabelValues(route, strconv.Itoa(resp.Status)).Inc()
		o.duration.WithLabelValues(route).Observe(took.Seconds())
		if o.access {
			o.log.Info().Str("method", r.Method).Str("route", route).Str("path", r.URL.Path).Int("status", resp.Status).
				Int64("bytes", resp.Size).Dur("took_ms", took).Str("remote", r.RemoteAddr).Msg("request")
		}
		return nil
	}
}

// registerLimits exposes the configured limits as gauges (0: no limit), so a saturation alert or panel divides by
// the replica's own setting instead of a constant.
func registerLimits(reg prometheus.Registerer, l config.LimitsConfig) {
	for _, g := range []struct {
		name, help string
		v          float64
	}{
		{"max_connections", "limits.max_connections: open /events streams allowed in all (0: no limit).", float64(l.MaxConnections)},
		{"max_connections_per_ip", "limits.max_connections_per_ip: open /events streams allowed per client address (0: no limit).", float64(l.MaxConnectionsPerIP)},
		{"max_event_bytes", "limits.max_event_bytes: largest event data accepted.", float64(l.MaxEventBytes)},
		{"max_body_bytes", "limits.max_body_bytes: largest POST /publish body.", float64(l.MaxBodyBytes)},
		{"max_topics_per_stream", "limits.max_topics_per_stream: topics one /events request may name.", float64(l.MaxTopicsPerStream)},
		{"max_replay", "limits.max_replay: events replayed per topic to one request before a reset.", float64(l.MaxReplay)},
		{"publish_rate", "limits.publish_rate: POST /publish events per second per token or address (0: no limit).", l.PublishRate},
		{"publish_burst", "limits.publish_burst: POST /publish burst per token or address.", float64(l.PublishBurst)},
		{"max_nonstream_connections_per_ip", "limits.max_nonstream_connections_per_ip: connections without a stream per client address (0: no limit).", float64(l.MaxNonStreamConnectionsPerIP)},
		{"connection_rate", "limits.connection_rate: new connections per second per client address (0: no limit).", l.ConnectionRate},
		{"connection_burst", "limits.connection_burst: new connections per client address at once.", float64(l.ConnectionBurst)},
		{"request_read_timeout_seconds", "limits.request_read_timeout: time to read a request's headers and body.", l.RequestReadTimeout.Seconds()},
		{"max_store_reads", "limits.max_store_reads: history reads sent to Redis at once; more wait.", float64(l.MaxStoreReads)},
		{"max_page_bytes", "limits.max_page_bytes: bytes of one history page.", float64(l.MaxPageBytes)},
		{"max_snapshot_bytes", "limits.max_snapshot_bytes: bytes of one snapshot answer.", float64(l.MaxSnapshotBytes)},
		{"max_topics_listed", "limits.max_topics_listed: topics one GET /topics lists.", float64(l.MaxTopicsListed)},
	} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hub_limits_" + g.name, Help: g.help},
			func() float64 { return g.v }))
	}
}
