package dispatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/syncverse/hub/internal/progress"
	"github.com/syncverse/hub/lease"
)

// report is what a dispatch run prints; the JSON names are stable for scripts.
type report struct {
	Mode        string  `json:"mode"` // watchdog or no-watchdog
	Fenced      bool    `json:"fenced"`
	Dispatches  int     `json:"dispatches"`
	Entities    int     `json:"entities"`
	Concurrency int     `json:"concurrency"`
	TTL         string  `json:"ttl"`
	RenewEvery  string  `json:"renew_every,omitempty"`
	Work        string  `json:"work"`
	ElapsedS    float64 `json:"elapsed_s"`

	Completed          int `json:"completed"`
	Aborted            int `json:"aborted"` // the lease ended during the work
	Errors             int `json:"errors"`
	Duplicates         int `json:"duplicates"` // pairs of executions of one entity that overlapped in time
	EntitiesDuplicated int `json:"entities_with_duplicates"`
	TablesCreated      int `json:"tables_created"`
	TableAlreadyExists int `json:"table_already_exists"`
	StaleFence         int `json:"stale_fence_rejected"`
	ReleasedExpired    int `json:"released_after_expiry"` // Release found the key already gone

	Release latency `json:"release_latency_ms"`

	LockEvents map[string]int `json:"lock_events"`
	FirstError string         `json:"first_error,omitempty"`
	Violations []string       `json:"violations"`
}

