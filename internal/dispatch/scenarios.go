package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/lease"
)

// scenarioReport is what --crash and --pause print.
type scenarioReport struct {
	Scenario   string `json:"scenario"`
	TTL        string `json:"ttl"`
	RenewEvery string `json:"renew_every,omitempty"`
	ChildFence int64  `json:"child_fence"`
	Fence      int64  `json:"takeover_fence"`

	// From the SIGKILL (which follows the child's last lock event) or the SIGSTOP to the takeover.
	TakeoverMS   float64 `json:"takeover_ms"`
	SinceEventMS float64 `json:"since_last_lock_event_ms,omitempty"`
	// --crash: at least [0] after the last lock event, at most [1] after the kill (crashWindow).
	WindowMS      []float64   `json:"window_ms,omitempty"`
	PausedMS      float64     `json:"paused_ms,omitempty"`
	TakeoverWrite string      `json:"takeover_write"`
	ChildWrite    *resultLine `json:"child_write,omitempty"`
	Violations    []string    `json:"violations"`
}

type scenario struct {
	cfg    config
	client *redis.Client
	locker *lease.Locker
	reg    registry
	child  *childProc
	ready  readyLine
	rep    scenarioReport
}

// startScenario connects, starts the child and waits until it holds the lease.
func startScenario(ctx context.Context, cfg config, l launcher, role string) (*scenario, error) {
	client, err := connect(ctx, cfg.redisURL)
	if err != nil {
		return nil, err
	}
	locker := lease.New(client, lease.Options{
		TTL: cfg.ttl, RenewEvery: cfg.renewEvery, NoWatchdog: cfg.noWatchdog, MinReplicas: cfg.minReplicas, Prefix: cfg.prefix + "lease:",
		Holder: "dispatch-test",
	})
	s := &scenario{cfg: cfg, client: client, locker: locker, reg: registry{locker: locker, prefix: cfg.prefix, fenced: !cfg.noFence}}
	s.rep = scenarioReport{Scenario: role, TTL: cfg.ttl.String(), Violations: []string{}}
	if !cfg.noWatchdog {
		s.rep.RenewEvery = cfg.renewEvery.String()
	}
	if s.child, err = startChild(l, cfg, role); err != nil {
		s.close()
		return nil, err
	}
	ln, err := s.child.waitFor(ctx, "ready", "", 10*time.Second)
	if err == nil {
		err = json.Unmarshal(ln.data, &s.ready)
	}
	if err != nil {
		s.close()
		return nil, err
	}
	s.rep.ChildFence = s.ready.Fence
	return s, nil
}

func (s *scenario) close() {
	if s.child != nil {
		s.child.stop()
	}
	_ = s.locker.Close()
	if !s.cfg.keep {
		_ = cleanup(s.client, s.cfg.prefix)
	}
	_ = s.client.Close()
}

// takeOver acquires the entity the child held and performs the fenced write; it returns when the acquisition was.
func (s *scenario) takeOver(ctx context.Context) (time.Time, error) {
	actx, cancel := context.WithTimeout(ctx, 2*s.cfg.ttl+s.cfg.renewEvery+5*time.Second)
	defer cancel()
	ls, err := s.locker.Acquire(actx, "entity-0")
	if err != nil {
		return time.Time{}, fmt.Errorf("take over the crashed holder's lease (deadlock?): %w", err)
	}
	at := time.Now()
	defer ls.Release(context.WithoutCancel(ctx))
	s.rep.Fence = ls.Fence()
	exists, err := s.reg.exists(ls.Context(), "entity-0", ls.Fence())
	if err == nil && !exists {
		err = s.reg.create(ls.Context(), "entity-0", ls.Fence())
	}
	s.rep.TakeoverWrite = "accepted"
	if err != nil {
		s.rep.TakeoverWrite = err.Error()
		s.rep.Violations = append(s.rep.Violations, "the new holder's write failed: "+err.Error())
	}
	return at, nil
}

// runCrash kills a holder right after a lock event (a renewal with the watchdog), so its key has a full ttl left, and
// times the takeover: it must come after ttl and before ttl plus one renewal interval (Acquire never sleeps past the
// holder's remaining TTL), and nothing may wait forever.
func runCrash(ctx context.Context, cfg config, stdout io.Writer, l launcher) error {
	s, err := startScenario(ctx, cfg, l, roleCrash)
	if err != nil {
		return fmt.Errorf("dispatch-test --crash: %w", err)
	}
	defer s.close()
	state := lease.StateRenewed
	if cfg.noWatchdog {
		state = lease.StateAcquired
	}
	last, err := s.child.waitFor(ctx, "event", state, cfg.ttl+5*time.Second)
	if err != nil {
		return fmt.Errorf("dispatch-test --crash: %w", err)
	}
	_ = s.child.cmd.Process.Kill()
	killed := time.Now()
	at, err := s.takeOver(ctx)
	if err != nil {
		return fmt.Errorf("dispatch-test --crash: %w", err)
	}
	lo, hi := crashWindow(cfg)
	took, since := at.Sub(killed), at.Sub(last.at)
	s.rep.TakeoverMS, s.rep.SinceEventMS = ms(took), ms(since)
	s.rep.WindowMS = []float64{ms(lo), ms(hi)}
	if since < lo {
		s.rep.Violations = append(s.rep.Violations, fmt.Sprintf("takeover %v after the holder's last renewal event, want at least %v: it took a lease that was still valid", since, lo))
	}
	if took > hi {
		s.rep.Violations = append(s.rep.Violations, fmt.Sprintf("takeover %v after the kill, want within %v", took, hi))
	}
	return s.finish(stdout)
}

