package rig

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Hub is one hub process. The binary reads its configuration from HUB_* variables; it prints
// {"message":"hub listening","url":"http://ADDR"} on stdout once it listens, which is how the port of --listen 127.0.0.1:0 is learnt.
type Hub struct {
	URL  string // http://127.0.0.1:PORT
	Addr string

	cmd       *exec.Cmd
	logs      *TailBuffer
	exited    chan struct{}
	err       error       // what Wait returned; read after exited is closed
	signalled atomic.Bool // Kill or Term was called: an exit after it is expected
}

// StartHub runs bin serve on listen (127.0.0.1:0 for a free port) with env (KEY=VALUE; the parent's HUB_* variables
// are not inherited) and waits until it listens and /readyz answers 200.
func StartHub(bin, listen string, env []string, within time.Duration) (*Hub, error) {
	cmd := exec.Command(bin, "serve", "--listen", listen)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HUB_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	SetParentDeath(cmd)
	h := &Hub{cmd: cmd, logs: &TailBuffer{Max: 256 << 10}, exited: make(chan struct{})}
	cmd.Stderr = h.logs
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() { // drains stdout until the process ends, so it never blocks on a full pipe
			var l struct{ Message, URL string }
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Message == "hub listening" {
				a := strings.TrimPrefix(l.URL, "http://")
				select {
				case addr <- a:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, out)
		h.err = cmd.Wait()
		close(h.exited)
	}()
	select {
	case h.Addr = <-addr:
	case <-h.exited:
		return nil, fmt.Errorf("hub exited before listening (%v); logs:\n%s", h.err, h.logs)
	case <-time.After(within):
		h.Kill()
		return nil, fmt.Errorf("hub not listening after %v; logs:\n%s", within, h.logs)
	}
	h.URL = "http://" + h.Addr
	if err := h.WaitReady(within); err != nil {
		h.Kill()
		return nil, err
	}
	return h, nil
}

// Pid is the process id.
func (h *Hub) Pid() int { return h.cmd.Process.Pid }

// WaitReady polls /readyz until it answers 200.
func (h *Hub) WaitReady(within time.Duration) error {
	err := Poll(context.Background(), within, 20*time.Millisecond, "hub "+h.URL+": /readyz 200", func() bool {
		return h.Ready() == http.StatusOK
	})
	if err != nil {
		return fmt.Errorf("%w; logs:\n%s", err, h.logs)
	}
	return nil
}

var probe = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// Ready returns the status of GET /readyz, 0 when the hub does not answer.
func (h *Hub) Ready() int {
	resp, err := probe.Get(h.URL + "/readyz")
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// Kill sends SIGKILL and waits for the process to be gone.
func (h *Hub) Kill() {
	h.signalled.Store(true)
	_ = h.cmd.Process.Signal(syscall.SIGKILL)
	<-h.exited
}

// Term sends SIGTERM and returns how long the hub took to exit, or an error past within.
func (h *Hub) Term(within time.Duration) (time.Duration, error) {
	start := time.Now()
	h.signalled.Store(true)
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, err
	}
	select {
	case <-h.exited:
		if h.err != nil {
			return time.Since(start), fmt.Errorf("hub exited after SIGTERM with %v", h.err)
		}
		return time.Since(start), nil
	case <-time.After(within):
		h.Kill()
		return time.Since(start), fmt.Errorf("hub still running %v after SIGTERM", within)
	}
}

// Stop ends the hub if it still runs (SIGTERM; SIGKILL if it is still there 15 s later); for cleanups. It reports a
// hub that did not exit cleanly: one that exited on its own, or with an error or too late after SIGTERM.
func (h *Hub) Stop() error {
	select {
	case <-h.exited:
		if !h.signalled.Load() {
			return fmt.Errorf("hub exited on its own (%v)", h.err)
		}
		return nil
	default:
	}
	_, err := h.Term(15 * time.Second)
	return err
}

// Logs returns the end of what the hub logged.
func (h *Hub) Logs() string { return h.logs.String() }

// Metrics scrapes /metrics and returns every sample, keyed by its series as printed (name{labels}).
func (h *Hub) Metrics(ctx context.Context) (map[string]float64, error) {
	return Metrics(ctx, probe, h.URL, "")
}

// TailBuffer keeps the end of what a process writes: once past Max bytes it drops all but the last Max/2. Writes and
// String may come from different goroutines.
type TailBuffer struct {
	Max int
	mu  sync.Mutex
	b   bytes.Buffer
}

func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b.Write(p)
	if t.b.Len() > t.Max {
		t.b.Next(t.b.Len() - t.Max/2)
	}
	return len(p), nil
}

func (t *TailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.String()
}
