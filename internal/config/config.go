// Package config is the hub's configuration: its types, its defaults (read from the packages that own them),
// config.yaml decoded strictly, HUB_* variables, the common flags, and validation that reports every problem at once.
package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"go.yaml.in/yaml/v3"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/notify"
	"github.com/syncverse/hub/pubsub"
	"github.com/syncverse/hub/sse"
	"github.com/syncverse/hub/workflow"
)

// ErrUsage marks a command line that could not be parsed; the flag package has printed the usage already.
var ErrUsage = errors.New("usage")

// Load builds the configuration from defaults, the --config file, HUB_* variables and flags, in that order.
// fs may define more flags (a command's own); they are parsed too.
func Load(fs *flag.FlagSet, args []string, getenv func(string) string) (Config, error) {
	cfg := Default()
	path := fs.String("config", getenv("HUB_CONFIG"), "YAML configuration `file` (unknown keys are errors)")
	listen := fs.String("listen", "", "listen `address` (overrides listen)")
	redisURL := fs.String("redis-url", "", "Redis `URL` (overrides redis.url; empty config = embedded server)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, ErrUsage
	}
	var errs []error
	if *path != "" {
		errs = append(errs, LoadFile(&cfg, *path))
	}
	errs = append(errs, CheckEnvNames(getenv), ApplyEnv(&cfg, getenv))
	if *listen != "" {
		cfg.Listen = *listen
	}
	if *redisURL != "" {
		cfg.Redis.URL = *redisURL
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// Config is the hub's configuration. Defaults in code < config.yaml < HUB_* variables < flags; config.yaml at the
// repository root documents every key with its default.
type Config struct {
	Listen          string        `yaml:"listen"`
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	Redis           RedisConfig   `yaml:"redis"`
	SSE             SSEConfig     `yaml:"sse"`
	History         HistoryConfig `yaml:"history"`
	Limits          LimitsConfig  `yaml:"limits"`
	Log             LogConfig     `yaml:"log"`
	Auth            AuthConfig    `yaml:"auth"`
	CORS            CORSConfig    `yaml:"cors"`
	Metrics         MetricsConfig `yaml:"metrics"`
	TLS             TLSConfig     `yaml:"tls"`
	// H2C serves HTTP/2 without TLS (prior knowledge), for a proxy in front that speaks it to its upstreams.
	H2C       bool            `yaml:"h2c"`
	Workflows WorkflowsConfig `yaml:"workflows"`
	Notify    NotifyConfig    `yaml:"notify"`
}

// WorkflowsConfig tunes the hub's verdicts on workflow health; see README.md, "Workflow health".
type WorkflowsConfig struct {
	StallAfter time.Duration   `yaml:"stall_after"`
	Rules      []workflow.Rule `yaml:"rules"`
	Sweep      time.Duration   `yaml:"sweep"`
	// MetricTopics lists topic patterns whose workflows are also counted under a topic label.
	MetricTopics []string `yaml:"metric_topics"`
}

// NotifyConfig names the webhooks the on-call is told through, and how deliveries are retried.
type NotifyConfig struct {
	Webhooks []notify.Webhook `yaml:"webhooks"`
	// Webhook is one more, mostly for HUB_NOTIFY_WEBHOOK_URL, _SECRET and _FORMAT.
	Webhook    notify.Webhook `yaml:"webhook"`
	Timeout    time.Duration  `yaml:"timeout"`
	RetryFor   time.Duration  `yaml:"retry_for"`
	BackoffMax time.Duration  `yaml:"backoff_max"`
	ClaimAfter time.Duration  `yaml:"claim_after"`
}

// All returns every configured webhook.
func (n NotifyConfig) All() []notify.Webhook {
	if n.Webhook.URL == "" {
		return n.Webhooks
	}
	return append(slices.Clone(n.Webhooks), n.Webhook)
}

type RedisConfig struct {
	URL string `yaml:"url"`
	// Embedded says in so many words that an empty url means the embedded server, which a non-loopback listen
	// otherwise refuses (--demo aside).
	Embedded     bool          `yaml:"embedded"`
	EmbeddedAddr string        `yaml:"embedded_addr"`
	Prefix       string        `yaml:"prefix"`
	TailCheck    time.Duration `yaml:"tail_check"`
	// ShardedPubSub uses SPUBLISH/SSUBSCRIBE (Redis 7), so on a cluster each shard carries only its own topics.
	ShardedPubSub bool `yaml:"sharded_pubsub"`
	// PublishRetry is how long a publish with an idempotency key is retried through a failover; 0 turns it off.
	PublishRetry time.Duration `yaml:"publish_retry"`
}

type SSEConfig struct {
	Heartbeat    time.Duration `yaml:"heartbeat"`
	ClientBuffer int           `yaml:"client_buffer"`
	Retry        time.Duration `yaml:"retry"`
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// Detach serves HTTP/1.1 streams on sse's raw engine (no goroutine per idle stream); false leaves every stream
	// with net/http, one goroutine each.
	Detach bool `yaml:"detach"`
}

type HistoryConfig struct {
	MaxLen         int64         `yaml:"max_len"`
	MaxAge         time.Duration `yaml:"max_age"`
	IdempotencyTTL time.Duration `yaml:"idempotency_ttl"`
}

type LimitsConfig struct {
	MaxEventBytes      int `yaml:"max_event_bytes"`
	MaxBodyBytes       int `yaml:"max_body_bytes"`
	MaxTopicsPerStream int `yaml:"max_topics_per_stream"`
	MaxReplay          int `yaml:"max_replay"`
	MaxHistoryQuery    int `yaml:"max_history_query"`
	MaxCursorBytes     int `yaml:"max_cursor_bytes"`
	MaxHeaderBytes     int `yaml:"max_header_bytes"`
	MaxTopicsListed    int `yaml:"max_topics_listed"`
	MaxPageBytes       int `yaml:"max_page_bytes"`  // a history page (replay, /history, a tail) ends at this many bytes
	MaxStoreReads      int `yaml:"max_store_reads"` // history reads sent to Redis at once; more wait
	MaxSnapshotBytes   int `yaml:"max_snapshot_bytes"`
	// 0 means no limit for the connection counts and the publish rate.
	MaxConnections      int      `yaml:"max_connections"`
	MaxConnectionsPerIP int      `yaml:"max_connections_per_ip"`
	PublishRate         float64  `yaml:"publish_rate"` // events per second, per token (or per address when anonymous)
	PublishBurst        int      `yaml:"publish_burst"`
	TrustedProxies      []string `yaml:"trusted_proxies"` // addresses or CIDRs whose X-Forwarded-For is believed
	// RequestReadTimeout bounds reading a request's headers and body; a running /events stream is exempt.
	RequestReadTimeout time.Duration `yaml:"request_read_timeout"`
	// Connections from one address that carry no stream (idle, or serving other requests); 0 is no limit.
	MaxNonStreamConnectionsPerIP int `yaml:"max_nonstream_connections_per_ip"`
	// New connections and streams per second from one address, with bursts; 0 is no limit.
	ConnectionRate  float64 `yaml:"connection_rate"`
	ConnectionBurst int     `yaml:"connection_burst"`
	// MaxTopicsScanKeys bounds the keys one GET /topics may have Redis SCAN for prefix grants.
	MaxTopicsScanKeys int `yaml:"max_topics_scan_keys"`
}

// AuthConfig chooses how clients prove who they are; see README.md, "Security".
type AuthConfig struct {
	// Anonymous admits requests without a token. Unset, it is true when no key is configured and false otherwise.
	Anonymous       *bool         `yaml:"anonymous"`
	HMACSecret      string        `yaml:"hmac_secret"`
	PublicKeyFile   string        `yaml:"public_key_file"`
	JWKSFile        string        `yaml:"jwks_file"`
	Issuer          string        `yaml:"issuer"`
	Audience        string        `yaml:"audience"`
	CookieName      string        `yaml:"cookie_name"`
	AllowQueryToken bool          `yaml:"allow_query_token"`
	ClockSkew       time.Duration `yaml:"clock_skew"`
	// JWKSURL is an identity provider's key set, fetched at start and every JWKSRefresh.
	JWKSURL     string        `yaml:"jwks_url"`
	JWKSRefresh time.Duration `yaml:"jwks_refresh"`
	// RolesClaim is a dotted path to a claim listing role names (groups, roles, realm_access.roles); Roles gives
	// each name its patterns.
	RolesClaim string                `yaml:"roles_claim"`
	Roles      map[string]auth.Grant `yaml:"roles"`
	// ProxyHeader carries the access token from an authenticating proxy; believed only from limits.trusted_proxies.
	ProxyHeader string `yaml:"proxy_header"`
	// LoginURL is where the console sends an operator to obtain a session.
	LoginURL string `yaml:"login_url"`
	// AllowedHosts are the Host names served in anonymous mode besides addresses and localhost, against
	// DNS rebinding: "name" (any port) or "name:port".
	AllowedHosts []string `yaml:"allowed_hosts"`
}

type CORSConfig struct {
	AllowedOrigins []string `yaml:"allowed_origins"`
}

// TLSConfig turns on HTTPS, and with it HTTP/2, so one browser can hold more than six streams to the hub.
type TLSConfig struct {
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

type MetricsConfig struct {
	// Listen, when set, serves /metrics on a listener of its own without auth and takes it off the main one.
	Listen string `yaml:"listen"`
}

type LogConfig struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
	Access bool   `yaml:"access"` // a line per request, /events streams aside (they log opened/closed)
}

// Default is the configuration before any file, variable or flag. Each value a package has a default for is that
// package's exported default, so the two cannot drift apart.
func Default() Config {
	return Config{
		Listen:          "127.0.0.1:8080",
		ShutdownTimeout: 10 * time.Second,
		Redis: RedisConfig{EmbeddedAddr: "127.0.0.1:6380", Prefix: pubsub.DefaultPrefix, TailCheck: pubsub.DefaultTailCheck,
			PublishRetry: pubsub.DefaultRetryBudget},
		SSE: SSEConfig{Heartbeat: sse.DefaultHeartbeat, ClientBuffer: hub.DefaultClientBuffer, Retry: sse.DefaultRetry,
			WriteTimeout: sse.DefaultWriteTimeout, Detach: true},
		History: HistoryConfig{MaxLen: pubsub.DefaultMaxLen, IdempotencyTTL: pubsub.DefaultIdempotencyTTL},
		Limits: LimitsConfig{
			MaxEventBytes: pubsub.DefaultMaxEventBytes, MaxBodyBytes: 80 << 10, MaxTopicsPerStream: sse.DefaultMaxTopics,
			MaxReplay: hub.DefaultMaxReplay, MaxHistoryQuery: 1000, MaxCursorBytes: sse.DefaultMaxCursorBytes, MaxHeaderBytes: 16 << 10, MaxTopicsListed: 1000,
			MaxPageBytes: pubsub.DefaultMaxPageBytes, MaxStoreReads: pubsub.DefaultMaxReads, MaxSnapshotBytes: pubsub.DefaultMaxSnapshotBytes,
			MaxConnections: 10000, MaxConnectionsPerIP: 256, PublishRate: 100, PublishBurst: 200, TrustedProxies: []string{},
			RequestReadTimeout: 10 * time.Second, MaxNonStreamConnectionsPerIP: 128, ConnectionRate: 50, ConnectionBurst: 100,
			MaxTopicsScanKeys: 100000,
		},
		Log: LogConfig{Level: "info", Format: "json"},
		Auth: AuthConfig{CookieName: "hub_token", ClockSkew: 10 * time.Second, JWKSRefresh: auth.DefaultJWKSRefresh, Roles: map[string]auth.Grant{},
			AllowedHosts: []string{}},
		CORS: CORSConfig{AllowedOrigins: []string{}},
		Workflows: WorkflowsConfig{StallAfter: workflow.DefaultStallAfter, Sweep: workflow.DefaultSweep,
			Rules: []workflow.Rule{}, MetricTopics: []string{}},
		Notify: NotifyConfig{Webhooks: []notify.Webhook{}, Webhook: notify.Webhook{Kinds: []string{}, Topics: []string{}},
			Timeout:  notify.DefaultTimeout,
			RetryFor: notify.DefaultRetryFor, BackoffMax: notify.DefaultBackoffMax, ClaimAfter: notify.DefaultClaimAfter},
	}
}

// LoadFile decodes a YAML file over cfg; an unknown key is an error, so a typo never passes silently.
func LoadFile(cfg *Config, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}

// ApplyEnv sets every key from its HUB_* variable (redis.url from HUB_REDIS_URL, sse.client_buffer from
// HUB_SSE_CLIENT_BUFFER, ...) and reports every bad value at once.
func ApplyEnv(cfg *Config, getenv func(string) string) error {
	var errs []error
	walk(reflect.ValueOf(cfg).Elem(), "HUB", func(name string, v reflect.Value) {
		raw := getenv(name)
		if raw == "" {
			return
		}
		if err := setValue(v, raw); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", name, raw, err))
		}
	})
	return errors.Join(errs...)
}

// EnvNames lists every HUB_* variable the configuration reads.
func EnvNames() []string {
	var names []string
	walk(reflect.ValueOf(&Config{}).Elem(), "HUB", func(name string, _ reflect.Value) { names = append(names, name) })
	return names
}

func walk(v reflect.Value, prefix string, fn func(name string, v reflect.Value)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		name := prefix + "_" + strings.ToUpper(tag)
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			walk(f, name, fn)
			continue
		}
		fn(name, f)
	}
}

