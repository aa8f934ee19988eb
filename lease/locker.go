package lease

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/internal/delay"
)

// Sentinel errors. Leases end with one of ErrLost, ErrExpired or ErrReleased as the cause of their Context.
var (
	// ErrHeld is returned by TryAcquire when another holder has the key.
	ErrHeld = errors.New("lease: held by another holder")
	// ErrLost means the watchdog found the key gone or owned by another holder: someone else may be working now.
	ErrLost = errors.New("lease: lost")
	// ErrExpired means the lease ran past its TTL without a successful renewal (Redis unreachable, or no watchdog).
	ErrExpired = errors.New("lease: expired")
	// ErrReleased is the cause of a lease's Context after a successful Release.
	ErrReleased = errors.New("lease: released")
	// ErrStaleFence is returned by a fenced operation whose token is lower than one the resource has already seen.
	ErrStaleFence = errors.New("lease: stale fence")
	// ErrClosed is returned by Acquire and TryAcquire after Close.
	ErrClosed = errors.New("lease: locker closed")
)

// Announcer publishes lock events. The hub's pubsub.Publisher satisfies it. Publish may be called from the Locker's
// announce goroutine only, one call at a time, with a context that carries a short deadline.
type Announcer interface {
	Publish(ctx context.Context, topic, eventType string, data []byte) (string, error)
}

// Options configure a Locker. The zero value of every field means its documented default.
type Options struct {
	// TTL is how long a lease lives without renewal. Default 30s.
	TTL time.Duration
	// RenewEvery is the watchdog's period. Default TTL/3, so two renewals may fail before the lease expires.
	RenewEvery time.Duration
	// NoWatchdog turns renewal off: the lease then expires TTL after acquisition whether the work is done or not.
	// It exists to reproduce the incident the watchdog fixes; nothing in the hub should set it.
	NoWatchdog bool
	// Holder names this process in the stored token and in lock events. Default "<hostname>-<pid>".
	Holder string
	// Prefix is prepended to every key. Default "hub:lease:".
	Prefix string
	// Announcer receives lock events; nil means none are published.
	Announcer Announcer
	// Topic is where lock events go. Default "locks".
	Topic string
	// AnnounceTimeout bounds one Publish. Default 500ms.
	AnnounceTimeout time.Duration
	// AnnounceQueue is how many lock events may wait for the Announcer before new ones are dropped. Default 256.
	AnnounceQueue int
	// RetryMin and RetryMax bound Acquire's backoff. Defaults 10ms and min(TTL/10, 1s).
	RetryMin, RetryMax time.Duration
	// Logger receives transitions at debug level and failures at warn level. The zero value logs nothing.
	Logger zerolog.Logger
	// Metrics is shared by all Lockers of a process; nil gives unregistered metrics.
	Metrics *Metrics
	// MinReplicas makes every acquisition, renewal and fenced write wait (WAIT) until that many replicas have
	// acknowledged it. Redis replicates asynchronously: a master that fails right after a grant can be replaced by
	// a replica that never saw it, and the key is then free for a second holder. An acquisition that fewer replicas
	// acknowledge is undone and fails with ErrUnreplicated; a renewal so is a failed renewal (the lease's deadline
	// does not move). Zero (the default) waits for none. WAIT narrows the window but cannot close it: a replica
	// that acknowledged can still lose the failover election to one that did not, with several replicas.
	MinReplicas int
	// ReplicaTimeout bounds one WAIT. Default min(1s, TTL/3).
	ReplicaTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.TTL <= 0 {
		o.TTL = 30 * time.Second
	}
	if o.RenewEvery <= 0 {
		o.RenewEvery = o.TTL / 3
	}
	if o.Holder == "" {
		host, _ := os.Hostname()
		o.Holder = host + "-" + strconv.Itoa(os.Getpid())
	}
	if o.Prefix == "" {
		o.Prefix = "hub:lease:"
	}
	if o.Topic == "" {
		o.Topic = "locks"
	}
	if o.AnnounceTimeout <= 0 {
		o.AnnounceTimeout = 500 * time.Millisecond
	}
	if o.AnnounceQueue <= 0 {
		o.AnnounceQueue = 256
	}
	if o.RetryMin <= 0 {
		o.RetryMin = 10 * time.Millisecond
	}
	if o.RetryMax <= 0 {
		o.RetryMax = min(o.TTL/10, time.Second)
	}
	o.RetryMax = max(o.RetryMax, o.RetryMin)
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil, "")
	}
	if o.ReplicaTimeout <= 0 {
		o.ReplicaTimeout = min(time.Second, o.TTL/3)
	}
	return o
}

// Locker hands out leases on keys of one Redis. It is safe for concurrent use. Close it when an Announcer is set, to
// end the goroutine that publishes lock events.
type Locker struct {
	client redis.UniversalClient
	opts   Options
	log    zerolog.Logger
	ann    *announcer
}

