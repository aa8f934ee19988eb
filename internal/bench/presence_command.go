package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/rig"
)

// PresenceReport is the presence scenario's result: every run, off and on alternated, and the medians of each side.
type PresenceReport struct {
	Streams, Topics, Hubs int
	Window                time.Duration
	Runs                  []PresenceResult // off, on, on, off, off, on, ...
	Off, On               PresenceMedians
}

// PresenceMedians are one side's medians over its runs.
type PresenceMedians struct {
	PresenceCommands float64 // presence's Redis commands a second
	AllCommands      float64 // every Redis command a second
	HubCPUPercent    float64 // the hubs' CPU together, percent of one core
}

// CPUIncrease is the hubs' extra CPU with presence on, relative to off (0.05: 5 % more).
func (r *PresenceReport) CPUIncrease() float64 {
	if r.Off.HubCPUPercent == 0 {
		return 0
	}
	return r.On.HubCPUPercent/r.Off.HubCPUPercent - 1
}

// RunPresencePairs runs spec with presence off and on, pairs times, in the order off, on, on, off, off, on, ... so
// that a drift over the runs (the machine, Redis's memory) weighs on both sides alike; each run has its own key
// prefix. It tells each result to each as it comes (nil: nobody) and returns them with the medians of each side.
func RunPresencePairs(ctx context.Context, spec PresenceSpec, pairs int, each func(PresenceResult)) (*PresenceReport, error) {
	rep := &PresenceReport{Streams: spec.Streams, Topics: spec.Topics, Hubs: spec.Hubs, Window: spec.Window}
	var cmds, all, cpu [2][]float64
	prefix := spec.Prefix
	for r := range pairs {
		order := []bool{false, true}
		if r%2 == 1 {
			order = []bool{true, false}
		}
		for _, on := range order {
			i := 0
			if on {
				i = 1
			}
			spec.Presence, spec.Prefix = on, fmt.Sprintf("%s%d%v", prefix, r, on)
			res, err := RunPresence(ctx, spec)
			if err != nil {
				return nil, err
			}
			rep.Runs = append(rep.Runs, *res)
			cmds[i], all[i], cpu[i] = append(cmds[i], res.PresenceCommands), append(all[i], res.AllCommands),
				append(cpu[i], res.HubCPUPercent)
			if each != nil {
				each(*res)
			}
		}
	}
	rep.Off = PresenceMedians{median(cmds[0]), median(all[0]), median(cpu[0])}
	rep.On = PresenceMedians{median(cmds[1]), median(all[1]), median(cpu[1])}
	return rep, nil
}

// median is the middle of v (the mean of the two middle values when their number is even; 0 when empty).
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

// presenceDefaults: 1,000 streams on 10 topics over 2 hubs, a 30 s window, 2 pairs, unless the flags say otherwise.
func presenceDefaults(o *options, set map[string]bool) {
	setDefault(set, "topics", &o.topics, 10)
	setDefault(set, "hubs", &o.hubs, 2)
	setDefault(set, "repeat", &o.repeat, 2)
}

// presenceCommand is `hub-bench --scenario presence`: the hubs (--hub-bin) and their streams are its own, on
// --redis-url or on a redis-server it starts.
func presenceCommand(ctx context.Context, o *options, stdout io.Writer) error {
	if o.hubBin == "" {
		return errors.New("the presence scenario starts its hubs: give --hub-bin")
	}
	if err := raiseNoFile(o.conns); err != nil {
		return err
	}
	addr := ""
	if o.redisURL != "" {
		opt, err := redis.ParseURL(o.redisURL)
		if err != nil {
			return fmt.Errorf("--redis-url: %w", err)
		}
		addr = opt.Addr
	} else {
		owner := &rig.Owner{}
		defer owner.Close()
		if err := owner.Do(func() { addr = rig.StartRedisWith(owner, rig.RedisOptions{}).Addr }); err != nil {
			return fmt.Errorf("start redis-server (or give --redis-url): %w", err)
		}
	}
	spec := PresenceSpec{HubBin: o.hubBin, RedisAddr: addr, Prefix: o.prefix + "-presence", Hubs: o.hubs,
		Topics: o.topics, Streams: o.conns, Window: o.hold, DialConc: min(o.dialConc, 64), Env: o.hubEnv}
	for _, kv := range o.hubEnv {
		if v, ok := strings.CutPrefix(kv, "HUB_PRESENCE_INTERVAL="); ok {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("--hub-env %s: want a positive duration such as 10s", kv)
			}
			spec.Interval = d
		}
	}
	rep, err := RunPresencePairs(ctx, spec, o.repeat, func(r PresenceResult) {
		if !o.asJSON {
			fmt.Fprintf(stdout, "presence=%-5v presence commands %7.2f/s, all commands %7.2f/s, hub CPU %5.2f %%, entries %d\n",
				r.Presence, r.PresenceCommands, r.AllCommands, r.HubCPUPercent, r.Entries)
		}
	})
	if err != nil {
		return err
	}
	if o.asJSON {
		return json.NewEncoder(stdout).Encode(rep)
	}
	tw, row := table(stdout)
	row("scenario", "presence: %d streams on %d topics over %d hubs, %v idle windows, medians of %d pairs",
		rep.Streams, rep.Topics, rep.Hubs, rep.Window, o.repeat)
	row("presence commands", "%.2f/s (off: %.2f/s)", rep.On.PresenceCommands, rep.Off.PresenceCommands)
	row("all Redis commands", "on %.2f/s, off %.2f/s", rep.On.AllCommands, rep.Off.AllCommands)
	row("hub CPU", "on %.2f %%, off %.2f %% of a core (%+.1f %%)", rep.On.HubCPUPercent,
		rep.Off.HubCPUPercent, 100*rep.CPUIncrease())
	return tw.Flush()
}
