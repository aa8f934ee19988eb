package config

import (
	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/pubsub"
	"github.com/syncverse/hub/sse"
)

// The settings of each part, read from the configuration in one place, so serve and the tests that build the parts
// without run cannot drift apart. What is not configuration (loggers, metrics, the hooks between parts) the caller
// adds.

// SubscriberConfig is the pub/sub subscriber's share of the configuration.
func (c Config) SubscriberConfig() pubsub.SubscriberConfig {
	return pubsub.SubscriberConfig{
		Prefix: c.Redis.Prefix, MaxEventBytes: c.Limits.MaxEventBytes, TailCheck: c.Redis.TailCheck,
		MaxPageBytes: c.Limits.MaxPageBytes, MaxReads: c.Limits.MaxStoreReads, MaxSnapshot: c.Limits.MaxSnapshotBytes,
		Sharded: c.Redis.ShardedPubSub,
	}
}

// HubConfig is the hub's share.
func (c Config) HubConfig() hub.Config {
	return hub.Config{ClientBuffer: c.SSE.ClientBuffer, MaxReplay: c.Limits.MaxReplay}
}

// PresenceParts is presence's share; hubID names this hub's entries (unique per process).
func (c Config) PresenceParts(hubID string) hub.PresenceConfig {
	return hub.PresenceConfig{Hub: hubID, Interval: c.Presence.Interval, Expiry: c.Presence.Expiry, MaxUsers: c.Presence.MaxUsers}
}

// PublisherConfig is the publisher's share, for serve and for hub publish.
func (c Config) PublisherConfig() pubsub.PublisherConfig {
	// The Publisher's zero values mean its defaults; the configuration's 0 means none.
	retry, migration := c.Redis.PublishRetry, c.Redis.MigrationRetry
	if retry == 0 {
		retry = -1
	}
	if migration == 0 {
		migration = -1
	}
	return pubsub.PublisherConfig{
		Prefix: c.Redis.Prefix, MaxLen: c.History.MaxLen, MaxAge: c.History.MaxAge, MaxEventBytes: c.Limits.MaxEventBytes,
		Sharded: c.Redis.ShardedPubSub, IdempotencyTTL: c.History.IdempotencyTTL, RetryBudget: retry,
		MigrationRetry: migration,
	}
}

// EventsConfig is the /events handler's share.
func (c Config) EventsConfig() sse.Config {
	return sse.Config{
		Heartbeat: c.SSE.Heartbeat, Retry: c.SSE.Retry, WriteTimeout: c.SSE.WriteTimeout,
		MaxTopics: c.Limits.MaxTopicsPerStream, MaxCursorBytes: c.Limits.MaxCursorBytes,
		MaxHistory: c.Limits.MaxReplay, NoDetach: !c.SSE.Detach,
	}
}