// New returns a Locker. It does not contact Redis.
func New(client redis.UniversalClient, opts Options) *Locker {
	opts = opts.withDefaults()
	l := &Locker{client: client, opts: opts, log: opts.Logger.With().Str("component", "lease").Logger()}
	l.ann = newAnnouncer(opts, l.log)
	return l
}

// Options returns the options in effect, defaults filled in.
func (l *Locker) Options() Options { return l.opts }

// Close stops the announce goroutine after it has published what is queued (for at most one AnnounceTimeout).
// Leases still held keep working but announce nothing more. Close is idempotent.
func (l *Locker) Close() error {
	l.ann.close()
	return nil
}

// AcquireOption adjusts one acquisition.
type AcquireOption func(*acquireConfig)

type acquireConfig struct{ workflow string }

// WithWorkflow names the workflow that holds the lease, so its lock events can be shown next to its progress.
func WithWorkflow(id string) AcquireOption {
	return func(c *acquireConfig) { c.workflow = id }
}

// TryAcquire makes one attempt and returns ErrHeld when another holder has the key (ErrUnreplicated when
// Options.MinReplicas replicas did not acknowledge the grant, which is then undone). The lease lives until Release,
// loss, or the end of ctx (after which the watchdog releases it).
func (l *Locker) TryAcquire(ctx context.Context, key string, opts ...AcquireOption) (*Lease, error) {
	ls, _, err := l.attempt(ctx, key, opts)
	return ls, err
}

// Acquire retries with exponential backoff and jitter until it gets the lease or ctx ends. While the key is held it
// never sleeps past the holder's remaining TTL, so a crashed holder's lease is taken over as soon as it expires.
func (l *Locker) Acquire(ctx context.Context, key string, opts ...AcquireOption) (*Lease, error) {
	backoff := l.opts.RetryMin
	for {
		ls, pttl, err := l.attempt(ctx, key, opts)
		if err == nil || errors.Is(err, ErrClosed) {
			return ls, err
		}
		if !errors.Is(err, ErrHeld) && ctx.Err() == nil {
			// A transient Redis error or an unreplicated grant is retried like a held key: the caller's ctx is the
			// only deadline.
			l.log.Debug().Err(err).Str("key", key).Msg("acquire attempt failed; retrying")
		}
		wait := delay.Jitter(backoff/2, backoff)
		if pttl > 0 {
			wait = min(wait, pttl+time.Millisecond)
		}
		backoff = min(backoff*2, l.opts.RetryMax)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("acquire %q: %w", key, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// attempt runs the acquire script once. On ErrHeld it also returns the holder's remaining TTL.
func (l *Locker) attempt(ctx context.Context, key string, opts []AcquireOption) (*Lease, time.Duration, error) {
	if l.ann.isClosed() {
		return nil, 0, ErrClosed
	}
	var cfg acquireConfig
	for _, o := range opts {
		o(&cfg)
	}
	token := l.opts.Holder + "/" + crand.Text()
	lk, fk := l.keys(key)
	sent := time.Now()
	cmd, acked, err := l.replicated(ctx, acquireScript, []string{lk, fk}, token, l.opts.TTL.Milliseconds())
	var res []int64
	if err == nil {
		res, err = cmd.Int64Slice()
	}
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("unexpected reply %v", res)
	}
	if err != nil {
		// If the script ran but its reply was lost, the key is now held by a token nobody knows. Nothing can renew
		// it, so it frees itself within the TTL; retrying under a new token is safe meanwhile.
		l.opts.Metrics.acquire.WithLabelValues(outcomeError).Inc()
		return nil, 0, fmt.Errorf("acquire %q: %w", key, err)
	}
	if res[0] == 0 {
		l.opts.Metrics.acquire.WithLabelValues(outcomeHeld).Inc()
		return nil, time.Duration(res[1]) * time.Millisecond, fmt.Errorf("acquire %q: %w", key, ErrHeld)
	}
	if !l.enough(acked) {
		l.opts.Metrics.acquire.WithLabelValues(outcomeUnreplicated).Inc()
		if uerr := l.undo(ctx, key, token); uerr != nil {
			// The key then frees itself within the TTL; nobody holds it meanwhile.
			l.log.Warn().Err(uerr).Str("key", key).Msg("undo of an unreplicated acquisition failed")
		}
		return nil, 0, fmt.Errorf("acquire %q: %d of %d replicas within %v: %w", key, acked, l.opts.MinReplicas,
			l.opts.ReplicaTimeout, ErrUnreplicated)
	}
	l.opts.Metrics.acquire.WithLabelValues(outcomeAcquired).Inc()
	ls := newLease(l, ctx, key, token, res[0], cfg.workflow, sent)
	return ls, 0, nil
}

// keys returns the lease key and its fence counter. The hash tag keeps both in one Redis Cluster slot, which the
// acquire script needs.
func (l *Locker) keys(key string) (lease, fence string) {
	base := l.opts.Prefix + "{" + key + "}"
	return base, base + ":fence"
}
