package app

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/internal/rig"
)

// jsonLines parses the logger's output, one JSON object a line.
func jsonLines(t *testing.T, w *rig.SyncBuffer) []map[string]any {
	var out []map[string]any
	for l := range strings.SplitSeq(strings.TrimSpace(w.String()), "\n") {
		var m map[string]any
		if l != "" && json.Unmarshal([]byte(l), &m) != nil {
			t.Fatalf("log line %q is not JSON", l)
		}
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

// While a real Redis is down, go-redis's failed dials make one line when it goes down, one summary per period (still
// down, for how long, how many failed dials), and one when a dial succeeds again, instead of a line per dial.
func TestRedisOutageIsLoggedOnceSummedUpAndEnded(t *testing.T) {
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	var out rig.SyncBuffer
	l := newRedisLog(zerolog.New(&out), 30*time.Second)
	var clock sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l.now = func() time.Time { // each failed dial half a second after the last, as go-redis's pool retries
		clock.Lock()
		defer clock.Unlock()
		now = now.Add(500 * time.Millisecond)
		return now
	}
	redis.SetLogger(l)
	t.Cleanup(func() { redis.SetLogger(newRedisLog(zerolog.Nop(), time.Minute)) })
	// A pool as large as the outage: go-redis stops dialing once PoolSize dials in a row failed.
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr, DialerRetries: 1, MaxRetries: -1, PoolSize: 1000})
	defer rdb.Close()
	rdb.AddHook(dialWatch{l})
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	rs.Kill()
	const dials = 130 // 65 s of the fake clock
	deadline := time.Now().Add(60 * time.Second)
	for l.failedDials() < dials {
		if time.Now().After(deadline) {
			t.Fatalf("%d failed dials within 60s, want %d", l.failedDials(), dials)
		}
		_ = rdb.Ping(ctx).Err()
	}
	if err := rs.Start(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after the restart: %v", err)
	}
	lines := jsonLines(t, &out)
	var msgs []string
	for _, m := range lines {
		msgs = append(msgs, m["message"].(string))
	}
	want := []string{"redis unreachable: dials fail; summed up every 30s until one succeeds", "redis still unreachable",
		"redis still unreachable", "redis reachable again"}
	if strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Fatalf("an outage of %d failed dials logged %q, want %q", dials, msgs, want)
	}
	if lines[0]["level"] != "warn" || !strings.Contains(lines[0]["error"].(string), "failed to dial") ||
		lines[1]["failed_dials"] != 61.0 || lines[1]["down_for"] != "30s" || lines[2]["failed_dials"] != 121.0 ||
		lines[3]["level"] != "info" || lines[3]["failed_dials"].(float64) < dials {
		t.Errorf("the outage's lines = %v", lines)
	}
}

// Other go-redis lines pass as warnings, and none at all for a terminal client's context (hub publish says what
// failed in its own error).
func TestRedisLogPassesOtherLinesAndQuietsClients(t *testing.T) {
	var out rig.SyncBuffer
	l := newRedisLog(zerolog.New(&out), 30*time.Second)
	l.Printf(context.Background(), "redis: sentinel: new master=%q addr=%q", "hub", "10.0.0.2:6379")
	ctx, loud := quietRedis(context.Background())
	l.Printf(ctx, "redis: connection pool: failed to dial after %d attempts: %v", 5, "refused")
	loud()
	lines := jsonLines(t, &out)
	if len(lines) != 1 || lines[0]["level"] != "warn" || lines[0]["component"] != "go-redis" ||
		lines[0]["message"] != `redis: sentinel: new master="hub" addr="10.0.0.2:6379"` {
		t.Errorf("go-redis lines logged as %v, want the sentinel line alone, a warning", lines)
	}
}
