package app

// The command table and the commands other than serve, one function each, named <name>Command. Adding a command is
// one entry in commands(): run prints the command's help through fs.Usage, so `hub help NAME` needs nothing more.

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
	"slices"
	"strings"
	"time"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/internal/cli"
	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/internal/demo"
	"github.com/syncverse/hub/internal/eventschema"
	"github.com/syncverse/hub/internal/watch"
	"github.com/syncverse/hub/pubsub"
)

// commands is every command of the binary, in the order `hub help` lists them.
func commands() []command {
	return []command{
		{name: "serve", usage: "[--config FILE] [--demo] [--listen ADDR] [--redis-url URL]",
			summary: "run the hub (the default command)",
			about:   "Serves /events, /publish, the console and /metrics until SIGINT or SIGTERM. --demo adds simulated agents.",
			example: "hub serve --demo\nHUB_REDIS_URL=redis://127.0.0.1:6379/0 hub serve --config config.yaml",
			run: func(ctx context.Context, c cli.Env, fs *flag.FlagSet, args []string) error {
				return serve(ctx, fs, args, c.Getenv, c.Stdout, c.Stderr, c.Listening)
			}},
		{name: "publish", usage: "--topic T [--type progress] [--data JSON] [--idempotency-key K] [--publisher NAME]",
			summary: "publish one event through Redis (data from stdin without --data)",
			about: "Publishes one event with the publish script to redis.url, or to the embedded server of a hub\n" +
				"running with defaults (redis://127.0.0.1:6380/0), and prints its id.",
			example: `hub publish --topic demo --data '{"workflow":"wf-1","progress":0.5}'`, run: publishCommand},
		{name: "script", usage: "[--load] [--redis-url URL]",
			summary: "print the publish script's SHA1 and arguments; --load loads it into Redis",
			about: "Prints the SHA1 EVALSHA names the publish script by (pubsub/publish.lua) and its KEYS and ARGV, for a\n" +
				"publisher in any language. With --load, loads it into redis.url with SCRIPT LOAD (on every master of a\n" +
				"cluster) and prints the SHA1. See docs/publishing.md.",
			example: "hub script\nhub script --load --redis-url redis://127.0.0.1:6379/0", run: scriptCommand},
		{name: "watch", usage: "--topic T [--topic U]... [--history N] [--plain | --json] [--url URL] [--token-file F | --token-env NAME]",
			summary: "follow topics in the terminal: a live table of workflows, or one line per event",
			about: "Follows topics over the hub's HTTP API until interrupted: on a terminal, a table of workflows redrawn in\n" +
				"place (failed and stalled ones first, in colour unless NO_COLOR is set); otherwise, or with --plain, one\n" +
				"line per event; with --json, each event as a JSON line. Reconnects from its last event; a reset reloads the\n" +
				"topic's snapshot. See docs/watching.md.",
			example: "hub watch --topic demo\nhub watch --topic project.42 --topic project.43 --plain --history 20\n" +
				"hub watch --topic demo --json --url https://hub.example.com --token-file ~/.hub-token",
			run: watchCommand},
		{name: "topics", usage: "[--json] [--url URL] [--token-file F | --token-env NAME]",
			summary: "list the topics with stored history (a table on a terminal, JSON otherwise)",
			about:   "Lists the topics that have a stream, most recently active first, as GET /topics answers.",
			example: "hub topics\nhub topics --url http://127.0.0.1:8080 | jq -r '.topics[].name'", run: topicsCommand},
		{name: "history", usage: "--topic T [--limit N] [--after ID] [--json] [--url URL] [--token-file F | --token-env NAME]",
			summary: "print a topic's stored events, oldest first (a table on a terminal, JSON otherwise)",
			about:   "Prints one page of GET /topics/{topic}/history: up to --limit events after --after, oldest first.",
			example: "hub history --topic demo --limit 20\nhub history --topic demo --after 1732870000000-0 | jq .events",
			run:     historyCommand},
		{name: "demo", usage: "[--config FILE] [--redis-url URL]",
			summary: "run the --demo agents against redis.url, without serving",
			about:   "Runs the simulated agents of serve --demo against the Redis of a hub elsewhere, until interrupted.",
			example: "hub demo --redis-url redis://127.0.0.1:6379/0", run: demoCommand},
		{name: "healthcheck", usage: "[--url URL] [--timeout D]",
			summary: "exit 0 when the hub answers /healthz",
			about:   "Asks /healthz of the hub at listen (or --url) and exits 0 on 200: the container's HEALTHCHECK.",
			example: "hub healthcheck --url http://127.0.0.1:8080/healthz", run: healthcheckCommand},
		{name: "token", usage: "--subscribe PATTERN... [--publish PATTERN...] [--ttl 1h] [--subject NAME]",
			summary: "print a token signed with auth.hmac_secret",
			about:   "Prints an HS256 token signed with auth.hmac_secret (HUB_AUTH_HMAC_SECRET or HUB_AUTH_HMAC_SECRET_FILE).",
			example: "HUB_AUTH_HMAC_SECRET_FILE=/run/secrets/hmac hub token --subscribe 'project.*' --ttl 8h", run: tokenCommand},
		{name: "config check", usage: "[--config FILE] [--listen ADDR] [--redis-url URL]",
			summary: "validate the configuration and show where each value comes from",
			about: "Loads the configuration as serve does, prints every key with its value (secrets masked) and where it\n" +
				"came from (default, file, environment, flag), and exits 1 on any problem, listing them all.",
			example: "hub config check --config config.yaml", run: configCheckCommand},
		{name: "version", usage: "", summary: "print the build's version (also hub --version)",
			about: "Prints the version, Go version, platform and revision of this build.", example: "hub version",
			run: versionCommand},
		{name: "help", usage: "[COMMAND]", summary: "list the commands, or print one's help (also hub -h, hub --help)",
			about:   "Lists the commands; with a command, prints its usage, flags and an example, as hub COMMAND -h does.",
			example: "hub help publish", run: helpCommand},
	}
}

