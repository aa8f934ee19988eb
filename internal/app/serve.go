package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/errgroup"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/internal/demo"
	"github.com/syncverse/hub/internal/eventschema"
	"github.com/syncverse/hub/internal/memtrim"
	"github.com/syncverse/hub/internal/server"
	"github.com/syncverse/hub/internal/tracing"
	"github.com/syncverse/hub/notify"
	"github.com/syncverse/hub/pubsub"
	"github.com/syncverse/hub/sse"
	"github.com/syncverse/hub/workflow"
)

// serve runs the hub until ctx ends, then drains it: streams end first (so clients reconnect elsewhere), then the
// HTTP server, the Redis subscriber and the Redis client. It returns only when every goroutine it started is gone.
// listening learns the URL the hub serves on once its listener is open.
func serve(ctx context.Context, fs *flag.FlagSet, args []string, getenv func(string) string, stdout, stderr io.Writer, listening func(url string)) error {
	demoOn := fs.Bool("demo", false, "run simulated agents that publish workflows on topic demo")
	cfg, err := config.Load(fs, args, getenv)
	if err != nil {
		return err
	}
	if err := errors.Join(cfg.CheckExposure(), checkEmbedded(cfg, *demoOn)); err != nil {
		return err
	}
	log := newLogger(cfg.Log, stderr)
	rdb, closeRedis, err := openRedis(cfg.Redis, *demoOn, log)
	if err != nil {
		return err
	}
	defer closeRedis()
	tr, err := tracing.Start(ctx, cfg.Tracing.Enabled, getenv, buildVersion(), log)
	if err != nil {
		return err
	}
	defer tr.ShutdownWithin(cfg.ShutdownTimeout, log) // last: the spans of the drain are flushed too
	p, err := build(cfg, rdb, log, tr.Tracer)
	if err != nil {
		return err
	}
	if err := p.listen(ctx, cfg, *demoOn, log); err != nil {
		return err
	}
	url := logListening(stdout, cfg, p.scheme, p.ln.Addr())
	log.Info().Str("addr", p.ln.Addr().String()).Str("redis", pubsub.RedactURL(cfg.Redis.URL)).Bool("demo", *demoOn).Msg("hub started")
	if *demoOn {
		log.Info().Str("url", url+"/?topic=demo").Msg("demo: simulated agents publish on topic demo; open the console")
	}
	// Built (and their metrics registered) before the hub says it listens: a scrape right after readiness sees them.
	sweeper, dispatcher := watchWorkflows(cfg, rdb, p.pub, p.reg, log)
	listening(url)

	// bg outlives ctx: the subscriber keeps feeding the hub while the streams drain, and stops last.
	bg, stopBG := context.WithCancel(context.Background())
	defer stopBG()
	g, failed := errgroup.WithContext(bg)
	g.Go(func() error { return p.sub.Run(bg, p.check.Receiving(p.hub)) })
	g.Go(func() error { return p.sec.Run(bg) }) // the identity provider's keys (auth.jwks_url)
	g.Go(func() error { return served("http server", p.serveHTTP(p.ln)) })
	if p.msrv != nil {
		g.Go(func() error { return served("metrics server", p.msrv.Serve(p.mln)) })
	}
	if *demoOn {
		g.Go(func() error { demo.Run(bg, p.pub, rdb, p.reg, log); return nil })
	}
	g.Go(func() error { return sweeper.Run(bg) })
	g.Go(func() error {
		return memtrim.Run(bg, memtrim.Config{Churn: p.events.Churn, Burst: cfg.SSE.TrimAfterBurst, Log: log, Metrics: p.trims})
	})
	g.Go(func() error { return dispatcher.Run(bg) })
	if p.presence != nil {
		g.Go(func() error { return p.presence.Run(bg) })
	}
	g.Go(func() error {
		select {
		case <-ctx.Done():
		case <-failed.Done():
		}
		defer stopBG()
		return p.shutdown(cfg.ShutdownTimeout, log)
	})
	err = g.Wait()
	log.Info().Msg("hub stopped")
	return err
}

