package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/syncverse/hub/dispatch"
	"github.com/syncverse/hub/pubsub"
)

// publishCommand is `hub publish`: one event through the publish script, data from --data or stdin.
func publishCommand(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("publish", flag.ContinueOnError)
	fs.SetOutput(stderr)
	topic := fs.String("topic", "", "topic to publish on (required)")
	typ := fs.String("type", "progress", "event type")
	data := fs.String("data", "", "event data: one JSON value (read from stdin when empty)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: hub publish --topic T [--type progress] [--data JSON]   (data on stdin when --data is absent)")
		fs.PrintDefaults()
	}
	cfg, err := loadConfig(fs, args, getenv)
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
	rdb, err := newRedisClient(url)
	if err != nil {
		return err
	}
	defer rdb.Close()
	pub := pubsub.NewPublisher(rdb, pubsub.PublisherConfig{
		Prefix: cfg.Redis.Prefix, MaxLen: cfg.History.MaxLen, MaxAge: cfg.History.MaxAge, MaxEventBytes: cfg.Limits.MaxEventBytes,
		Sharded: cfg.Redis.ShardedPubSub,
	})
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	id, err := pub.Publish(ctx, *topic, *typ, body)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, id)
	return nil
}

// healthcheckCommand is `hub healthcheck`, the container's HEALTHCHECK: exit 0 when /healthz answers 200.
func healthcheckCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "health URL (default: http://<listen>/healthz)")
	timeout := fs.Duration("timeout", 2*time.Second, "give up after this long")
	cfg, err := loadConfig(fs, args, getenv)
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
	cfg := defaultConfig()
	if err := applyEnv(&cfg, getenv); err != nil {
		return err
	}
	err := dispatch.Command(ctx, args, stdout, stderr, cfg.Redis.URL)
	if errors.Is(err, dispatch.ErrUsage) {
		return errUsage
	}
	return err
}