// publishCommand is `hub publish`: one event, data from --data or stdin, through the publish script on Redis or,
// with --url or HUB_URL (and no --redis-url), through the hub's POST /publish.
func publishCommand(ctx context.Context, c cli.Env, fs *flag.FlagSet, args []string) error {
	var p publishArgs
	topic := fs.String("topic", "", "topic to publish on (required)")
	typ := fs.String("type", "progress", "event type")
	data := fs.String("data", "", "event data: one JSON value (read from stdin when empty)")
	key := fs.String("idempotency-key", "", "the event's idempotency key: the same key again stores nothing (default: a fresh one)")
	p.publisher = fs.String("publisher", "", "the name the idempotency key is kept under, publishing through Redis: keys are each publisher's own (default: the shared empty name; over --url, the token's subject)")
	p.verbose = fs.Bool("verbose", false, "print the idempotency key and the retries on stderr")
	p.conn.Flags(fs, watchEnv(c))
	cfg, _, err := config.LoadFlags(fs, args, c.Getenv, config.FlagConfig|config.FlagRedisURL)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	overHTTP := set["url"] || (c.Getenv(watch.URLVar) != "" && !set["redis-url"])
	var bad []string
	if *topic == "" {
		bad = append(bad, "--topic is required")
	}
	if set["url"] && set["redis-url"] {
		bad = append(bad, "--url and --redis-url: give one (--url publishes through the hub, --redis-url through Redis)")
	}
	if overHTTP {
		bad = append(bad, p.conn.Problems()...)
		if *p.publisher != "" {
			bad = append(bad, "--publisher: through the hub (--url or HUB_URL) the token's subject is the publisher")
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(c.Stderr, "hub publish: %s\n", strings.Join(bad, "; "))
		fs.Usage()
		return cli.ErrUsage
	}
	body := []byte(*data)
	if *data == "" {
		if body, err = io.ReadAll(io.LimitReader(c.Stdin, int64(cfg.Limits.MaxEventBytes)+1)); err != nil {
			return fmt.Errorf("read data from stdin: %w", err)
		}
		body = []byte(strings.TrimSpace(string(body)))
	}
	if *key == "" {
		*key = rand.Text() // a retry inside this run (through a failover), or a resend, is then safe
	}
	msg := pubsub.Message{Topic: *topic, Type: *typ, Data: body, IdempotencyKey: *key, Publisher: *p.publisher}
	if overHTTP {
		return p.overHTTP(ctx, c, msg)
	}
	if err := checkPublishData(c, cfg.Events.Validation, *topic, *typ, body, cfg.Limits.MaxEventBytes); err != nil {
		return err
	}
	return p.throughRedis(ctx, c, cfg, msg)
}

// publishArgs are the flags of hub publish its two ways share.
type publishArgs struct {
	conn      watch.Conn
	publisher *string
	verbose   *bool
}

// throughRedis runs the publish script on redis.url, or on the embedded server of a hub running with defaults.
func (p publishArgs) throughRedis(ctx context.Context, c cli.Env, cfg config.Config, msg pubsub.Message) error {
	url := cfg.Redis.URL
	if url == "" {
		url = "redis://" + cfg.Redis.EmbeddedAddr + "/0" // the embedded server of a hub running with defaults
	}
	rdb, err := pubsub.NewClient(url)
	if err != nil {
		return err
	}
	defer rdb.Close()
	pub := newPublisher(cfg, rdb, nil, nil)
	// A terminal client: its error names what failed, without go-redis's lines about each failed dial.
	ctx, loud := quietRedis(ctx)
	defer loud()
	ctx, cancel := context.WithTimeout(ctx, max(cfg.Redis.PublishRetry, cfg.Redis.MigrationRetry)+10*time.Second)
	defer cancel()
	res, err := pub.PublishMessage(ctx, msg)
	if *p.verbose {
		fmt.Fprintf(c.Stderr, "hub publish: idempotency key %s, %d retries\n", msg.IdempotencyKey, res.Retries)
	}
	if err != nil {
		return fmt.Errorf("publish through Redis at %s: %w", pubsub.RedactURL(url), err)
	}
	return printPublished(c, msg.IdempotencyKey, res.ID, res.Duplicate, nil)
}

// overHTTP sends the event to the hub's POST /publish under its Idempotency-Key; the hub checks its data and answers
// with the warnings of events.validation: warn.
func (p publishArgs) overHTTP(ctx context.Context, c cli.Env, msg pubsub.Message) error {
	client, err := p.conn.Client(c.Getenv)
	if err != nil {
		return err
	}
	defer client.Close()
	if *p.verbose {
		fmt.Fprintf(c.Stderr, "hub publish: idempotency key %s, POST %s/publish\n", msg.IdempotencyKey, client.Base)
	}
	res, err := client.Publish(ctx, msg.Topic, msg.Type, msg.Data, msg.IdempotencyKey)
	if err != nil {
		return err
	}
	return printPublished(c, msg.IdempotencyKey, res.ID, res.Duplicate, res.Warnings)
}

// printPublished prints the event's id on stdout, and on stderr what the publisher should know: the data's
// problems the hub stored it with, and that a key seen before stored nothing.
func printPublished(c cli.Env, key, id string, duplicate bool, warnings []string) error {
	for _, w := range warnings {
		fmt.Fprintf(c.Stderr, "hub publish: warning: %s (events.validation: warn, published all the same)\n", w)
	}
	if duplicate {
		fmt.Fprintf(c.Stderr, "hub publish: key %s was published before as %s; nothing stored now\n", key, id)
	}
	fmt.Fprintln(c.Stdout, id)
	return nil
}

// checkPublishData holds hub publish's data to its type's schema as POST /publish does (events.validation): strict
// refuses it, warn says so on stderr and publishes all the same. An event the publisher refuses anyway is left to it.
func checkPublishData(c cli.Env, mode eventschema.Mode, topic, typ string, data []byte, max int) error {
	if mode == eventschema.Off || pubsub.Validate(topic, typ, data, max) != nil {
		return nil
	}
	schemas, err := CompileEventSchemas()
	if err != nil {
		return err
	}
	err = schemas.Validate(typ, data)
	if err == nil || mode == eventschema.Strict {
		return err
	}
	fmt.Fprintf(c.Stderr, "hub publish: warning: %v (events.validation: warn, published all the same)\n", err)
	return nil
}

// demoCommand is `hub demo`: the simulated agents of `serve --demo`, on their own against redis.url, so a hub
// elsewhere (the compose trial's) shows workflows moving at once.
func demoCommand(ctx context.Context, c cli.Env, fs *flag.FlagSet, args []string) error {
	cfg, _, err := config.LoadFlags(fs, args, c.Getenv, config.FlagConfig|config.FlagRedisURL)
	if err != nil {
		return err
	}
	if cfg.Redis.URL == "" {
		return errors.New("hub demo: redis.url (HUB_REDIS_URL) is empty; point it at the Redis the hub reads")
	}
	log := newLogger(cfg.Log, c.Stderr)
	rdb, err := pubsub.NewClient(cfg.Redis.URL)
	if err != nil {
		return err
	}
	defer rdb.Close()
	log.Info().Str("redis", pubsub.RedactURL(cfg.Redis.URL)).Str("topic", demo.Topic).Msg("demo agents publishing")
	demo.Run(ctx, newPublisher(cfg, rdb, nil, nil), rdb, nil, log)
	return nil
}

// healthcheckCommand is `hub healthcheck`, the container's HEALTHCHECK: exit 0 when /healthz answers 200.
func healthcheckCommand(ctx context.Context, c cli.Env, fs *flag.FlagSet, args []string) error {
	url := fs.String("url", "", "health URL (default: http://<listen>/healthz)")
	timeout := fs.Duration("timeout", 2*time.Second, "give up after this long")
	cfg, _, err := config.LoadFlags(fs, args, c.Getenv, config.FlagConfig|config.FlagListen)
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
	fmt.Fprintln(c.Stdout, "ok")
	return nil
}

// tokenCommand is `hub token`: it prints a token signed with the configured HS256 secret, for operators who hand
// tokens to consoles and agents. Tokens for RS256/ES256/EdDSA come from whoever holds the private key.
func tokenCommand(_ context.Context, c cli.Env, fs *flag.FlagSet, args []string) error {
	var sub, pub cli.List
	fs.Var(&sub, "subscribe", "topic or prefix `pattern` (project.*) the holder may read; repeatable")
	fs.Var(&pub, "publish", "topic or prefix `pattern` the holder may publish to; repeatable")
	ttl := fs.Duration("ttl", time.Hour, "how long the token is valid")
	subject := fs.String("subject", "", "who the token is for (the sub claim), e.g. console-ops or agent-7")
	cfg, _, err := config.LoadFlags(fs, args, c.Getenv, config.FlagConfig)
	if err != nil {
		return err
	}
	if cfg.Auth.HMACSecret == "" {
		return errors.New("auth.hmac_secret (HUB_AUTH_HMAC_SECRET or HUB_AUTH_HMAC_SECRET_FILE) is not set; tokens for public-key auth are signed by your identity provider")
	}
	tok, err := auth.Sign([]byte(cfg.Auth.HMACSecret), auth.Grant{Subscribe: sub, Publish: pub}, auth.Claims{
		Subject: *subject, Issuer: cfg.Auth.Issuer, Audience: cfg.Auth.CheckedAudience(), TTL: *ttl,
	}, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintln(c.Stdout, tok)
	return nil
}

// configCheckCommand is `hub config check`: the configuration serve would run with, each value with its source and
// secrets masked, or every problem serve would refuse to start with.
func configCheckCommand(_ context.Context, c cli.Env, fs *flag.FlagSet, args []string) error {
	cfg, src, err := config.LoadFlags(fs, args, c.Getenv, config.AllFlags)
	if errors.Is(err, flag.ErrHelp) || errors.Is(err, cli.ErrUsage) {
		return err
	}
	if err == nil {
		err = errors.Join(cfg.CheckExposure(), checkEmbedded(cfg, false))
	}
	if err != nil {
		return err // in the same words as serve's refusal to start
	}
	cfg.Describe(c.Stdout, src)
	fmt.Fprintln(c.Stdout, "configuration ok")
	return nil
}

// watchCommand is `hub watch`, topicsCommand `hub topics` and historyCommand `hub history`: clients of a running
// hub's HTTP API (package watch).
func watchCommand(ctx context.Context, c cli.Env, fs *flag.FlagSet, args []string) error {
	warnEnvNames(c, fs, args)
	return watch.Watch(ctx, fs, args, watchEnv(c))
}

func topicsCommand(ctx context.Context, c cli.Env, fs *flag.FlagSet, args []string) error {
	warnEnvNames(c, fs, args)
	return watch.Topics(ctx, fs, args, watchEnv(c))
}

func historyCommand(ctx context.Context, c cli.Env, fs *flag.FlagSet, args []string) error {
	warnEnvNames(c, fs, args)
	return watch.History(ctx, fs, args, watchEnv(c))
}

// warnEnvNames says, in one line on stderr, which HUB_* variables set no command reads: the clients of the HTTP
// API read no configuration, so a typo (HUB_ULR) is a warning to them, where serve refuses to start.
func warnEnvNames(c cli.Env, fs *flag.FlagSet, args []string) {
	if slices.ContainsFunc(args, isHelpFlag) {
		return
	}
	if bad := config.UnknownEnvNames(c.Getenv); len(bad) > 0 {
		fmt.Fprintf(c.Stderr, "%s: warning: %s; ignored\n", fs.Name(), strings.Join(bad, "; "))
	}
}

// watchEnv points the client commands at the hub's default listen address unless HUB_URL or --url says otherwise.
func watchEnv(c cli.Env) watch.Env {
	return watch.Env{Stdout: c.Stdout, Stderr: c.Stderr, Getenv: c.Getenv, DefaultURL: "http://" + config.Default().Listen}
}
