package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/internal/eventschema"
	"github.com/syncverse/hub/limits"
	"github.com/syncverse/hub/pubsub"
)

// api holds what the JSON routes need.
type api struct {
	cfg       config.Config
	rdb       redis.UniversalClient
	pub       *pubsub.Publisher
	store     *pubsub.History
	sub       *pubsub.Subscriber
	reg       *prometheus.Registry
	log       zerolog.Logger
	events    http.Handler
	published *prometheus.CounterVec
	// listTruncated counts GET /topics answers cut short, by reason.
	listTruncated *prometheus.CounterVec
	sec           *Security
	obs           *observer
	check         *eventschema.Checker
	probe         *pinger        // /readyz's PING, one at a time
	presenceOf    PresenceReader // nil: presence is off
	tracer        trace.Tracer   // nil: tracing off
}

func newPublishMetrics(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hub_http_publish_total", Help: "POST /publish requests, by outcome (ok, duplicate: an idempotency key seen before, conflict: the publisher's key seen before with other content, invalid, too_large, unavailable).",
	}, []string{"outcome"})
	for _, o := range []string{"ok", "duplicate", "conflict", "invalid", "too_large", "unavailable"} {
		c.WithLabelValues(o)
	}
	reg.MustRegister(c)
	return c
}

type publishBody struct {
	Topic          string          `json:"topic"`
	Type           string          `json:"type"`
	Data           json.RawMessage `json:"data"`
	IdempotencyKey string          `json:"idempotency_key"`
}

