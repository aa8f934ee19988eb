package server

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/internal/eventschema"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/internal/tracing"
	"github.com/syncverse/hub/pubsub"
	"github.com/syncverse/hub/sse"
)

// edge is the HTTP edge under test: New over the real parts (a subscriber on a real Redis, the hub, the sse
// handler) served by httptest, without run. env holds HUB_* settings as a deployment would give them.
type edge struct {
	URL    string // http://127.0.0.1:PORT
	Addr   string
	Prefix string
	RDB    *redis.Client
	Pub    *pubsub.Publisher
	// Tracing is the edge's tracing: on with HUB_TRACING_ENABLED=true, exporting to the OTEL_* of env.
	Tracing *tracing.Tracing
	logs    *rig.SyncBuffer // the edge's warnings and errors, one JSON object a line
}

func newEdge(t testing.TB, rs *rig.Redis, env ...string) *edge {
	t.Helper()
	return newEdgeOn(t, rs.Client(), env...)
}

// newEdgeOn is newEdge on a client of the test's making (a Redis behind a proxy that stalls, one that is down).
func newEdgeOn(t testing.TB, rdb *redis.Client, env ...string) *edge {
	t.Helper()
	e := &edge{Prefix: fmt.Sprintf("s%d", time.Now().UnixNano()), RDB: rdb, logs: &rig.SyncBuffer{}}
	vars := rig.WithEnv(map[string]string{"HUB_REDIS_PREFIX": e.Prefix}, env)
	fs := flag.NewFlagSet("edge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg, err := config.Load(fs, nil, func(k string) string { return vars[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	reg, log := prometheus.NewRegistry(), zerolog.New(e.logs).Level(zerolog.WarnLevel)
	schemas, err := eventschema.Compile(os.DirFS("../../docs/schemas")) // what main embeds
	if err != nil {
		t.Fatalf("event schemas: %v", err)
	}
	check := eventschema.NewChecker(schemas, cfg.Events.Validation, cfg.Events.InvalidLogLines, reg, log)
	hm := hub.NewMetrics(reg)
	sec, err := NewSecurity(cfg, reg, log)
	if err != nil {
		t.Fatalf("NewSecurity: %v", err)
	}
	tr, err := tracing.Start(context.Background(), cfg.Tracing.Enabled, func(k string) string { return vars[k] }, "test", log)
	if err != nil {
		t.Fatalf("tracing: %v", err)
	}
	e.Tracing = tr
	t.Cleanup(func() { tr.ShutdownWithin(5*time.Second, log) })
	subCfg := cfg.SubscriberConfig() // as serve builds them
	subCfg.Logger, subCfg.Registerer, subCfg.Tracer = log, reg, tr.Tracer
	sub := pubsub.NewSubscriber(e.RDB, subCfg)
	hubCfg := cfg.HubConfig()
	hubCfg.Metrics = hm
	h := hub.New(sub, hubCfg)
	pubCfg := cfg.PublisherConfig()
	pubCfg.Tracer = tr.Tracer
	pub := pubsub.NewPublisher(e.RDB, pubCfg)
	e.Pub = pub
	evCfg := cfg.EventsConfig()
	evCfg.Logger, evCfg.Metrics, evCfg.Admit, evCfg.Authorize = log, sse.NewMetrics(reg), sec.AdmitStream, sec.AuthorizeStream
	events := sse.New(h, evCfg)
	var presence PresenceReader
	var tracker *hub.Presence
	if pm := pubsub.NewPresenceMetrics(reg); cfg.Presence.Enabled { // as serve builds it
		tracker = hub.NewPresence(h, pubsub.NewPresence(e.RDB, cfg.Redis.Prefix, cfg.Presence.Expiry, pm), cfg.PresenceParts(e.Prefix))
		presence = tracker
	}
	srv := httptest.NewUnstartedServer(New(Deps{Config: cfg, Redis: e.RDB, Publisher: pub, Subscriber: sub, Registry: reg,
		Logger: log, Events: events, Security: sec, Checker: check, Presence: presence, Tracer: tr.Tracer}))
	srv.Config.MaxHeaderBytes = cfg.Limits.MaxHeaderBytes
	sec.ServerHooks(srv.Config, cfg.Limits.RequestReadTimeout)
	srv.Start()
	e.URL, e.Addr = srv.URL, strings.TrimPrefix(srv.URL, "http://")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = sub.Run(ctx, check.Receiving(h)) })
	wg.Go(func() { _ = sec.Run(ctx) })
	if tracker != nil {
		wg.Go(func() { _ = tracker.Run(ctx) })
	}
	t.Cleanup(func() { // the order of serve's shutdown: streams end first
		h.Close()
		srv.Close()
		sctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
		defer stop()
		if err := events.Shutdown(sctx); err != nil {
			t.Errorf("sse Shutdown: %v", err)
		}
		cancel()
		wg.Wait()
	})
	return e
}

// StreamKey is the Redis key of topic's history.
func (e *edge) StreamKey(topic string) string { return pubsub.Keys{Prefix: e.Prefix}.Stream(topic) }

// xlen returns the length of topic's stream, failing the test when Redis does not answer (0 for an error would
// pass every "nothing was published" check).
func (e *edge) xlen(t testing.TB, topic string) int64 {
	t.Helper()
	n, err := e.RDB.XLen(context.Background(), e.StreamKey(topic)).Result()
	if err != nil {
		t.Fatalf("XLEN %s: %v", e.StreamKey(topic), err)
	}
	return n
}

// publish publishes through the Go Publisher and returns the id.
func (e *edge) publish(t testing.TB, topic, typ, data string) string {
	t.Helper()
	id, err := e.Pub.Publish(context.Background(), topic, typ, []byte(data))
	if err != nil {
		t.Fatalf("Publish(%s, %s) = %v", topic, data, err)
	}
	return id
}
