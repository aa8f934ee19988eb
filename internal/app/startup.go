package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/internal/server"
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

// openListener opens the hub's listener on cfg.Listen. For the demo, a default address another process holds is
// traded for a free port on the same host, with a warning that says so, so that `go run . --demo` starts on a busy
// machine; an address the operator chose, or any address without --demo, is an error naming the setting that moves
// it.
func openListener(ctx context.Context, cfg config.Config, demo bool, log zerolog.Logger) (net.Listener, error) {
	ln, err := server.Listen(ctx, cfg.Listen, cfg.SSE.WriteTimeout)
	if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
		return ln, err
	}
	if !demo || cfg.Listen != config.Default().Listen {
		return nil, fmt.Errorf("%w: another process holds %s; move the hub with --listen ADDR (HUB_LISTEN, listen in the "+
			"config file)", err, cfg.Listen)
	}
	ln, ferr := server.Listen(ctx, freePortOf(cfg.Listen), cfg.SSE.WriteTimeout)
	if ferr != nil {
		return nil, errors.Join(err, ferr)
	}
	log.Warn().Str("taken", cfg.Listen).Str("addr", ln.Addr().String()).
		Msg("demo: the default listen address is taken; listening on a free port instead (--listen chooses one)")
	return ln, nil
}

// startEmbedded starts the embedded Redis-compatible server on addr, or for the demo, when addr is the default and
// taken, on a free port of the same host, with a warning that names it (hub publish --redis-url reaches it there).
func startEmbedded(addr string, demo bool, log zerolog.Logger) (*miniredis.Miniredis, error) {
	m := miniredis.NewMiniRedis()
	err := m.StartAddr(addr)
	if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
		return m, err
	}
	if !demo || addr != config.Default().Redis.EmbeddedAddr {
		return nil, fmt.Errorf("%w: another process holds %s; move the embedded Redis with redis.embedded_addr "+
			"(HUB_REDIS_EMBEDDED_ADDR), or set redis.url (--redis-url) to use a real Redis", err, addr)
	}
	m = miniredis.NewMiniRedis()
	if ferr := m.StartAddr(freePortOf(addr)); ferr != nil {
		return nil, errors.Join(err, ferr)
	}
	log.Warn().Str("taken", addr).Str("addr", m.Addr()).Str("redis_url", "redis://"+m.Addr()+"/0").
		Msg("demo: the embedded Redis's default address is taken; it listens on a free port instead (hub publish --redis-url redis://" + m.Addr() + "/0 reaches it)")
	return m, nil
}

// freePortOf is addr's host with port 0: the kernel picks a free one.
func freePortOf(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return net.JoinHostPort(host, "0")
}
