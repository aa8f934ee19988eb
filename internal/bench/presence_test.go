package bench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
)

// TestPresenceScenarioCountsPresenceCommands: a small run of the presence scenario finds one entry per (topic, hub)
// and presence's commands in the idle window with presence on, and none with it off.
func TestPresenceScenarioCountsPresenceCommands(t *testing.T) {
	bin := scenarioHub(t, "runs hub processes")
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
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
// interleaved (off, on, on, off, ...; HUB_BENCH_PRESENCE_RUNS pairs, default 2), for the two loads of BENCHMARKS.md:
// (a) 1,000 streams on 10 topics over 2 hubs, (b) 10,000 streams on 5,000 topics over 2 hubs
// (HUB_BENCH_PRESENCE_B_STREAMS scales (b) down on a machine with fewer file descriptors).
//
//	go test -run '^$' -bench PresenceCost -benchtime 1x -timeout 60m ./internal/bench/
func BenchmarkPresenceCost(b *testing.B) {
	bin := hubBinary(b, "redis-server")
	rs := rig.StartRedisWith(b, rig.RedisOptions{})
	runs := envInt("HUB_BENCH_PRESENCE_RUNS", 2)
	bStreams := envInt("HUB_BENCH_PRESENCE_B_STREAMS", 10000)
	window := 30 * time.Second
	loads := []struct {
		name            string
		streams, topics int
	}{{"a", 1000, 10}, {"b", bStreams, bStreams / 2}}
	for range b.N {
		for _, l := range loads {
			spec := PresenceSpec{HubBin: bin, RedisAddr: rs.Addr, Prefix: "pb" + l.name, Hubs: 2, Topics: l.topics,
				Streams: l.streams, Window: window}
			rep, err := RunPresencePairs(context.Background(), spec, runs, func(r PresenceResult) {
				fmt.Printf("load %s presence=%v: presence commands %.2f/s, all commands %.2f/s, hub CPU %.2f%%, entries %d\n",
					l.name, r.Presence, r.PresenceCommands, r.AllCommands, r.HubCPUPercent, r.Entries)
			})
			if err != nil {
				b.Fatal(err)
			}
			fmt.Printf("load %s (%d streams, %d topics, 2 hubs, %v idle window, medians of %d): presence commands %.2f/s "+
				"(off %.2f/s); all commands on %.2f/s, off %.2f/s; hub CPU on %.2f%%, off %.2f%% (%+.1f%%)\n",
				l.name, l.streams, l.topics, window, runs, rep.On.PresenceCommands, rep.Off.PresenceCommands,
				rep.On.AllCommands, rep.Off.AllCommands, rep.On.HubCPUPercent, rep.Off.HubCPUPercent, 100*rep.CPUIncrease())
		}
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// TestPresenceScenarioPrintsBothSides: `hub-bench --scenario presence` runs presence off and on, prints each run and
// the medians, and with presence on finds presence commands where off has none.
func TestPresenceScenarioPrintsBothSides(t *testing.T) {
	bin := scenarioHub(t, "runs hub processes")
	args := []string{"--scenario", "presence", "--hub-bin", bin, "--conns", "12", "--topics", "3", "--hold", "3s",
		"--repeat", "1", "--hub-env", "HUB_PRESENCE_INTERVAL=1s", "--json"}
	var rep PresenceReport
	if _, err := runJSON(t, 2*time.Minute, args, &rep, func() bool { return true }); err != nil {
		t.Fatalf("hub bench %q: %v", args, err)
	}
	if len(rep.Runs) != 2 || rep.Runs[0].Presence || !rep.Runs[1].Presence || rep.Hubs != 2 {
		t.Fatalf("runs %+v, want off then on over 2 hubs", rep)
	}
	if rep.Off.PresenceCommands != 0 || rep.On.PresenceCommands <= 0 || rep.Runs[1].Entries != 6 {
		t.Fatalf("medians off %+v, on %+v, entries %d; want none off, some on, 6 entries (3 topics x 2 hubs)",
			rep.Off, rep.On, rep.Runs[1].Entries)
	}
	var bad bytes.Buffer
	err := command(t.Context(), flag.NewFlagSet("hub bench", flag.ContinueOnError), []string{"--scenario", "presence"}, &bad, &bad, false)
	if err == nil || !strings.Contains(err.Error(), "--hub-bin") {
		t.Fatalf("without --hub-bin: %v, want an error naming --hub-bin", err)
	}
}
