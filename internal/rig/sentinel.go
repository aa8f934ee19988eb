package rig

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// MasterName is the name the sentinels monitor the master under.
const MasterName = "hubmaster"

// SentinelOptions shape a Sentinel  The zero value is one sentinel, no passwords, a master declared down after 1 s.
type SentinelOptions struct {
	// Sentinels is how many sentinel processes watch the master (default 1); the quorum is a majority of them.
	Sentinels int
	// Password is set on the master and the replica (requirepass, masterauth) and given to the sentinels (auth-pass).
	Password string
	// SentinelPassword is every sentinel's own requirepass, which the sentinels also use among themselves.
	SentinelPassword string
	// DownAfter is sentinel's down-after-milliseconds (default 1 s).
	DownAfter time.Duration
	// FailoverTimeout is sentinel's failover-timeout (default 10 s).
	FailoverTimeout time.Duration
	// ReplicaOf, when set, returns the address the replica replicates from, given the master's (a Link in front of
	// it, to make the replication link slow or cut it); by default the replica follows the master directly.
	ReplicaOf func(master string) string
}

// Sentinel is a master, its replica and the sentinels watching them as MasterName, all real processes.
type Sentinel struct {
	Master, Replica *Redis
	Addr            string   // the first sentinel's
	Addrs           []string // every sentinel's
	opts            SentinelOptions
	t               TB
}

// StartSentinel starts a master, a replica and one sentinel (quorum 1), the master declared down after downAfter.
func StartSentinel(t TB, downAfter time.Duration) *Sentinel {
	t.Helper()
	return StartSentinelWith(t, SentinelOptions{DownAfter: downAfter})
}

// StartSentinelWith starts the rig opts describes and waits until every sentinel knows the replica and the other
// sentinels, so that a failover can be agreed on at once.
func StartSentinelWith(t TB, opts SentinelOptions) *Sentinel {
	t.Helper()
	needTools(t, "redis-server")
	opts.Sentinels = max(opts.Sentinels, 1)
	if opts.DownAfter <= 0 {
		opts.DownAfter = time.Second
	}
	if opts.FailoverTimeout <= 0 {
		opts.FailoverTimeout = 10 * time.Second
	}
	auth := []string{"--repl-diskless-sync-delay", "0"}
	if opts.Password != "" {
		auth = append(auth, "--requirepass", opts.Password, "--masterauth", opts.Password)
	}
	master := StartRedisWith(t, RedisOptions{Args: auth})
	from := master.Addr
	if opts.ReplicaOf != nil {
		from = opts.ReplicaOf(master.Addr)
	}
	host, port, _ := net.SplitHostPort(from)
	replica := StartRedisWith(t, RedisOptions{Args: append([]string{"--replicaof", host, port}, auth...)})
	// The sentinels read the master's INFO when they start and then every 10 s: a replica not yet in sync would stay
	// unknown to them for that long.
	if err := WaitInSync(replica.Addr, opts.Password, 15*time.Second); err != nil {
		t.Fatalf("%v", err)
	}
	s := &Sentinel{Master: master, Replica: replica, opts: opts, t: t}
	for range opts.Sentinels {
		s.Addrs = append(s.Addrs, s.startOne())
	}
	s.Addr = s.Addrs[0]
	s.waitKnown(20 * time.Second)
	return s
}

// startOne starts one sentinel process and returns its address.
func (s *Sentinel) startOne() string {
	t, o := s.t, s.opts
	addr := freeAddr(t)
	dir := t.TempDir()
	host, port, _ := net.SplitHostPort(s.Master.Addr)
	_, sport, _ := net.SplitHostPort(addr)
	var conf strings.Builder
	fmt.Fprintf(&conf, "port %s\nbind 127.0.0.1\ndir %s\nsentinel monitor %s %s %s %d\n", sport, dir, MasterName, host, port,
		o.Sentinels/2+1)
	fmt.Fprintf(&conf, "sentinel down-after-milliseconds %s %d\nsentinel failover-timeout %s %d\n",
		MasterName, o.DownAfter.Milliseconds(), MasterName, o.FailoverTimeout.Milliseconds())
	if o.Password != "" {
		fmt.Fprintf(&conf, "sentinel auth-pass %s %s\n", MasterName, o.Password)
	}
	if o.SentinelPassword != "" {
		fmt.Fprintf(&conf, "requirepass %s\nsentinel sentinel-pass %s\n", o.SentinelPassword, o.SentinelPassword)
	}
	path := filepath.Join(dir, "sentinel.conf") // sentinel rewrites it, so it lives in the rig's directory
	if err := os.WriteFile(path, []byte(conf.String()), 0o644); err != nil {
		t.Fatalf("write sentinel.conf: %v", err)
	}
	cmd := exec.Command("redis-server", path, "--sentinel")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sentinel: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	return addr
}

// waitKnown waits until every sentinel sees the replica and the other sentinels.
func (s *Sentinel) waitKnown(within time.Duration) {
	ctx := context.Background()
	err := PollWhy(ctx, within, 50*time.Millisecond, "every sentinel knows the replica and the others", func() (bool, string) {
		for _, a := range s.Addrs {
			sc := s.client(a)
			r, err := sc.Replicas(ctx, MasterName).Result()
			others, err2 := sc.Sentinels(ctx, MasterName).Result()
			_ = sc.Close()
			if err != nil || err2 != nil || len(r) != 1 || len(others) != len(s.Addrs)-1 {
				return false, fmt.Sprintf("sentinel on %s: replicas %v (%v), other sentinels %d of %d (%v)", a, r, err,
					len(others), len(s.Addrs)-1, err2)
			}
		}
		return true, ""
	})
	if err != nil {
		s.t.Fatalf("%v", err)
	}
}

func (s *Sentinel) client(addr string) *redis.SentinelClient {
	return redis.NewSentinelClient(&redis.Options{Addr: addr, Password: s.opts.SentinelPassword})
}

// URL is the hub's redis.url for the sentinels' master, with both passwords.
func (s *Sentinel) URL() string {
	u := "redis+sentinel://"
	if s.opts.Password != "" {
		u += ":" + url.QueryEscape(s.opts.Password) + "@"
	}
	u += strings.Join(s.Addrs, ",") + "/" + MasterName + "/0"
	if s.opts.SentinelPassword != "" {
		u += "?sentinel_password=" + url.QueryEscape(s.opts.SentinelPassword)
	}
	return u
}

// Client returns a client of one data node with the rig's password, closed with the
func (s *Sentinel) Client(n *Redis) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: n.Addr, Password: s.opts.Password})
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

// CurrentMaster is the address the first sentinel gives for the master now.
func (s *Sentinel) CurrentMaster() string {
	sc := s.client(s.Addr)
	defer sc.Close()
	a, err := sc.GetMasterAddrByName(context.Background(), MasterName).Result()
	if err != nil || len(a) != 2 {
		return ""
	}
	return net.JoinHostPort(a[0], a[1])
}

// Failover asks the first sentinel for a failover (SENTINEL FAILOVER).
func (s *Sentinel) Failover(ctx context.Context) error {
	sc := s.client(s.Addr)
	defer sc.Close()
	return sc.Failover(ctx, MasterName).Err()
}

// ByAddr returns the master or the replica by address.
func (s *Sentinel) ByAddr(addr string) *Redis {
	if s.Replica.Addr == addr {
		return s.Replica
	}
	return s.Master
}
