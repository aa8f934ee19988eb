package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/pubsub"
	"github.com/syncverse/hub/sse"
)

// loadConfig builds the configuration from defaults, the --config file, HUB_* variables and flags, in that order.
// fs may define more flags (a command's own); they are parsed too.
func loadConfig(fs *flag.FlagSet, args []string, getenv func(string) string) (Config, error) {
	cfg := defaultConfig()
	path := fs.String("config", getenv("HUB_CONFIG"), "YAML configuration `file` (unknown keys are errors)")
	listen := fs.String("listen", "", "listen `address` (overrides listen)")
	redisURL := fs.String("redis-url", "", "Redis `URL` (overrides redis.url; empty config = embedded server)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, errUsage
	}
	var errs []error
	if *path != "" {
		errs = append(errs, loadFile(&cfg, *path))
	}
	errs = append(errs, applyEnv(&cfg, getenv))
	if *listen != "" {
		cfg.Listen = *listen
	}
	if *redisURL != "" {
		cfg.Redis.URL = *redisURL
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, err
	}
	return cfg, cfg.validate()
}

// serve runs the hub until ctx ends, then drains it: streams end first (so clients reconnect elsewhere), then the
// HTTP server, the Redis subscriber and the Redis client. It returns only when every goroutine it started is gone.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	demo := fs.Bool("demo", false, "run simulated agents that publish workflows on topic demo")
	cfg, err := loadConfig(fs, args, getenv)
	if err != nil {
		return err
	}
	if err := checkExposure(cfg); err != nil {
		return err
	}
	log := newLogger(cfg.Log, stderr)
	rdb, closeRedis, err := openRedis(cfg.Redis, log)
	if err != nil {
		return err
	}
	defer closeRedis()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	hm := hub.NewMetrics(reg)
	registerBuildInfo(reg)
	sec, err := newSecurity(cfg, reg)
	if err != nil {
		return err
	}
	sec.logMode(log, cfg)
	sub := pubsub.NewSubscriber(rdb, pubsub.SubscriberConfig{
		Prefix: cfg.Redis.Prefix, MaxEventBytes: cfg.Limits.MaxEventBytes, TailCheck: cfg.Redis.TailCheck,
		Logger: log, Registerer: reg, HubMetrics: hm, Sharded: cfg.Redis.ShardedPubSub,
	})
	h := hub.New(sub, hub.Config{ClientBuffer: cfg.SSE.ClientBuffer, MaxReplay: cfg.Limits.MaxReplay, Metrics: hm})
	pub := pubsub.NewPublisher(rdb, pubsub.PublisherConfig{
		Prefix: cfg.Redis.Prefix, MaxLen: cfg.History.MaxLen, MaxAge: cfg.History.MaxAge, MaxEventBytes: cfg.Limits.MaxEventBytes,
		Sharded: cfg.Redis.ShardedPubSub,
	})
	events := sse.New(h, sse.Config{
		Heartbeat: cfg.SSE.Heartbeat, Retry: cfg.SSE.Retry, WriteTimeout: cfg.SSE.WriteTimeout,
		MaxTopics: cfg.Limits.MaxTopicsPerStream, MaxCursorBytes: cfg.Limits.MaxCursorBytes,
		MaxHistory: cfg.Limits.MaxReplay, Logger: log, Metrics: sse.NewMetrics(reg), Authorize: sec.authorizeStream,
	})
	app := &api{cfg: cfg, rdb: rdb, pub: pub, store: sub.Store, sub: sub, reg: reg, log: log, events: events,
		published: newPublishMetrics(reg), sec: sec}
	srv := &http.Server{
		Handler:           routes(app),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    cfg.Limits.MaxHeaderBytes,
	}
	serveHTTP, scheme, err := configureHTTP(srv, cfg)
	if err != nil {
		return err
	}
	ln, err := listen(ctx, cfg.Listen, cfg.SSE.WriteTimeout)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	msrv, mln, err := listenMetrics(cfg, reg, log)
	if err != nil {
		_ = ln.Close()
		return err
	}
	fmt.Fprintf(stdout, "hub listening on %s://%s\n", scheme, ln.Addr())
	log.Info().Str("addr", ln.Addr().String()).Str("redis", pubsub.RedactURL(cfg.Redis.URL)).Bool("demo", *demo).Msg("hub started")

	bg, stopBG := context.WithCancel(context.Background())
	defer stopBG()
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	wg.Go(func() { errc <- sub.Run(bg, h) })
	wg.Go(func() {
		if err := serveHTTP(ln); !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("http server: %w", err)
		}
	})
	if msrv != nil {
		wg.Go(func() {
			if err := msrv.Serve(mln); !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("metrics server: %w", err)
			}
		})
	}
	if *demo {
		wg.Go(func() { runDemo(bg, pub, rdb, reg, log) })
	}

	var failed error
	select {
	case <-ctx.Done():
	case failed = <-errc:
	}
	log.Info().Msg("shutting down: ending streams")
	h.Close()
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
		failed = errors.Join(failed, fmt.Errorf("shutdown: %w", err))
	}
	if err := events.Shutdown(sctx); err != nil { // HTTP/1.1 streams, which the HTTP server no longer tracks
		failed = errors.Join(failed, fmt.Errorf("shutdown: streams: %w", err))
	}
	if msrv != nil {
		_ = msrv.Close() // scrapes are short; nothing is lost by cutting one
	}
	stopBG()
	wg.Wait()
	log.Info().Msg("hub stopped")
	return failed
}

// listenMetrics opens the separate /metrics listener when metrics.listen asks for one. It has no auth: it is meant
// for an address only the scraper can reach, so the hub says so when it is not a loopback address.
func listenMetrics(cfg Config, reg *prometheus.Registry, log zerolog.Logger) (*http.Server, net.Listener, error) {
	if cfg.Metrics.Listen == "" {
		return nil, nil, nil
	}
	ln, err := net.Listen("tcp", cfg.Metrics.Listen)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics.listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metricsHandler(reg))
	ev := log.Info()
	if !isLoopback(cfg.Metrics.Listen) {
		ev = log.Warn().Str("note", "no auth on this listener: keep it reachable by the scraper only")
	}
	ev.Str("addr", ln.Addr().String()).Msg("metrics listening")
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: cfg.Limits.MaxHeaderBytes}, ln, nil
}

// openRedis connects to redis.url, or starts the embedded Redis-compatible server when it is empty.
func openRedis(cfg RedisConfig, log zerolog.Logger) (redis.UniversalClient, func(), error) {
	url := cfg.URL
	var stopEmbedded func()
	if url == "" {
		addr, stop, err := startEmbedded(cfg.EmbeddedAddr)
		if err != nil {
			return nil, nil, err
		}
		log.Warn().Str("addr", addr).Msg("redis.url is empty: using the embedded Redis-compatible server (development only; nothing survives a restart)")
		url, stopEmbedded = "redis://"+addr+"/0", stop
	}
	rdb, err := newRedisClient(url)
	if err != nil {
		if stopEmbedded != nil {
			stopEmbedded()
		}
		return nil, nil, err
	}
	return rdb, func() {
		_ = rdb.Close()
		if stopEmbedded != nil {
			stopEmbedded()
		}
	}, nil
}

// newRedisClient opens a client for a single server, a Cluster or a Sentinel-managed master; see pubsub.NewClient.
func newRedisClient(url string) (redis.UniversalClient, error) {
	return pubsub.NewClient(url)
}