func setValue(v reflect.Value, raw string) error {
	switch {
	case v.Type() == reflect.TypeOf(time.Duration(0)):
		d, err := time.ParseDuration(raw)
		if err != nil {
			return err
		}
		v.SetInt(int64(d))
	case v.Kind() == reflect.String:
		v.SetString(raw)
	case v.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return err
		}
		v.SetBool(b)
	case v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(&b))
	case v.Kind() == reflect.Float64:
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return errors.New("not a number")
		}
		v.SetFloat(f)
	case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return errors.New("not a whole number")
		}
		v.SetInt(n)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		parts := strings.Split(raw, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		v.Set(reflect.ValueOf(parts))
	default:
		return fmt.Errorf("unsupported setting type %s", v.Type())
	}
	return nil
}

// Validate reports every impossible value at once.
func (c *Config) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(c.Listen != "", "listen: empty")
	check(!c.Redis.Embedded || c.Redis.URL == "", "redis.embedded: true asks for the embedded server, but redis.url is set too: choose one")
	check(c.ShutdownTimeout > 0, "shutdown_timeout: must be positive")
	check(c.SSE.Heartbeat >= 10*time.Millisecond, "sse.heartbeat: %v is too short", c.SSE.Heartbeat)
	check(c.SSE.ClientBuffer >= 1, "sse.client_buffer: must be at least 1")
	check(c.SSE.Retry > 0, "sse.retry: must be positive")
	check(c.SSE.WriteTimeout > 0, "sse.write_timeout: must be positive")
	check(c.History.MaxLen >= 1, "history.max_len: must be at least 1")
	check(c.History.MaxAge >= 0, "history.max_age: must not be negative")
	check(c.History.IdempotencyTTL >= time.Millisecond, "history.idempotency_ttl: must be at least 1ms")
	check(c.Redis.PublishRetry >= 0, "redis.publish_retry: must not be negative (0: no retries)")
	check(c.Limits.MaxEventBytes >= 64, "limits.max_event_bytes: must be at least 64")
	check(c.Limits.MaxBodyBytes >= c.Limits.MaxEventBytes, "limits.max_body_bytes: must be at least limits.max_event_bytes")
	check(c.Limits.MaxTopicsPerStream >= 1, "limits.max_topics_per_stream: must be at least 1")
	check(c.Limits.MaxReplay >= 1, "limits.max_replay: must be at least 1")
	check(c.Limits.MaxHistoryQuery >= 1 && c.Limits.MaxHistoryQuery <= 1000, "limits.max_history_query: must be 1..1000")
	check(c.Limits.MaxPageBytes >= c.Limits.MaxEventBytes, "limits.max_page_bytes: must be at least limits.max_event_bytes")
	check(c.Limits.MaxStoreReads >= 1, "limits.max_store_reads: must be at least 1")
	check(c.Limits.MaxSnapshotBytes >= c.Limits.MaxEventBytes, "limits.max_snapshot_bytes: must be at least limits.max_event_bytes")
	check(c.Log.Format == "json" || c.Log.Format == "console", "log.format: %q is not json or console", c.Log.Format)
	_, levelErr := zerolog.ParseLevel(c.Log.Level)
	check(c.Log.Level != "" && levelErr == nil, "log.level: %q is not debug, info, warn or error", c.Log.Level)
	check(c.Limits.MaxConnections >= 0 && c.Limits.MaxConnectionsPerIP >= 0, "limits.max_connections, limits.max_connections_per_ip: must not be negative (0: no limit)")
	check(c.Limits.PublishRate >= 0, "limits.publish_rate: must not be negative (0: no limit)")
	check(c.Limits.PublishRate == 0 || c.Limits.PublishBurst >= 1, "limits.publish_burst: must be at least 1")
	check(c.Limits.RequestReadTimeout > 0, "limits.request_read_timeout: must be positive")
	check(c.Limits.MaxNonStreamConnectionsPerIP >= 0, "limits.max_nonstream_connections_per_ip: must not be negative (0: no limit)")
	check(c.Limits.ConnectionRate >= 0, "limits.connection_rate: must not be negative (0: no limit)")
	check(c.Limits.ConnectionRate == 0 || c.Limits.ConnectionBurst >= 1, "limits.connection_burst: must be at least 1")
	check(c.Limits.MaxTopicsScanKeys >= 1000, "limits.max_topics_scan_keys: must be at least 1000")
	check(c.Auth.ClockSkew > 0 && c.Auth.ClockSkew <= 5*time.Minute, "auth.clock_skew: %v is not within 1ns..5m", c.Auth.ClockSkew)
	check(c.Auth.CookieName == "" || validCookieName(c.Auth.CookieName), "auth.cookie_name: %q is not a cookie name", c.Auth.CookieName)
	errs = append(errs, c.Auth.validate(len(c.Limits.TrustedProxies) > 0))
	check(c.Metrics.Listen == "" || c.Metrics.Listen != c.Listen, "metrics.listen: must differ from listen")
	check((c.TLS.CertFile == "") == (c.TLS.KeyFile == ""), "tls.cert_file, tls.key_file: set both or neither")
	check(!c.H2C || c.TLS.CertFile == "", "h2c: only without tls (over TLS, HTTP/2 is negotiated by itself)")
	errs = append(errs, c.Workflows.validate(), c.Notify.validate())
	return errors.Join(errs...)
}

