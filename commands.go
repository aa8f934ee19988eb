package main

// The commands other than serve, one function each, named <name>Command; main.go's run switches between them.

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/internal/bench"
	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/internal/demo"
	"github.com/syncverse/hub/internal/dispatch"
	"github.com/syncverse/hub/pubsub"
)

// publishCommand is `hub publish`: one event through the publish script, data from --data or stdin.
func publishCommand(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("publish", flag.ContinueOnError)
	fs.SetOutput(stderr)
	topic := fs.String("topic", "", "topic to publish on (required)")
	typ := fs.String("type", "progress", "event type")
	data := fs.String("data", "", "event data: one JSON value (read from stdin when empty)")
	key := fs.String("idempotency-key", "", "the event's idempotency key: the same key again stores nothing (default: a fresh one)")
	verbose := fs.Bool("verbose", false, "print the idempotency key and the retries on stderr")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: hub publish --topic T [--type progress] [--data JSON] [--idempotency-key K] [--verbose]   (data on stdin when --data is absent)")
		fs.PrintDefaults()
	}
	cfg, err := config.Load(fs, args, getenv)
	if err != nil {
		return err
	}
	if *topic == "" {
		fmt.Fprintln(stderr, "hub publish: --topic is required")
		fs.Usage()
		return errUsage
	}
	body := []byte(*data)
	if *data == "" {
		if body, err = io.ReadAll(io.LimitReader(stdin, int64(cfg.Limits.MaxEventBytes)+1)); err != nil {
			return fmt.Errorf("read data from stdin: %w", err)
		}
		body = []byte(strings.TrimSpace(string(body)))
	}
	url := cfg.Redis.URL
	if url == "" {
		url = "redis://" + cfg.Redis.EmbeddedAddr + "/0" // the embedded server of a hub running with defaults
	}
	rdb, err := pubsub.NewClient(url)
	if err != nil {
		return err
	}
	defer rdb.Close()
	if *key == "" {
		*key = rand.Text() // a retry inside this run (through a failover) is then safe
	}
	pub := newPublisher(cfg, rdb, nil)
	ctx, cancel := context.WithTimeout(ctx, cfg.Redis.PublishRetry+10*time.Second)
	defer cancel()
	res, err := pub.PublishMessage(ctx, pubsub.Message{Topic: *topic, Type: *typ, Data: body, IdempotencyKey: *key})
	if *verbose {
		fmt.Fprintf(stderr, "hub publish: idempotency key %s, %d retries\n", *key, res.Retries)
	}
	if err != nil {
		return err
	}
	if res.Duplicate {
		fmt.Fprintf(stderr, "hub publish: key %s was published before as %s; nothing stored now\n", *key, res.ID)
	}
	fmt.Fprintln(stdout, res.ID)
	return nil
}

// demoCommand is `hub demo`: the simulated agents of `serve --demo`, on their own against redis.url, so a hub
// elsewhere (the compose trial's) shows workflows moving at once.
func demoCommand(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, err := config.Load(fs, args, getenv)
	if err != nil {
		return err
	}
	if cfg.Redis.URL == "" {
		return errors.New("hub demo: redis.url (HUB_REDIS_URL) is empty; point it at the Redis the hub reads")
	}
	log := newLogger(cfg.Log, stderr)
	rdb, err := pubsub.NewClient(cfg.Redis.URL)
	if err != nil {
		return err
	}
	defer rdb.Close()
	log.Info().Str("redis", pubsub.RedactURL(cfg.Redis.URL)).Str("topic", demo.Topic).Msg("demo agents publishing")
	demo.Run(ctx, newPublisher(cfg, rdb, nil), rdb, nil, log)
	return nil
}

// healthcheckCommand is `hub healthcheck`, the container's HEALTHCHECK: exit 0 when /healthz answers 200.
func healthcheckCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "health URL (default: http://<listen>/healthz)")
	timeout := fs.Duration("timeout", 2*time.Second, "give up after this long")
	cfg, err := config.Load(fs, args, getenv)
	if err != nil {
		return err
	}
	local := *url == ""
	if local {
		host, port, err := net.SplitHostPort(cfg.Listen)
		if err != nil {
			return fmt.Errorf("listen %q: %w", cfg.Listen, err)
		}
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		scheme := "http"
		if cfg.TLS.CertFile != "" {
			scheme = "https"
		}
		*url = scheme + "://" + net.JoinHostPort(host, port) + "/healthz"
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return err
	}
	// Probing its own listen address, the hub checks liveness, not identity: the certificate names the public host,
	// not the loopback address.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: local}}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck %s: %w", *url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck %s: %s", *url, resp.Status)
	}
	fmt.Fprintln(stdout, "ok")
	return nil
}

// dispatchCommand is `hub dispatch-test`, the lease verification (package dispatch).
func dispatchCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg := config.Default()
	if err := config.ApplyEnv(&cfg, getenv); err != nil {
		return err
	}
	err := dispatch.Command(ctx, args, stdout, stderr, cfg.Redis.URL)
	if errors.Is(err, dispatch.ErrUsage) {
		return errUsage
	}
	return err
}

// benchCommand runs the load generator (package bench); see BENCHMARKS.md for the scenarios it measures.
func benchCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := bench.Command(ctx, args, stdout, stderr)
	if errors.Is(err, bench.ErrUsage) {
		return errUsage
	}
	return err
}

// patterns is a repeatable flag; each use may also hold a comma-separated list.
type patterns []string

func (p *patterns) String() string { return strings.Join(*p, ",") }

func (p *patterns) Set(v string) error {
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*p = append(*p, s)
		}
	}
	return nil
}

// tokenCommand is `hub token`: it prints a token signed with the configured HS256 secret, for operators who hand
// tokens to consoles and agents. Tokens for RS256/ES256/EdDSA come from whoever holds the private key.
func tokenCommand(_ context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sub, pub patterns
	fs.Var(&sub, "subscribe", "topic or prefix `pattern` (project.*) the holder may read; repeatable")
	fs.Var(&pub, "publish", "topic or prefix `pattern` the holder may publish to; repeatable")
	ttl := fs.Duration("ttl", time.Hour, "how long the token is valid")
	subject := fs.String("subject", "", "who the token is for (the sub claim), e.g. console-ops or agent-7")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: hub token --subscribe PATTERN... [--publish PATTERN...] [--ttl 1h] [--subject NAME]")
		fmt.Fprintln(stderr, "Prints a token signed with auth.hmac_secret (HUB_AUTH_HMAC_SECRET).")
		fs.PrintDefaults()
	}
	cfg, err := config.Load(fs, args, getenv)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hub token: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	if cfg.Auth.HMACSecret == "" {
		return errors.New("auth.hmac_secret (HUB_AUTH_HMAC_SECRET) is not set; tokens for public-key auth are signed by your identity provider")
	}
	tok, err := auth.Sign([]byte(cfg.Auth.HMACSecret), auth.Grant{Subscribe: sub, Publish: pub}, auth.Claims{
		Subject: *subject, Issuer: cfg.Auth.Issuer, Audience: cfg.Auth.Audience, TTL: *ttl,
	}, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	return nil
}

// versionCommand is `hub version`.
func versionCommand(stdout io.Writer) error {
	fmt.Fprintf(stdout, "hub %s %s %s/%s revision %s\n", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH, buildRevision())
	return nil
}
