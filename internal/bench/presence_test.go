package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/redistest"
)

// TestPresenceScenarioCountsPresenceCommands: a small run of the presence scenario finds one entry per (topic, hub)
// and presence's commands in the idle window with presence on, and none with it off.
func TestPresenceScenarioCountsPresenceCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs hub processes")
	}
	bin := hubBinary(t, "redis-server")
	rs := redistest.StartReal(t, redistest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, on := range []bool{false, true} {
		res, err := RunPresence(ctx, PresenceSpec{HubBin: bin, RedisAddr: rs.Addr, Prefix: fmt.Sprintf("pt%v", on),
			Hubs: 2, Topics: 3, Streams: 12, Presence: on, Interval: time.Second, Window: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if on && (res.Entries != 6 || res.PresenceCommands <= 0) {
			t.Errorf("presence on: %+v; want 6 entries (3 topics x 2 hubs) and some presence commands", res)
		}
		if !on && (res.Entries != 0 || res.PresenceCommands != 0) {
			t.Errorf("presence off: %+v; want no entries and no presence commands", res)
		}
	}
}

// BenchmarkPresenceCost prints what presence costs Redis and the hubs in an idle window, presence off and on
// interleaved (off, on, off, on, ...; HUB_BENCH_PRESENCE_RUNS pairs, default 2), for the two loads of BENCHMARKS.md:
// (a) 1,000 streams on 10 topics over 2 hubs, (b) 10,000 streams on 5,000 topics over 2 hubs
// (HUB_BENCH_PRESENCE_B_STREAMS scales (b) down on a machine with fewer file descriptors).
//
//	go test -run '^$' -bench PresenceCost -benchtime 1x -timeout 60m ./internal/bench/
func BenchmarkPresenceCost(b *testing.B) {
	bin := hubBinary(b, "redis-server")
	rs := redistest.StartReal(b, redistest.Options{})
	runs := envInt("HUB_BENCH_PRESENCE_RUNS", 2)
	bStreams := envInt("HUB_BENCH_PRESENCE_B_STREAMS", 10000)
	window := 30 * time.Second
	loads := []struct {
		name            string
		streams, topics int
	}{{"a", 1000, 10}, {"b", bStreams, bStreams / 2}}
	for range b.N {
		for _, l := range loads {
			var cmds, all, cpu [2][]float64
			entries := 0
			for r := range runs {
				for i, on := range []bool{false, true} {
					res, err := RunPresence(context.Background(), PresenceSpec{HubBin: bin, RedisAddr: rs.Addr,
						Prefix: fmt.Sprintf("pb%s%d%v", l.name, r, on), Hubs: 2, Topics: l.topics, Streams: l.streams,
						Presence: on, Window: window})
					if err != nil {
						b.Fatal(err)
					}
					cmds[i], all[i], cpu[i] = append(cmds[i], res.PresenceCommands), append(all[i], res.AllCommands),
						append(cpu[i], res.HubCPUPercent)
					if on {
						entries = res.Entries
					}
					fmt.Printf("load %s run %d presence=%v: presence commands %.2f/s, all commands %.2f/s, hub CPU %.2f%%, entries %d\n",
						l.name, r, on, res.PresenceCommands, res.AllCommands, res.HubCPUPercent, res.Entries)
				}
			}
			fmt.Printf("load %s (%d streams, %d topics, 2 hubs, %v idle window, medians of %d): presence commands %.2f/s "+
				"(off %.2f/s); all commands on %.2f/s, off %.2f/s; hub CPU on %.2f%%, off %.2f%%; entries %d\n",
				l.name, l.streams, l.topics, window, runs, median(cmds[1]), median(cmds[0]), median(all[1]),
				median(all[0]), median(cpu[1]), median(cpu[0]), entries)
		}
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