// served turns a server's return into the group's error: ErrServerClosed is how a shutdown ends it.
func served(what string, err error) error {
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// parts is the running hub, as build wires it.
type parts struct {
	reg       *prometheus.Registry
	hub       *hub.Hub
	sub       *pubsub.Subscriber
	pub       *pubsub.Publisher
	events    *sse.Handler
	trims     *memtrim.Metrics
	sec       *server.Security
	check     *eventschema.Checker
	presence  *hub.Presence // nil: presence.enabled is off
	srv       *http.Server
	serveHTTP func(net.Listener) error
	scheme    string
	ln        net.Listener // the hub's listener
	msrv      *http.Server // the separate /metrics server of metrics.listen, or nil
	mln       net.Listener
}

// listen opens the hub's listener and, when metrics.listen asks for one, the metrics listener.
func (p *parts) listen(ctx context.Context, cfg config.Config, demo bool, log zerolog.Logger) error {
	ln, err := openListener(ctx, cfg, demo, log)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	p.msrv, p.mln, err = server.ListenMetrics(cfg, p.reg, log)
	if err != nil {
		_ = ln.Close()
		return err
	}
	p.ln = ln
	return nil
}

// build makes every part of the hub from cfg: the metrics registry, the subscriber that feeds the hub, the hub,
// the publisher, the /events handler and the HTTP edge.
func build(cfg config.Config, rdb redis.UniversalClient, log zerolog.Logger, tracer trace.Tracer) (*parts, error) {
	p := &parts{reg: prometheus.NewRegistry()}
	p.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	hm := hub.NewMetrics(p.reg)
	registerBuildInfo(p.reg)
	sec, err := server.NewSecurity(cfg, p.reg, log)
	if err != nil {
		return nil, err
	}
	sec.LogMode(log, cfg)
	p.sec = sec
	subCfg := cfg.SubscriberConfig()
	subCfg.Logger, subCfg.Registerer, subCfg.Tracer = log, p.reg, tracer
	p.sub = pubsub.NewSubscriber(rdb, subCfg)
	hubCfg := cfg.HubConfig()
	hubCfg.Metrics, hubCfg.Logger = hm, log
	p.hub = hub.New(p.sub, hubCfg)
	var presence server.PresenceReader
	if pm := pubsub.NewPresenceMetrics(p.reg); cfg.Presence.Enabled {
		store := pubsub.NewPresence(rdb, cfg.Redis.Prefix, cfg.Presence.Expiry, pm)
		p.presence = hub.NewPresence(p.hub, store, cfg.PresenceParts(replicaID()))
		presence = p.presence
	}
	p.pub = newPublisher(cfg, rdb, pubsub.NewPublishMetrics(p.reg), tracer)
	schemas, err := CompileEventSchemas()
	if err != nil {
		return nil, err
	}
	p.check = eventschema.NewChecker(schemas, cfg.Events.Validation, cfg.Events.InvalidLogLines, p.reg, log)
	evCfg := cfg.EventsConfig()
	evCfg.Logger, evCfg.Metrics, evCfg.Admit, evCfg.Authorize = log, sse.NewMetrics(p.reg), sec.AdmitStream, sec.AuthorizeStream
	p.events = sse.New(p.hub, evCfg)
	p.trims = memtrim.NewMetrics(p.reg)
	p.srv = &http.Server{
		Handler: server.New(server.Deps{Config: cfg, Redis: rdb, Publisher: p.pub, Subscriber: p.sub, Registry: p.reg,
			Logger: log, Events: p.events, Security: sec, Checker: p.check, Presence: presence, Tracer: tracer}),
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: cfg.Limits.MaxHeaderBytes,
	}
	sec.ServerHooks(p.srv, cfg.Limits.RequestReadTimeout)
	p.serveHTTP, p.scheme, err = server.ConfigureHTTP(p.srv, cfg)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// shutdown closes the hub first (which ends the streams, so clients reconnect elsewhere), then the HTTP server, the
// HTTP/1.1 streams the server no longer tracks, and the metrics listener.
func (p *parts) shutdown(timeout time.Duration, log zerolog.Logger) error {
	log.Info().Msg("shutting down: ending streams")
	p.hub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var failed error
	if err := p.srv.Shutdown(ctx); err != nil {
		_ = p.srv.Close()
		failed = fmt.Errorf("shutdown: %w", err)
	}
	if err := p.events.Shutdown(ctx); err != nil {
		failed = errors.Join(failed, fmt.Errorf("shutdown: streams: %w", err))
	}
	if p.msrv != nil {
		_ = p.msrv.Close() // scrapes are short; nothing is lost by cutting one
	}
	return failed
}

// newPublisher is the publisher of serve and of hub publish; m counts what it answers (nil: nowhere).
func newPublisher(cfg config.Config, rdb redis.UniversalClient, m *pubsub.PublishMetrics, tracer trace.Tracer) *pubsub.Publisher {
	pc := cfg.PublisherConfig()
	pc.Metrics, pc.Tracer = m, tracer
	return pubsub.NewPublisher(rdb, pc)
}

// openRedis connects to redis.url, or starts the embedded Redis-compatible server (miniredis) when it is empty, so
// the hub runs on a machine without Redis and agents or redis-cli can still publish to it.
func openRedis(cfg config.RedisConfig, demo bool, log zerolog.Logger) (redis.UniversalClient, func(), error) {
	url, stopEmbedded := cfg.URL, func() {}
	if url == "" {
		m, err := startEmbedded(cfg.EmbeddedAddr, demo, log)
		if err != nil {
			return nil, nil, fmt.Errorf("start the embedded Redis: %w", err)
		}
		log.Warn().Str("addr", m.Addr()).Msg("redis.url is empty: using the embedded Redis-compatible server (development only; nothing survives a restart)")
		url, stopEmbedded = "redis://"+m.Addr()+"/0", m.Close
	}
	rdb, err := pubsub.NewClient(url)
	if err != nil {
		stopEmbedded()
		return nil, nil, err
	}
	watchDials(rdb)
	checkRedis(rdb, url, log)
	return rdb, func() { _ = rdb.Close(); stopEmbedded() }, nil
}

// newLogger returns the process's logger; nothing else writes logs, and nothing uses zerolog's global logger.
func newLogger(cfg config.LogConfig, w io.Writer) zerolog.Logger {
	level, err := zerolog.ParseLevel(cfg.Level)
	if err != nil || cfg.Level == "" {
		level = zerolog.InfoLevel
	}
	if cfg.Format == "console" {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
	}
	return zerolog.New(w).Level(level).Hook(stamp{})
}

// replicaID names this process among the hub's replicas: its notify consumer and its presence entries.
func replicaID() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d-%d", host, os.Getpid(), time.Now().UnixNano())
}

// watchWorkflows builds the hub's judge of workflow health and the webhook dispatcher that tells the on-call.
func watchWorkflows(cfg config.Config, rdb redis.UniversalClient, pub *pubsub.Publisher, reg prometheus.Registerer,
	log zerolog.Logger) (*workflow.Sweeper, *notify.Dispatcher) {
	dispatcher := notify.New(pubsub.NewOutbox(rdb, cfg.Redis.Prefix), notify.Config{
		Webhooks: cfg.Notify.All(), Timeout: cfg.Notify.Timeout, RetryFor: cfg.Notify.RetryFor,
		BackoffMax: cfg.Notify.BackoffMax, ClaimAfter: cfg.Notify.ClaimAfter, MaxPending: cfg.Notify.MaxPending,
		MaxDataBytes: cfg.Notify.MaxDataBytes, Workers: cfg.Notify.Workers,
		Consumer: replicaID(), Metrics: notify.NewMetrics(reg),
		Log: log.With().Str("component", "notify").Logger(),
	})
	sweeper := workflow.New(pubsub.NewWorkflows(pub), dispatcher, workflow.Config{
		StallAfter: cfg.Workflows.StallAfter, Rules: cfg.Workflows.Rules, Sweep: cfg.Workflows.Sweep,
		MaxTopicWorkflows: cfg.Workflows.MaxTopicWorkflows, MaxTopicStateBytes: int64(cfg.Workflows.MaxTopicStateBytes),
		MaxWorkflows: cfg.Workflows.MaxWorkflows, Metrics: workflow.NewMetrics(reg, cfg.Workflows.MetricTopics),
		Log: log.With().Str("component", "workflows").Logger(),
	})
	return sweeper, dispatcher
}
