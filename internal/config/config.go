// Package config is the hub's configuration: its types, its defaults (read from the packages that own them),
// config.yaml checked key by key and decoded strictly, HUB_* variables (each secret also from the file its _FILE
// variable names), the common flags, where each value came from, and validation; every problem is reported at once,
// in the words of config.yaml.
package config

import (
	"slices"
	"time"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/eventschema"
	"github.com/syncverse/hub/internal/memtrim"
	"github.com/syncverse/hub/notify"
	"github.com/syncverse/hub/pubsub"
	"github.com/syncverse/hub/sse"
	"github.com/syncverse/hub/workflow"
)

// Config is the hub's configuration. Defaults in code < config.yaml < HUB_* variables < flags; config.yaml at the
// repository root documents every key with its default.
type Config struct {
	Listen          string        `yaml:"listen"`
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	Redis           RedisConfig   `yaml:"redis"`
	SSE             SSEConfig     `yaml:"sse"`
	History         HistoryConfig `yaml:"history"`
	Events          EventsCheck   `yaml:"events"`
	Limits          LimitsConfig  `yaml:"limits"`
	Log             LogConfig     `yaml:"log"`
	Auth            AuthConfig    `yaml:"auth"`
	CORS            CORSConfig    `yaml:"cors"`
	Metrics         MetricsConfig `yaml:"metrics"`
	Tracing         TracingConfig `yaml:"tracing"`
	TLS             TLSConfig     `yaml:"tls"`
	// H2C serves HTTP/2 without TLS (prior knowledge), for a proxy in front that speaks it to its upstreams.
	H2C       bool            `yaml:"h2c"`
	Workflows WorkflowsConfig `yaml:"workflows"`
	Notify    NotifyConfig    `yaml:"notify"`
	Presence  PresenceConfig  `yaml:"presence"`
}

// PresenceConfig turns on who-is-watching per topic; see docs/presence.md.
type PresenceConfig struct {
	Enabled  bool          `yaml:"enabled"`
	Interval time.Duration `yaml:"interval"`
	Expiry   time.Duration `yaml:"expiry"`
	MaxUsers int           `yaml:"max_users"`
}

// WorkflowsConfig tunes the hub's verdicts on workflow health; see README.md, "Workflow health".
type WorkflowsConfig struct {
	StallAfter time.Duration   `yaml:"stall_after"`
	Rules      []workflow.Rule `yaml:"rules"`
	Sweep      time.Duration   `yaml:"sweep"`
	// MetricTopics lists topic patterns whose workflows are also counted under a topic label.
	MetricTopics []string `yaml:"metric_topics"`
	// The ceilings on the workflow state (workflow.Config).
	MaxTopicWorkflows  int `yaml:"max_topic_workflows"`
	MaxTopicStateBytes int `yaml:"max_topic_state_bytes"`
	MaxWorkflows       int `yaml:"max_workflows"`
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
	// The ceilings on what notifications may cost (notify.Config).
	MaxPending   int `yaml:"max_pending"`
	MaxDataBytes int `yaml:"max_data_bytes"`
	Workers      int `yaml:"workers"`
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
	// MigrationRetry is that budget while the topic's Cluster slot is being migrated (TRYAGAIN, ASK replies); it
	// never shortens PublishRetry, and 0 leaves migrations to PublishRetry alone.
	MigrationRetry time.Duration `yaml:"migration_retry"`
}

type SSEConfig struct {
	Heartbeat    time.Duration `yaml:"heartbeat"`
	ClientBuffer int           `yaml:"client_buffer"`
	Retry        time.Duration `yaml:"retry"`
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// Detach serves HTTP/1.1 streams on sse's raw engine (no goroutine per idle stream); false leaves every stream
	// with net/http, one goroutine each.
	Detach bool `yaml:"detach"`
	// TrimAfterBurst is the churn (streams opened plus closed) after which, once it falls quiet, the hub hands the
	// burst's free memory back to the OS (internal/memtrim); 0: never.
	TrimAfterBurst int64 `yaml:"trim_after_burst"`
}

type HistoryConfig struct {
	MaxLen         int64         `yaml:"max_len"`
	MaxAge         time.Duration `yaml:"max_age"`
	IdempotencyTTL time.Duration `yaml:"idempotency_ttl"`
}