// crashWindow bounds a takeover after a crash. Safety: not before the ttl the holder's last renewal set runs out,
// counted from that renewal's event (the renewal came just before it, the kill some time after it, which a loaded
// machine stretches), less what the event can lag behind the renewal: a pipe and a scheduler, up to ttl/3 under
// load (a lease cut to half its ttl still fails). Liveness: within ttl and one renewal interval of the kill, plus
// the lateness of a waiting Acquire's wake-up on a loaded machine, max(150 ms, ttl/2).
func crashWindow(cfg config) (lo, hi time.Duration) {
	return cfg.ttl - max(50*time.Millisecond, cfg.ttl/3), cfg.ttl + cfg.renewEvery + max(150*time.Millisecond, cfg.ttl/2)
}

// runPause stops a holder with SIGSTOP past its ttl, takes over and writes, resumes the holder and lets it write: the
// resumed holder's write must be refused by the fence.
func runPause(ctx context.Context, cfg config, stdout io.Writer, l launcher) error {
	s, err := startScenario(ctx, cfg, l, rolePause)
	if err != nil {
		return fmt.Errorf("dispatch-test --pause: %w", err)
	}
	defer s.close()
	proc := s.child.cmd.Process
	if err := proc.Signal(syscall.SIGSTOP); err != nil {
		return fmt.Errorf("dispatch-test --pause: stop the holder: %w", err)
	}
	paused := time.Now()
	at, err := s.takeOver(ctx)
	_ = proc.Signal(syscall.SIGCONT)
	s.rep.PausedMS = ms(time.Since(paused))
	if err != nil {
		return fmt.Errorf("dispatch-test --pause: %w", err)
	}
	s.rep.TakeoverMS = ms(at.Sub(paused))
	if _, err := io.WriteString(s.child.stdin, "write\n"); err != nil {
		return fmt.Errorf("dispatch-test --pause: tell the holder to write: %w", err)
	}
	ln, err := s.child.waitFor(ctx, "result", "", 10*time.Second)
	if err != nil {
		return fmt.Errorf("dispatch-test --pause: %w", err)
	}
	var res resultLine
	if err := json.Unmarshal(ln.data, &res); err != nil {
		return fmt.Errorf("dispatch-test --pause: decode the holder's result: %w", err)
	}
	s.rep.ChildWrite = &res
	want := "stale-fence"
	if cfg.noFence {
		want = "table-exists" // without the fence nothing stops the write; only the table's existence does
	}
	if res.Write != want {
		s.rep.Violations = append(s.rep.Violations, fmt.Sprintf("resumed holder's write: %s, want %s", res.Write, want))
	}
	return s.finish(stdout)
}

func (s *scenario) finish(stdout io.Writer) error {
	if err := s.rep.print(stdout, s.cfg.jsonOut); err != nil {
		return fmt.Errorf("dispatch-test: write report: %w", err)
	}
	if len(s.rep.Violations) > 0 {
		return fmt.Errorf("dispatch-test --%s: %w: %v", s.rep.Scenario, ErrInvariant, s.rep.Violations)
	}
	return nil
}

func (r scenarioReport) print(w io.Writer, asJSON bool) error {
	if asJSON {
		return writeJSON(w, r)
	}
	tw, row := table(w)
	fmt.Fprintf(tw, "dispatch-test --%s: ttl %s, renew every %s\n", r.Scenario, r.TTL, or(r.RenewEvery, "(no watchdog)"))
	row("child's fence / takeover fence", fmt.Sprintf("%d / %d", r.ChildFence, r.Fence))
	if r.Scenario == roleCrash {
		row("takeover after SIGKILL", fmt.Sprintf("%.1f ms (at most %.0f ms)", r.TakeoverMS, r.WindowMS[1]))
		row("takeover after the last lock event", fmt.Sprintf("%.1f ms (at least %.0f ms)", r.SinceEventMS, r.WindowMS[0]))
		row("since the child's last lock event", fmt.Sprintf("%.1f ms", r.SinceEventMS))
	} else {
		row("takeover after SIGSTOP", fmt.Sprintf("%.1f ms", r.TakeoverMS))
		row("holder paused for", fmt.Sprintf("%.1f ms", r.PausedMS))
	}
	row("takeover's fenced write", r.TakeoverWrite)
	if r.ChildWrite != nil {
		row("resumed holder's write", fmt.Sprintf("%s (%s)", r.ChildWrite.Write, r.ChildWrite.Error))
		row("resumed holder knew its lease ended", fmt.Sprintf("%v %s", r.ChildWrite.LeaseEnded, r.ChildWrite.LeaseReason))
	}
	verdict := "OK"
	if len(r.Violations) > 0 {
		verdict = fmt.Sprintf("FAIL: %v", r.Violations)
	}
	row("verdict", verdict)
	return tw.Flush()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
