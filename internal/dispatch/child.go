package dispatch

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/lease"
)

// Child roles. A child holds the lease of one entity and reports on stdout, one "<kind> <json>" line each: "event"
// for its lock events, "ready" once it holds the lease and has read the registry, "result" after its write.
const (
	roleCrash = "crash" // hold the lease until killed
	rolePause = "pause" // hold it, then write when told to on stdin (after the parent has paused and resumed it)
)

// readyLine and resultLine are the child's reports.
type readyLine struct {
	Fence  int64 `json:"fence"`
	Exists bool  `json:"exists"`
}

type resultLine struct {
	Write       string `json:"write"` // accepted, stale-fence, table-exists, error
	Error       string `json:"error,omitempty"`
	LeaseEnded  bool   `json:"lease_ended_before_write"`
	LeaseReason string `json:"lease_reason,omitempty"`
}

// lineWriter serializes the child's lines (the announce goroutine and the main goroutine both write) and is the
// lease's publisher.
type lineWriter struct{ rig.LineWriter }

// Publish makes the child's lock events visible to the parent, which times the crash from them.
func (lw *lineWriter) Publish(_ context.Context, _, _ string, data []byte) (string, error) {
	lw.Line("event", json.RawMessage(data))
	return "", nil
}

func runChild(ctx context.Context, cfg config, stdout io.Writer) error {
	client, err := connect(ctx, cfg.redisURL)
	if err != nil {
		return fmt.Errorf("dispatch-test child: %w", err)
	}
	defer client.Close()
	out := &lineWriter{rig.LineWriter{W: stdout}}
	locker := lease.New(client, lease.Options{
		TTL: cfg.ttl, RenewEvery: cfg.renewEvery, NoWatchdog: cfg.noWatchdog, MinReplicas: cfg.minReplicas, Prefix: cfg.prefix + "lease:",
		Holder: "child-" + strconv.Itoa(os.Getpid()), Announcer: out,
	})
	defer locker.Close()
	reg := registry{locker: locker, prefix: cfg.prefix, fenced: !cfg.noFence}

	ls, err := locker.Acquire(ctx, cfg.entity)
	if err != nil {
		return fmt.Errorf("dispatch-test child: %w", err)
	}
	defer ls.Release(context.WithoutCancel(ctx))
	exists, err := reg.exists(ctx, cfg.entity, ls.Fence())
	if err != nil {
		return fmt.Errorf("dispatch-test child: %w", err)
	}
	out.Line("ready", readyLine{Fence: ls.Fence(), Exists: exists})

	// The parent speaks on stdin; its end (EOF) means the parent is gone, and the child must not outlive it.
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if cfg.child == rolePause && in.Text() == "write" {
			out.Line("result", pausedWrite(reg, ls, cfg.entity))
		}
	}
	return nil
}

// pausedWrite is the write of a holder that decided to write before it was paused: it does not look at its lease
// again, exactly as a process stopped between its check and its write cannot. Only the fence can stop it.
func pausedWrite(reg registry, ls *lease.Lease, entity string) resultLine {
	r := resultLine{LeaseEnded: ls.Err() != nil}
	if r.LeaseEnded {
		r.LeaseReason = ls.Err().Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := reg.create(ctx, entity, ls.Fence())
	switch {
	case err == nil:
		r.Write = "accepted"
	case errors.Is(err, lease.ErrStaleFence):
		r.Write = "stale-fence"
	case errors.Is(err, errTableExists):
		r.Write = "table-exists"
	default:
		r.Write = "error"
	}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

// childLine is one line the parent read from a child, with the time it was read.
type childLine struct {
	kind string
	data []byte
	at   time.Time
}

// childProc is a running child. The reader goroutine is owned by stop, which drains it before Wait.
type childProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan childLine
	errOut *rig.SyncBuffer
	once   sync.Once
}

func startChild(l launcher, cfg config, role string) (*childProc, error) {
	args := []string{"--child", role, "--entity", "entity-0", "--redis-url", cfg.redisURL,
		"--prefix", cfg.prefix, "--ttl", cfg.ttl.String(), "--renew", cfg.renewEvery.String(),
		"--no-watchdog=" + strconv.FormatBool(cfg.noWatchdog), "--no-fence=" + strconv.FormatBool(cfg.noFence),
		"--min-replicas", strconv.Itoa(cfg.minReplicas)}
	cmd := exec.Command(l.exe, args...)
	cmd.Env = append(os.Environ(), l.env...)
	c := &childProc{cmd: cmd, lines: make(chan childLine, 64), errOut: &rig.SyncBuffer{}}
	cmd.Stderr = c.errOut
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("child stdout: %w", err)
	}
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("child stdin: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start child %s: %w", l.exe, err)
	}
	go c.read(stdout)
	return c, nil
}

func (c *childProc) read(r io.Reader) {
	defer close(c.lines)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		kind, data, _ := strings.Cut(sc.Text(), " ")
		c.lines <- childLine{kind: kind, data: []byte(data), at: time.Now()}
	}
}

// waitFor returns the first line of kind (and, for events, of state) within timeout.
func (c *childProc) waitFor(ctx context.Context, kind, state string, timeout time.Duration) (childLine, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case ln, ok := <-c.lines:
			if !ok {
				return ln, fmt.Errorf("child exited before %s %s: %s", kind, state, c.stderrText())
			}
			if ln.kind != kind {
				continue
			}
			var ev lease.Event
			if state == "" || (json.Unmarshal(ln.data, &ev) == nil && ev.State == state) {
				return ln, nil
			}
		case <-t.C:
			return childLine{}, fmt.Errorf("no %s %s from the child within %v", kind, state, timeout)
		case <-ctx.Done():
			return childLine{}, context.Cause(ctx)
		}
	}
}

// stop kills the child if it still runs and reaps it. It is idempotent.
func (c *childProc) stop() {
	c.once.Do(func() {
		_ = c.cmd.Process.Kill()
		_ = c.stdin.Close()
		for range c.lines { // the reader ends at EOF; Wait must not close the pipe under it
		}
		_ = c.cmd.Wait()
	})
}

func (c *childProc) stderrText() string {
	return strings.TrimSpace(c.errOut.String())
}
