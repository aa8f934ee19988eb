// Package redistest starts a Redis server for tests: a real redis-server on a free loopback port when the binary is
// installed, the embedded miniredis otherwise. Test bodies are the same for both; fault tests ask for a real server
// with Real and can stop and restart it.
//
// It also starts rigs of real processes: a Cluster with replicas (and moves a slot by hand), a Sentinel with one
// or more sentinels and passwords, a master and replica pair, and a Link, a TCP proxy that delays and cuts a
// replication link. Their owner is a TB: a test, or an Owner outside tests (dispatch-test --failover), for
// which a rig that cannot start is an error rather than a failed test. Every process and goroutine started here
// ends with its owner's cleanups.
package redistest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/internal/testutil"
)

// Server is a Redis server owned by one test. Its address stays the same across Stop and Start, so clients that
// reconnect find it again.
type Server struct {
	Addr string

	t       TB
	dir     string
	aof     bool
	extra   []string
	mu      sync.Mutex
	cmd     *exec.Cmd
	waitErr chan error
	mini    *miniredis.Miniredis
}

// Options tune a real server.
type Options struct {
	// AppendOnly turns on AOF with fsync always, so a kill -9 keeps every acknowledged write.
	AppendOnly bool
	// Args are more redis-server arguments (e.g. "--replicaof", host, port), given at every start.
	Args []string
	// ClusterBus picks a port whose cluster bus port (port+10000) is free too.
	ClusterBus bool
}

var warnOnce sync.Once

// Start returns a running server, real when redis-server is installed, miniredis otherwise (and it says so once).
// The server is stopped when the test ends.
func Start(t TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		warnOnce.Do(func() {
			fmt.Fprintln(os.Stderr, "redistest: redis-server not found; falling back to the embedded miniredis")
		})
		return startMini(t)
	}
	return StartReal(t, Options{})
}

// StartReal returns a real redis-server, or skips the test when none is installed (failing it when CI is set).
func StartReal(t TB, opts Options) *Server {
	t.Helper()
	testutil.Require(t, "redis-server", "this test needs a real Redis", "apt-get install -y redis-server")
	addr := freeAddr(t)
	if opts.ClusterBus {
		addr = freeBusAddr(t)
	}
	s := &Server{t: t, dir: t.TempDir(), aof: opts.AppendOnly, extra: opts.Args, Addr: addr}
	if err := s.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

func startMini(t TB) *Server {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		t.Fatalf("start miniredis: %v", err)
	}
	t.Cleanup(m.Close)
	return &Server{t: t, Addr: m.Addr(), mini: m}
}

// Real reports whether this is a real redis-server (and so can be killed and restarted).
func (s *Server) Real() bool { return s.mini == nil }

// URL is the redis:// URL of the server.
func (s *Server) URL() string { return "redis://" + s.Addr + "/0" }

// Client returns a go-redis client for the server, closed when the test ends.
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

// Start (re)starts a real server on the same address and waits until it answers PING.
func (s *Server) Start() error {
	if s.mini != nil {
		return s.mini.Restart()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return fmt.Errorf("redis-server already running")
	}
	host, port, _ := net.SplitHostPort(s.Addr)
	args := []string{"--bind", host, "--port", port, "--dir", s.dir, "--save", "", "--daemonize", "no",
		"--logfile", filepath.Join(s.dir, "redis.log")}
	if s.aof {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	cmd := exec.Command("redis-server", append(args, s.extra...)...)
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd = cmd
	s.waitErr = make(chan error, 1)
	go func() { s.waitErr <- cmd.Wait() }()
	return s.waitReady(5 * time.Second)
}

func (s *Server) waitReady(within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if ping(s.Addr) == nil {
			return nil
		}
		select {
		case err := <-s.waitErr:
			s.cmd = nil
			return fmt.Errorf("redis-server exited: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("redis-server on %s not ready after %v", s.Addr, within)
}

// Kill stops the server at once (SIGKILL for a real one), as a crash would.
func (s *Server) Kill() {
	if s.mini != nil {
		s.mini.Close()
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.waitErr
	s.cmd = nil
}

// Stop stops the server; used as the test's cleanup too.
func (s *Server) Stop() { s.Kill() }

func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" && !strings.HasPrefix(line, "-NOAUTH") { // a server with requirepass is up too
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t TB) string {
	a, err := rig.FreeAddr()
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	return a
}

// freeBusAddr is freeAddr for a cluster node: port+10000, its cluster bus, was free a moment ago too.
func freeBusAddr(t TB) string {
	a, err := rig.FreeBusAddr()
	if err != nil {
		t.Fatalf("%v", err)
	}
	return a
}

// Prefix returns a key prefix unique to the test, so tests sharing a server do not see each other's keys.
func Prefix(t TB) string {
	return fmt.Sprintf("t%d", time.Now().UnixNano())
}

// Flush empties the server; handy between phases of one test.
func (s *Server) Flush(ctx context.Context) error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	return c.FlushAll(ctx).Err()
}

// Running reports whether the server is up (not killed or stopped).
func (s *Server) Running() bool {
	if s.mini != nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}