func (w WorkflowsConfig) validate() error {
	var errs []error
	if w.StallAfter <= 0 {
		errs = append(errs, errors.New("workflows.stall_after: must be positive"))
	}
	if w.Sweep <= 0 || w.Sweep > w.StallAfter {
		errs = append(errs, fmt.Errorf("workflows.sweep: %v must be positive and at most workflows.stall_after", w.Sweep))
	}
	for i, r := range w.Rules {
		if err := r.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("workflows.rules[%d]: %w", i, err))
		}
	}
	for i, p := range w.MetricTopics {
		if err := auth.ValidatePattern(p); err != nil {
			errs = append(errs, fmt.Errorf("workflows.metric_topics[%d]: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

func (n NotifyConfig) validate() error {
	var errs []error
	for i, w := range n.Webhooks {
		if err := w.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("notify.webhooks[%d]: %w", i, err))
		}
	}
	if w := n.Webhook; w.URL != "" || w.Secret != "" || w.Format != "" || len(w.Kinds) > 0 || len(w.Topics) > 0 {
		if err := n.Webhook.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("notify.webhook (HUB_NOTIFY_WEBHOOK_URL): %w", err))
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"timeout", n.Timeout}, {"retry_for", n.RetryFor}, {"backoff_max", n.BackoffMax}, {"claim_after", n.ClaimAfter}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("notify.%s: must be positive", d.name))
		}
	}
	if n.ClaimAfter > 0 && n.ClaimAfter < 2*n.Timeout {
		errs = append(errs, fmt.Errorf("notify.claim_after: %v must be at least twice notify.timeout (%v), or a slow receiver gets a delivery twice", n.ClaimAfter, n.Timeout))
	}
	return errors.Join(errs...)
}