// publishAnswer is POST /publish's 202: the event's id, and for a key seen before, the first event's id and
// "duplicate": true (nothing was stored or delivered again). Warnings are what docs/schemas says of the data in
// events.validation: warn ("progress: 40 is not between 0 and 1"): the event was stored all the same.
type publishAnswer struct {
	ID        string   `json:"id"`
	Duplicate bool     `json:"duplicate,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
}

// idempotencyKey is the request's key: the Idempotency-Key header (an RFC 8941 string, quoted or not) or the body's
// idempotency_key; both may be given only when they agree.
func idempotencyKey(r *http.Request, in publishBody) (string, error) {
	h := r.Header.Get("Idempotency-Key")
	if len(h) >= 2 && h[0] == '"' && h[len(h)-1] == '"' {
		h = h[1 : len(h)-1]
	}
	switch {
	case h != "" && in.IdempotencyKey != "" && h != in.IdempotencyKey:
		return "", errors.New("the Idempotency-Key header and the body's idempotency_key differ")
	case h != "":
		return h, nil
	default:
		return in.IdempotencyKey, nil
	}
}

// publish is POST /publish: the same validation and script as every other publisher.
func (a *api) publish(c echo.Context) error {
	r := c.Request()
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, int64(a.cfg.Limits.MaxBodyBytes)))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		a.published.WithLabelValues("too_large").Inc()
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", tooBig.Limit))
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return a.sec.refuse(c, &limits.Refusal{Code: http.StatusRequestTimeout, Reason: limits.ReasonReadTimeout,
			Msg: fmt.Sprintf("request body not received within %v (limits.request_read_timeout)", a.cfg.Limits.RequestReadTimeout)})
	}
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "read body: "+err.Error())
	}
	in, err := parsePublishBody(body)
	var key string
	if err == nil {
		key, err = idempotencyKey(r, in)
	}
	if err != nil {
		a.published.WithLabelValues("invalid").Inc()
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	if err := a.sec.checkPublish(c, in.Topic); err != nil {
		return err
	}
	warnings, err := a.checkData(in)
	if err != nil {
		a.published.WithLabelValues("invalid").Inc()
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	if a.tracer != nil {
		trace.SpanFromContext(r.Context()).SetAttributes(topicAttr(in.Topic))
	}
	// Keys are the token subject's own: another publisher's key of the same name is another record.
	res, err := a.pub.PublishMessage(r.Context(), pubsub.Message{Topic: in.Topic, Type: in.Type, Data: in.Data,
		IdempotencyKey: key, Publisher: identity(c).Subject, TraceParent: a.traceParent(c)})
	switch {
	case err == nil && res.Duplicate:
		a.published.WithLabelValues("duplicate").Inc()
		return c.JSON(http.StatusAccepted, publishAnswer{ID: res.ID, Duplicate: true, Warnings: warnings})
	case err == nil:
		a.published.WithLabelValues("ok").Inc()
		return c.JSON(http.StatusAccepted, publishAnswer{ID: res.ID, Warnings: warnings})
	case errors.Is(err, pubsub.ErrConflict):
		a.published.WithLabelValues("conflict").Inc()
		return echo.NewHTTPError(http.StatusConflict, "idempotency key "+strconv.Quote(key)+" was used within history.idempotency_ttl for an event of other type or data; nothing was stored")
	case errors.Is(err, pubsub.ErrTooLarge):
		a.published.WithLabelValues("too_large").Inc()
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge, err.Error())
	case errors.Is(err, pubsub.ErrInvalid), errors.Is(err, hub.ErrBadTopic), errors.Is(err, hub.ErrBadType):
		a.published.WithLabelValues("invalid").Inc()
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	default:
		a.published.WithLabelValues("unavailable").Inc()
		return a.redisUnavailable(c, err)
	}
}

// checkData holds an event's data to its type's schema (events.validation), once the event is otherwise one the
// publisher takes: a reserved type or a bad topic is refused for that, in the publisher's words, not for its data.
func (a *api) checkData(in publishBody) ([]string, error) {
	if pubsub.Validate(in.Topic, in.Type, in.Data, a.cfg.Limits.MaxEventBytes) != nil {
		return nil, nil
	}
	return a.check.Publish(in.Topic, in.Type, in.Data)
}

// parsePublishBody reads a POST /publish body: exactly one JSON object with the known fields and a data value. The
// topic, type and data rules are checked afterwards by the publisher, like every other publisher's.
func parsePublishBody(body []byte) (publishBody, error) {
	var in publishBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(&in)
	if err == nil {
		_, err = dec.Token()
		if err == io.EOF {
			err = nil
		} else if err == nil {
			err = errors.New("trailing data after the object")
		}
	}
	if err != nil {
		return in, fmt.Errorf(`body must be one JSON object {"topic","type","data","idempotency_key"}: %w`, err)
	}
	if in.Data == nil {
		return in, errors.New("missing data")
	}
	return in, nil
}

// topics is GET /topics: the topics the identity may subscribe to that have a stream, most recently active first,
// bounded. The grant chooses what Redis is asked about, so a narrow grant costs little however many topics exist.
func (a *api) topics(c echo.Context) error {
	q := grantTopics(identity(c).Grant.Subscribe)
	q.Limit, q.ScanKeys = a.cfg.Limits.MaxTopicsListed, a.cfg.Limits.MaxTopicsScanKeys
	found, err := a.store.Topics(c.Request().Context(), q)
	if err != nil {
		return a.redisUnavailable(c, err)
	}
	if found.Truncated != "" {
		a.listTruncated.WithLabelValues(found.Truncated).Inc()
	}
	list := a.sec.visibleTopics(c, found.Topics)
	if list == nil {
		list = []pubsub.TopicInfo{}
	}
	return c.JSON(http.StatusOK, map[string]any{"topics": list, "truncated": found.Truncated != ""})
}

// grantTopics turns subscribe patterns into what the store lists: "*" every topic, "p*" a prefix, else one topic.
func grantTopics(patterns []string) pubsub.TopicQuery {
	var q pubsub.TopicQuery
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); !ok {
			q.Names = append(q.Names, p)
		} else if prefix == "" {
			q.All = true
		} else {
			q.Prefixes = append(q.Prefixes, prefix)
		}
	}
	return q
}

func newTopicsMetrics(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hub_http_topics_truncated_total",
		Help: "GET /topics answers cut short, by reason: limit (limits.max_topics_listed) or scan (limits.max_topics_scan_keys).",
	}, []string{"reason"})
	for _, r := range []string{"limit", "scan"} {
		c.WithLabelValues(r)
	}
	reg.MustRegister(c)
	return c
}

// history is GET /topics/{topic}/history?after=ID&limit=N.
func (a *api) history(c echo.Context) error {
	topic := pathTopic(c)
	if err := hub.ValidateTopic(topic); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	after := hub.ID{}
	if v := c.QueryParam("after"); v != "" {
		id, err := hub.ParseID(v)
		if err != nil {
			return echo.NewHTTPError(http.StatusBadRequest, "after: "+err.Error())
		}
		after = id
	}
	limit := 100
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > a.cfg.Limits.MaxHistoryQuery {
			return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("limit must be 1..%d", a.cfg.Limits.MaxHistoryQuery))
		}
		limit = n
	}
	evs, more, err := a.store.Read(c.Request().Context(), topic, after, limit)
	if err == nil && len(evs) == 0 && !after.IsZero() {
		err = a.checkAfter(c.Request().Context(), topic, after)
	}
	if err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return he
		}
		return a.redisUnavailable(c, err)
	}
	out := make([]pubsub.Envelope, len(evs))
	next := after.String()
	for i, ev := range evs {
		out[i] = pubsub.Envelope{ID: ev.IDText, Prev: ev.Prev.String(), Type: ev.Type, Trace: ev.TraceParent, Data: ev.Data}
		next = ev.IDText
	}
	return c.JSON(http.StatusOK, map[string]any{"topic": topic, "events": out, "next": next, "more": more})
}

// checkAfter refuses a position past the topic's newest event: no event ever had it, or Redis lost the events up to
// it (history-lost); either way paging on from it would wait for ids that may never come.
func (a *api) checkAfter(ctx context.Context, topic string, after hub.ID) error {
	newest, err := a.store.Newest(ctx, topic)
	if err != nil {
		return err
	}
	if newest.Less(after) {
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf(
			"after: %s is past the topic's newest event (%s): history-lost, reload the snapshot", after, newest))
	}
	return nil
}

// snapshot is GET /topics/{topic}/snapshot: the console's first paint, consistent with its cursor.
func (a *api) snapshot(c echo.Context) error {
	topic := pathTopic(c)
	if err := hub.ValidateTopic(topic); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	snap, err := a.store.Snapshot(c.Request().Context(), topic)
	if err != nil {
		return a.redisUnavailable(c, err)
	}
	return c.JSON(http.StatusOK, snap)
}

func (a *api) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz is 200 only while Redis answers and the live subscription is up.
func (a *api) readyz(c echo.Context) error {
	if err := a.probe.ping(readyWithin); err != nil {
		return a.redisUnavailable(c, err)
	}
	if !a.sub.Ready() {
		c.Response().Header().Set("Retry-After", retryRedis)
		return echo.NewHTTPError(http.StatusServiceUnavailable, "redis pub/sub subscription is down")
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
}
