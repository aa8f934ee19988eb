package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/pubsub"
)

// checkEmbedded refuses to keep events in the embedded development server on an address other machines can reach,
// unless the operator asked for it: --demo, or redis.embedded: true.
func checkEmbedded(cfg config.Config, demo bool) error {
	if cfg.Redis.URL != "" || cfg.Redis.Embedded || demo || config.IsLoopback(cfg.Listen) {
		return nil
	}
	return fmt.Errorf("listen %s is not a loopback address and redis.url is empty, so events would live in the embedded "+
		"development server and vanish with the process: set redis.url (HUB_REDIS_URL), or redis.embedded: true "+
		"(HUB_REDIS_EMBEDDED=true) to mean it", cfg.Listen)
}

// checkRedis tells at start, as an error line, that Redis cannot be reached or refuses the credentials. The hub
// serves anyway (not ready until Redis answers): Redis may be starting next to it.
func checkRedis(rdb redis.UniversalClient, url string, log zerolog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := rdb.Ping(ctx).Err()
	if err == nil {
		return
	}
	msg := "redis unreachable at start: serving, not ready until it answers"
	if redis.HasErrorPrefix(err, "WRONGPASS") || redis.HasErrorPrefix(err, "NOAUTH") || strings.Contains(err.Error(), "AUTH") {
		msg = "redis refused the credentials in redis.url: serving, not ready until they are right"
	}
	log.Error().Err(err).Str("redis", pubsub.RedactURL(url)).Msg(msg)
}

// stamp adds the time with milliseconds to every line. zerolog's own Timestamp follows a process-wide format
// (seconds by default), and nothing here sets zerolog's globals.
type stamp struct{}

func (stamp) Run(e *zerolog.Event, _ zerolog.Level, _ string) {
	e.Str(zerolog.TimestampFieldName, time.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00"))
}

// redisLogger takes go-redis's own log lines ("redis: connection pool: failed to dial...") as warnings.
type redisLogger struct{ log zerolog.Logger }

func (l redisLogger) Printf(_ context.Context, format string, v ...any) {
	l.log.Warn().Msg(strings.TrimSpace(fmt.Sprintf(format, v...)))
}
