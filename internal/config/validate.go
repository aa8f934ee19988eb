package config

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/eventschema"
	"github.com/syncverse/hub/pubsub"
)

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
	check(c.SSE.TrimAfterBurst >= 0, "sse.trim_after_burst: must not be negative (0 turns trimming off)")
	check(c.History.MaxLen >= 1, "history.max_len: must be at least 1")
	check(c.History.MaxAge >= 0, "history.max_age: must not be negative")
	check(c.History.IdempotencyTTL >= time.Millisecond && c.History.IdempotencyTTL <= pubsub.MaxIdempotencyTTL,
		"history.idempotency_ttl: must be 1ms to %v", pubsub.MaxIdempotencyTTL)
	if err := eventschema.CheckMode(c.Events.Validation); err != nil {
		errs = append(errs, fmt.Errorf("events.validation: %w", err))
	}
	check(c.Events.InvalidLogLines >= 1, "events.invalid_log_lines: must be at least 1 (every bad event is counted in hub_events_invalid_total whatever it is)")
	check(c.Redis.PublishRetry >= 0, "redis.publish_retry: must not be negative (0: no retries)")
	check(c.Redis.MigrationRetry >= 0, "redis.migration_retry: must not be negative (0: migrations get redis.publish_retry)")
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
	check(c.Auth.JWKSURL == "" || c.Auth.Audience != "",
		"auth.audience: must be set with auth.jwks_url, or the identity provider's tokens for any of its other clients are accepted too: give the hub's client id (the aud the IdP puts in tokens for the hub), or \"*\" to accept any audience on purpose")
	check(c.Auth.CookieSecure == CookieSecureAuto || c.Auth.CookieSecure == CookieSecureAlways || c.Auth.CookieSecure == CookieSecureNever,
		"auth.cookie_secure: %q is not one of auto, always, never", c.Auth.CookieSecure)
	errs = append(errs, c.Auth.validate(len(c.Limits.TrustedProxies) > 0))
	check(c.Metrics.Listen == "" || c.Metrics.Listen != c.Listen, "metrics.listen: must differ from listen")
	check((c.TLS.CertFile == "") == (c.TLS.KeyFile == ""), "tls.cert_file, tls.key_file: set both or neither")
	check(!c.H2C || c.TLS.CertFile == "", "h2c: only without tls (over TLS, HTTP/2 is negotiated by itself)")
	errs = append(errs, c.Workflows.validate(), c.Notify.validate(), c.Presence.validate())
	return errors.Join(errs...)
}

func (p PresenceConfig) validate() error {
	var errs []error
	if p.Interval <= 0 {
		errs = append(errs, errors.New("presence.interval: must be positive"))
	}
	if p.Expiry <= p.Interval {
		errs = append(errs, fmt.Errorf("presence.expiry: %v must be longer than presence.interval (%v), or live entries expire between refreshes", p.Expiry, p.Interval))
	}
	if p.MaxUsers < 1 || p.MaxUsers > 10000 {
		errs = append(errs, fmt.Errorf("presence.max_users: %d must be 1 to 10000", p.MaxUsers))
	}
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
		if err := hub.ValidatePattern(p); err != nil {
			errs = append(errs, fmt.Errorf("workflows.metric_topics[%d]: %w", i, err))
		}
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"max_topic_workflows", w.MaxTopicWorkflows}, {"max_topic_state_bytes", w.MaxTopicStateBytes},
		{"max_workflows", w.MaxWorkflows}} {
		if c.v <= 0 {
			errs = append(errs, fmt.Errorf("workflows.%s: must be positive", c.name))
		}
	}
	if w.MaxWorkflows > 0 && w.MaxTopicWorkflows > w.MaxWorkflows {
		errs = append(errs, fmt.Errorf("workflows.max_topic_workflows: %d must be at most workflows.max_workflows (%d)",
			w.MaxTopicWorkflows, w.MaxWorkflows))
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
	if n.MaxPending <= 0 {
		errs = append(errs, errors.New("notify.max_pending: must be positive"))
	}
	if n.MaxDataBytes < 256 {
		errs = append(errs, fmt.Errorf("notify.max_data_bytes: %d must be at least 256", n.MaxDataBytes))
	}
	if n.Workers < 1 || n.Workers > 64 {
		errs = append(errs, fmt.Errorf("notify.workers: %d must be from 1 to 64", n.Workers))
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
