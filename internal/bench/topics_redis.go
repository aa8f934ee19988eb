package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisPhase is what Redis did over one phase of a run, from INFO commandstats and INFO cpu before and after it.
// Commands run inside the publish script are counted by Redis under their own names too (the script's XREVRANGE,
// XADD, PUBLISH, …), so under load per-command figures include the script's share; idle, every command but the
// bench's INFO is the hub's.
type RedisPhase struct {
	Seconds     float64            `json:"seconds"`
	PerSecond   map[string]float64 `json:"calls_per_s"`   // by command, lower case; INFO left out
	UsecPerCall map[string]float64 `json:"usec_per_call"` // Redis's own time per call over the phase
	RedisCPU    float64            `json:"redis_cpu_percent"`
	// SubscriberPS counts the commands of the hub's live feed (see subscriberCommands; under load, less the
	// script's one XREVRANGE and XRANGE per run); OtherPS every other command but INFO and, under load, the script's:
	// idle, that is the hub's other work (the workflow sweeper's HGETALL, HGET and SCAN).
	SubscriberPS   float64 `json:"subscriber_commands_per_s"`
	OtherPS        float64 `json:"other_commands_per_s"`
	PerTopicMinute float64 `json:"subscriber_commands_per_topic_minute,omitempty"`
	OtherPerTopic  float64 `json:"other_commands_per_topic_minute,omitempty"`
	HubCPUPercent  float64 `json:"hub_cpu_percent,omitempty"`
}

type cmdStat struct {
	calls int64
	usec  int64
}

type redisSample struct {
	at   time.Time
	cmds map[string]cmdStat
	cpu  float64 // used_cpu_user + used_cpu_sys, seconds
}

func readRedis(ctx context.Context, rdb *redis.Client) (redisSample, error) {
	s := redisSample{at: time.Now(), cmds: map[string]cmdStat{}}
	info, err := rdb.Info(ctx, "commandstats", "cpu").Result()
	if err != nil {
		return s, fmt.Errorf("INFO commandstats: %w", err)
	}
	for line := range strings.Lines(info) {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "cmdstat_"); ok {
			name, fields, _ := strings.Cut(rest, ":")
			var st cmdStat
			for f := range strings.SplitSeq(fields, ",") {
				k, v, _ := strings.Cut(f, "=")
				switch k {
				case "calls":
					st.calls, _ = strconv.ParseInt(v, 10, 64)
				case "usec":
					st.usec, _ = strconv.ParseInt(v, 10, 64)
				}
			}
			s.cmds[strings.ToLower(name)] = st
		}
		for _, k := range []string{"used_cpu_user:", "used_cpu_sys:"} {
			if v, ok := strings.CutPrefix(line, k); ok {
				f, _ := strconv.ParseFloat(v, 64)
				s.cpu += f
			}
		}
	}
	return s, nil
}

// measureRedis runs fn between two readings of Redis.
func (r *topicsRun) measureRedis(ctx context.Context, fn func()) (*RedisPhase, error) {
	a, err := readRedis(ctx, r.b.rdb)
	if err != nil {
		return nil, err
	}
	fn()
	b, err := readRedis(ctx, r.b.rdb)
	if err != nil {
		return nil, err
	}
	return phaseBetween(a, b), nil
}

// subscriberCommands are those the hub's pubsub.Subscriber sends: subscriptions, their baselines and tail checks,
// repairs, pings of its connection. XREVRANGE and XRANGE are also what every publish script runs once each, and
// what the hub's /events handlers read for replays; idle, there are neither.
var subscriberCommands = map[string]bool{"xread": true, "xrevrange": true, "xrange": true, "subscribe": true,
	"unsubscribe": true, "ssubscribe": true, "sunsubscribe": true, "ping": true}

// scriptCommands are what the publish script runs besides those, and the script itself.
var scriptCommands = map[string]bool{"evalsha": true, "eval": true, "xadd": true, "publish": true, "spublish": true,
	"xtrim": true, "hset": true, "hsetnx": true, "hget": true, "hscan": true, "hexists": true, "hdel": true, "get": true, "set": true}

func phaseBetween(a, b redisSample) *RedisPhase {
	secs := b.at.Sub(a.at).Seconds()
	ph := &RedisPhase{Seconds: secs, PerSecond: map[string]float64{}, UsecPerCall: map[string]float64{},
		RedisCPU: (b.cpu - a.cpu) / secs * 100}
	scripts := b.cmds["evalsha"].calls - a.cmds["evalsha"].calls + b.cmds["eval"].calls - a.cmds["eval"].calls
	for name, st := range b.cmds {
		calls := st.calls - a.cmds[name].calls
		if calls <= 0 || name == "info" {
			continue
		}
		ph.PerSecond[name] = float64(calls) / secs
		ph.UsecPerCall[name] = float64(st.usec-a.cmds[name].usec) / float64(calls)
		switch {
		case name == "xrevrange" || name == "xrange":
			ph.SubscriberPS += float64(max(0, calls-scripts)) / secs // the script reads its stream's last and first entry
		case subscriberCommands[name]:
			ph.SubscriberPS += float64(calls) / secs
		case scripts == 0 || !scriptCommands[name]:
			ph.OtherPS += float64(calls) / secs
		}
	}
	return ph
}