type latency struct {
	Avg float64 `json:"avg"`
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func summarize(cfg config, execs []execution, elapsed time.Duration, events map[string]int) report {
	r := report{
		Mode: "watchdog", Fenced: !cfg.noFence, Dispatches: cfg.dispatches, Entities: cfg.entities,
		Concurrency: cfg.concurrency, TTL: cfg.ttl.String(), RenewEvery: cfg.renewEvery.String(),
		Work: cfg.work.String(), ElapsedS: elapsed.Seconds(), LockEvents: events, Violations: []string{},
	}
	if cfg.noWatchdog {
		r.Mode, r.RenewEvery = "no-watchdog", ""
	}
	var releases []time.Duration
	byEntity := map[string][]execution{}
	for _, ex := range execs {
		if ex.err != nil && r.FirstError == "" {
			r.FirstError = ex.err.Error()
		}
		if ex.start.IsZero() {
			r.Errors++
			continue
		}
		byEntity[ex.entity] = append(byEntity[ex.entity], ex)
		releases = append(releases, ex.release)
		r.count(ex)
	}
	for _, list := range byEntity {
		if n := overlaps(list); n > 0 {
			r.Duplicates += n
			r.EntitiesDuplicated++
		}
	}
	r.Release = summarizeLatency(releases)
	r.Violations = r.violations(cfg)
	return r
}

func (r *report) count(ex execution) {
	switch {
	case ex.err != nil:
		r.Errors++
	case ex.aborted:
		r.Aborted++
	default:
		r.Completed++
	}
	if ex.created {
		r.TablesCreated++
	}
	if ex.tableErr {
		r.TableAlreadyExists++
	}
	if ex.stale {
		r.StaleFence++
	}
	if errors.Is(ex.releaseErr, lease.ErrExpired) || errors.Is(ex.releaseErr, lease.ErrLost) {
		r.ReleasedExpired++
	}
}

// overlaps counts the pairs of executions whose [start, end] intervals intersect: two holders at once.
func overlaps(list []execution) int {
	slices.SortFunc(list, func(a, b execution) int { return a.start.Compare(b.start) })
	n := 0
	for i := range list {
		for j := i + 1; j < len(list) && list[j].start.Before(list[i].end); j++ {
			n++
		}
	}
	return n
}

func summarizeLatency(ds []time.Duration) latency {
	if len(ds) == 0 {
		return latency{}
	}
	slices.Sort(ds)
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	rank := func(p float64) time.Duration { // nearest rank
		i := int(p*float64(len(ds))+0.999999) - 1
		return ds[max(0, min(i, len(ds)-1))]
	}
	return latency{Avg: ms(sum / time.Duration(len(ds))), P50: ms(rank(0.50)), P99: ms(rank(0.99)), Max: ms(ds[len(ds)-1])}
}

// violations lists what the watchdog mode promises and did not keep. A run without the watchdog promises nothing: it
// exists to show the incident.
func (r report) violations(cfg config) []string {
	v := []string{}
	if r.Errors > 0 {
		v = append(v, fmt.Sprintf("%d dispatches failed (first: %s)", r.Errors, r.FirstError))
	}
	if cfg.noWatchdog {
		return v
	}
	if r.Duplicates > 0 {
		v = append(v, fmt.Sprintf("%d duplicate executions with the watchdog", r.Duplicates))
	}
	if r.TableAlreadyExists > 0 {
		v = append(v, fmt.Sprintf("%d TableAlreadyExists with the watchdog", r.TableAlreadyExists))
	}
	if r.StaleFence > 0 || r.Aborted > 0 {
		v = append(v, fmt.Sprintf("%d leases lost, %d stale writes with the watchdog", r.Aborted, r.StaleFence))
	}
	return v
}

func (r report) print(w io.Writer, asJSON bool) error {
	if asJSON {
		return writeJSON(w, r)
	}
	tw, row := table(w)
	fmt.Fprintf(tw, "dispatch-test: %d dispatches over %d entities, concurrency %d, ttl %s, work %s, %s, fenced=%v\n",
		r.Dispatches, r.Entities, r.Concurrency, r.TTL, r.Work, r.modeText(), r.Fenced)
	row("elapsed", time.Duration(r.ElapsedS*float64(time.Second)).Round(time.Millisecond))
	row("completed / aborted / errors", fmt.Sprintf("%d / %d / %d", r.Completed, r.Aborted, r.Errors))
	row("duplicate executions", fmt.Sprintf("%d (overlapping holders of one entity; %d entities affected)",
		r.Duplicates, r.EntitiesDuplicated))
	row("TableAlreadyExists", r.TableAlreadyExists)
	row("stale-fence rejections", r.StaleFence)
	row("tables created", r.TablesCreated)
	row("released after expiry", r.ReleasedExpired)
	row("release latency avg", fmt.Sprintf("%.3f ms", r.Release.Avg))
	row("release latency p50", fmt.Sprintf("%.3f ms", r.Release.P50))
	row("release latency p99", fmt.Sprintf("%.3f ms", r.Release.P99))
	row("release latency max", fmt.Sprintf("%.3f ms", r.Release.Max))
	row("lock events", eventsText(r.LockEvents))
	row("verdict", r.verdict())
	return tw.Flush()
}

func (r report) modeText() string {
	if r.Mode == "watchdog" {
		return "watchdog every " + r.RenewEvery
	}
	return "no watchdog"
}

func (r report) verdict() string {
	switch {
	case len(r.Violations) > 0:
		return fmt.Sprintf("FAIL: %v", r.Violations)
	case r.Mode == "watchdog":
		return "OK: one holder per entity at a time"
	case r.Duplicates > 0:
		return "incident reproduced: the lock expired under running work"
	default:
		return "no overlap (work shorter than the ttl?)"
	}
}

func eventsText(m map[string]int) string {
	var parts []string
	for _, k := range []string{lease.StateAcquired, lease.StateRenewed, lease.StateReleased, lease.StateLost, lease.StateExpired} {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// writeJSON writes v indented, for --json.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table returns the writer of a printed report and a function that adds one "name  value" row to it.
func table(w io.Writer) (*tabwriter.Writer, func(k string, v any)) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	return tw, func(k string, v any) { fmt.Fprintf(tw, "  %s\t%v\n", k, v) }
}

// progressEvery is how often the progress line is redrawn.
const progressEvery = 250 * time.Millisecond

// tally is the run so far, for the progress line: the holders working now per entity (so that a second holder of
// one entity counts the moment it starts, as overlaps counts it afterwards), the dispatches finished, and the
// violations among them. Dispatches update it from their goroutines; the progress line reads it from its own.
type tally struct {
	cfg        config
	mu         sync.Mutex
	working    map[string]int
	running    int
	finished   int
	duplicates int
	failed     int // errors, and with the watchdog lost leases, stale writes and TableAlreadyExists
}

func newTally(cfg config) *tally { return &tally{cfg: cfg, working: map[string]int{}} }

// begin is a holder starting its work.
func (t *tally) begin(entity string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.duplicates += t.working[entity]
	t.working[entity]++
	t.running++
}

// end is a holder done with its work.
func (t *tally) end(entity string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.working[entity]--
	t.running--
}

// finish counts a dispatch that is over, released or failed.
func (t *tally) finish(ex execution) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.finished++
	switch {
	case ex.start.IsZero() || ex.err != nil:
		t.failed++
	case t.cfg.noWatchdog: // the run reproduces the incident; a lost lease is what it shows
	case ex.aborted || ex.stale || ex.tableErr:
		t.failed++
	}
}

// expected is how long the run should take: the dispatches of one entity take turns, min(concurrency, entities)
// at a time; without the watchdog the next one takes over when the ttl ends the lease.
func (t *tally) expected() time.Duration {
	parallel := min(t.cfg.concurrency, t.cfg.entities)
	each := t.cfg.work
	if t.cfg.noWatchdog {
		each = min(each, t.cfg.ttl)
	}
	return time.Duration((t.cfg.dispatches+parallel-1)/parallel) * each
}

func (t *tally) line(elapsed time.Duration) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := fmt.Sprintf("dispatch-test %s  completed %d/%d  running %d", progress.Clock(elapsed, t.expected()),
		t.finished, t.cfg.dispatches, t.running)
	if t.cfg.noWatchdog {
		return s + fmt.Sprintf("  duplicates %d  errors %d", t.duplicates, t.failed)
	}
	return s + fmt.Sprintf("  violations %d", t.failed+t.duplicates)
}