// CheckExposure refuses to serve anonymous clients on a non-loopback address unless the operator asked for it in
// so many words: progress events carry project names, errors and lock holders.
func (c *Config) CheckExposure() error {
	if c.Auth.Configured() || c.Auth.Anonymous != nil || IsLoopback(c.Listen) {
		return nil
	}
	return fmt.Errorf("listen %s is not a loopback address and no auth is configured, so anyone who can reach it could "+
		"read and publish every topic: set auth.hmac_secret (HUB_AUTH_HMAC_SECRET), auth.public_key_file, auth.jwks_file or auth.jwks_url, "+
		"or set auth.anonymous: true (HUB_AUTH_ANONYMOUS=true) if a proxy in front authenticates clients", c.Listen)
}

// Configured is true when a key to verify tokens is set.
func (a AuthConfig) Configured() bool {
	return a.HMACSecret != "" || a.PublicKeyFile != "" || a.JWKSFile != "" || a.JWKSURL != ""
}

// AnonymousAllowed: configuring a key turns anonymous access off, unless auth.anonymous says otherwise.
func (a AuthConfig) AnonymousAllowed() bool {
	if a.Anonymous != nil {
		return *a.Anonymous
	}
	return !a.Configured()
}

// IsLoopback is true only for an address that no other machine can reach; ":8080" and host names other than
// localhost listen on (or may resolve to) public interfaces.
func IsLoopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func validCookieName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return name != ""
}