// EventsCheck is what the hub checks of the data agents publish; see docs/events.md.
type EventsCheck struct {
	// Validation is how the data of progress, lock and health events is held to docs/schemas: off, warn (counted
	// and logged) or strict (the hub's publishers refuse it).
	Validation eventschema.Mode `yaml:"validation"`
	// InvalidLogLines bounds the log lines bad data makes, all topics together, per minute (each (topic, type) logs
	// at most once a minute besides); every bad event is counted all the same.
	InvalidLogLines int `yaml:"invalid_log_lines"`
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

// AnyAudience as auth.audience accepts a token for any audience: an explicit choice, required to run with
// auth.jwks_url and no audience of the hub's own.
const AnyAudience = "*"

// CheckedAudience is the audience tokens are held to: "" (none) for AnyAudience.
func (a AuthConfig) CheckedAudience() string {
	if a.Audience == AnyAudience {
		return ""
	}
	return a.Audience
}

// Values of auth.cookie_secure.
const (
	CookieSecureAuto   = "auto"   // Secure over TLS, off loopback, or when a trusted proxy says X-Forwarded-Proto: https
	CookieSecureAlways = "always" // always Secure (a hub on plain HTTP behind a TLS-terminating proxy)
	CookieSecureNever  = "never"  // never Secure (plain HTTP throughout: a lab, a test)
)

// AuthConfig chooses how clients prove who they are; see README.md, "Security".
type AuthConfig struct {
	// Anonymous admits requests without a token. Unset, it is true when no key is configured and false otherwise.
	Anonymous     *bool  `yaml:"anonymous"`
	HMACSecret    string `yaml:"hmac_secret"`
	PublicKeyFile string `yaml:"public_key_file"`
	JWKSFile      string `yaml:"jwks_file"`
	Issuer        string `yaml:"issuer"`
	// Audience is what a token's aud must contain; required with JWKSURL, where AnyAudience ("*") accepts any.
	Audience   string `yaml:"audience"`
	CookieName string `yaml:"cookie_name"`
	// CookieSecure is when the session cookie is Secure (and named with the "__Host-" prefix): auto, always, never.
	CookieSecure    string        `yaml:"cookie_secure"`
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

// TracingConfig turns on OpenTelemetry tracing; where spans go and how many are kept are the standard OTEL_*
// variables' (docs/tracing.md).
type TracingConfig struct {
	Enabled bool `yaml:"enabled"`
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
			PublishRetry: pubsub.DefaultRetryBudget, MigrationRetry: pubsub.DefaultMigrationRetry},
		SSE: SSEConfig{Heartbeat: sse.DefaultHeartbeat, ClientBuffer: hub.DefaultClientBuffer, Retry: sse.DefaultRetry,
			WriteTimeout: sse.DefaultWriteTimeout, Detach: true, TrimAfterBurst: memtrim.DefaultBurst},
		History: HistoryConfig{MaxLen: pubsub.DefaultMaxLen, IdempotencyTTL: pubsub.DefaultIdempotencyTTL},
		Events:  EventsCheck{Validation: eventschema.DefaultMode, InvalidLogLines: eventschema.DefaultLogLines},
		Limits: LimitsConfig{
			MaxEventBytes: pubsub.DefaultMaxEventBytes, MaxBodyBytes: 80 << 10, MaxTopicsPerStream: sse.DefaultMaxTopics,
			MaxReplay: hub.DefaultMaxReplay, MaxHistoryQuery: 1000, MaxCursorBytes: sse.DefaultMaxCursorBytes, MaxHeaderBytes: 16 << 10, MaxTopicsListed: 1000,
			MaxPageBytes: pubsub.DefaultMaxPageBytes, MaxStoreReads: pubsub.DefaultMaxReads, MaxSnapshotBytes: pubsub.DefaultMaxSnapshotBytes,
			MaxConnections: 10000, MaxConnectionsPerIP: 256, PublishRate: 100, PublishBurst: 200, TrustedProxies: []string{},
			RequestReadTimeout: 10 * time.Second, MaxNonStreamConnectionsPerIP: 128, ConnectionRate: 50, ConnectionBurst: 100,
			MaxTopicsScanKeys: 100000,
		},
		Log: LogConfig{Level: "info", Format: "json"},
		Auth: AuthConfig{CookieName: auth.DefaultCookie, CookieSecure: CookieSecureAuto, ClockSkew: auth.DefaultClockSkew, JWKSRefresh: auth.DefaultJWKSRefresh, Roles: map[string]auth.Grant{},
			AllowedHosts: []string{}},
		CORS: CORSConfig{AllowedOrigins: []string{}},
		Workflows: WorkflowsConfig{StallAfter: workflow.DefaultStallAfter, Sweep: workflow.DefaultSweep,
			Rules: []workflow.Rule{}, MetricTopics: []string{}, MaxTopicWorkflows: workflow.DefaultMaxTopicWorkflows,
			MaxTopicStateBytes: workflow.DefaultMaxTopicStateBytes, MaxWorkflows: workflow.DefaultMaxWorkflows},
		Notify: NotifyConfig{Webhooks: []notify.Webhook{}, Webhook: notify.Webhook{Kinds: []string{}, Topics: []string{}},
			Timeout:  notify.DefaultTimeout,
			RetryFor: notify.DefaultRetryFor, BackoffMax: notify.DefaultBackoffMax, ClaimAfter: notify.DefaultClaimAfter,
			MaxPending: notify.DefaultMaxPending, MaxDataBytes: notify.DefaultMaxDataBytes, Workers: notify.DefaultWorkers},
		Presence: PresenceConfig{Interval: hub.DefaultPresenceInterval, Expiry: hub.DefaultPresenceExpiry,
			MaxUsers: hub.DefaultPresenceMaxUsers},
	}
}
