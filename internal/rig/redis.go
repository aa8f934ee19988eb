package rig

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
)

// Redis is a Redis server owned by one test. Its address stays the same across Stop and Start, so clients that
// reconnect find it again.
type Redis struct {
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

// RedisOptions tune a real server.
type RedisOptions struct {
	// AppendOnly turns on AOF with fsync always, so a kill -9 keeps every acknowledged write.
	AppendOnly bool
	// Args are more redis-server arguments (e.g. "--replicaof", host, port), given at every start.
	Args []string
	// ClusterBus picks a port whose cluster bus port (port+10000) is free too.
	ClusterBus bool
}

var warnOnce sync.Once

// StartRedis returns a running server, real when redis-server is installed, miniredis otherwise (and it says so once).
// The server is stopped when the test ends.
func StartRedis(t TB) *Redis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		warnOnce.Do(func() {
			fmt.Fprintln(os.Stderr, "rig: redis-server not found; falling back to the embedded miniredis")
		})
		return startMini(t)
	}
	return StartRedisWith(t, RedisOptions{})
}

// StartRedisWith returns a real redis-server, or skips the test when none is installed (failing it when CI is set).
func StartRedisWith(t TB, opts RedisOptions) *Redis {
	t.Helper()
	Require(t, "redis-server", "this test needs a real Redis", "apt-get install -y redis-server")
	addr := freeAddr(t)
	if opts.ClusterBus {
		addr = freeBusAddr(t)
	}
	s := &Redis{t: t, dir: t.TempDir(), aof: opts.AppendOnly, extra: opts.Args, Addr: addr}
	if err := s.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

func startMini(t TB) *Redis {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		t.Fatalf("start miniredis: %v", err)
	}
	t.Cleanup(m.Close)
	return &Redis{t: t, Addr: m.Addr(), mini: m}
}

// Real reports whether this is a real redis-server (and so can be killed and restarted).
func (s *Redis) Real() bool { return s.mini == nil }

// URL is the redis:// URL of the server.
func (s *Redis) URL() string { return "redis://" + s.Addr + "/0" }

// Client returns a go-redis client for the server, closed when the test ends.
func (s *Redis) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

// Start (re)starts a real server on the same address and waits until it answers PING.
func (s *Redis) Start() error {
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

func (s *Redis) waitReady(within time.Duration) error {
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
func (s *Redis) Kill() {
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
func (s *Redis) Stop() { s.Kill() }

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
	a, err := LoopbackAddr()
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	return a
}

// freeBusAddr is freeAddr for a cluster node: port+10000, its cluster bus, was free a moment ago too.
func freeBusAddr(t TB) string {
	a, err := FreeBusAddr()
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
func (s *Redis) Flush(ctx context.Context) error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	return c.FlushAll(ctx).Err()
}

// Running reports whether the server is up (not killed or stopped).
func (s *Redis) Running() bool {
	if s.mini != nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}
