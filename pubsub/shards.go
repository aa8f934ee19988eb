package pubsub

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// liveConn is what the subscriber needs of a pub/sub connection. *redis.PubSub is one (classic SUBSCRIBE, one
// connection for the whole deployment, since PUBLISH reaches every node of a cluster); *shardedConn is one for
// SSUBSCRIBE, where each channel is served only by the master that owns its slot.
type liveConn interface {
	Subscribe(ctx context.Context, channels ...string) error
	Unsubscribe(ctx context.Context, channels ...string) error
	Ping(ctx context.Context, payload ...string) error
	ReceiveTimeout(ctx context.Context, timeout time.Duration) (any, error)
	Close() error
}

// open returns a connection subscribed to channels, sharded when the configuration asks for it.
func (s *Subscriber) open(ctx context.Context, channels ...string) liveConn {
	if !s.cfg.Sharded {
		return s.rdb.Subscribe(ctx, channels...)
	}
	c := newShardedConn(s.rdb)
	if len(channels) > 0 {
		_ = c.Subscribe(ctx, channels...) // what failed is resubscribed when the connection comes back
	}
	return c
}

// shardedConn is one SSUBSCRIBE connection per cluster master, seen as one connection: a goroutine per master
// forwards what it receives into out. go-redis reconnects each one to the current owner of its channels' slot, so
// a failover is followed; a channel whose slot migrates alone is told so (sunsubscribe) and subscribed again where
// it now lives.
type shardedConn struct {
	rdb    redis.UniversalClient
	out    chan received
	pong   chan struct{}   // answers a Ping while no shard is open
	ctx    context.Context // ends with Close; the pumps' receives and resubscriptions run under it
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	shards  map[string]*redis.PubSub // by master address ("" for a single server)
	route   map[string]string        // channel → master address
	backoff map[string]time.Duration // by master address, while its connection keeps failing
	closed  bool
}

type received struct {
	msg any
	err error
}

func newShardedConn(rdb redis.UniversalClient) *shardedConn {
	ctx, cancel := context.WithCancel(context.Background())
	return &shardedConn{rdb: rdb, out: make(chan received), pong: make(chan struct{}, 1), ctx: ctx, cancel: cancel,
		shards: make(map[string]*redis.PubSub), route: make(map[string]string), backoff: make(map[string]time.Duration)}
}

// owner names the master that serves a channel; it asks the cluster client's slot table, which it may first
// reload when a slot just moved.
func (c *shardedConn) owner(ctx context.Context, channel string) (string, error) {
	cc, ok := c.rdb.(*redis.ClusterClient)
	if !ok {
		return "", nil
	}
	node, err := cc.MasterForKey(ctx, channel)
	if err != nil {
		return "", err
	}
	return node.Options().Addr, nil
}

func (c *shardedConn) Subscribe(ctx context.Context, channels ...string) error {
	var errs []error
	for _, ch := range channels {
		addr, err := c.owner(ctx, ch)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return redis.ErrClosed
		}
		ps, started := c.shards[addr]
		if !started {
			// A cluster client's pub/sub dials the owner of the slot of its first channel: subscribe before the
			// pump's first Receive, or it would dial a random node.
			ps = c.newPubSub(ctx)
			c.shards[addr] = ps
		}
		c.route[ch] = addr
		errs = append(errs, ps.SSubscribe(ctx, ch))
		if !started {
			c.wg.Go(func() { c.pump(addr, ps) })
		}
		c.mu.Unlock()
	}
	return errors.Join(errs...)
}

func (c *shardedConn) newPubSub(ctx context.Context) *redis.PubSub {
	switch r := c.rdb.(type) {
	case *redis.ClusterClient:
		return r.SSubscribe(ctx)
	case *redis.Client:
		return r.SSubscribe(ctx)
	}
	panic("pubsub: sharded pub/sub needs a *redis.Client or *redis.ClusterClient")
}

func (c *shardedConn) Unsubscribe(ctx context.Context, channels ...string) error {
	var errs []error
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range channels {
		addr, ok := c.route[ch]
		if !ok {
			continue
		}
		delete(c.route, ch)
		errs = append(errs, c.shards[addr].SUnsubscribe(ctx, ch))
	}
	return errors.Join(errs...)
}

func (c *shardedConn) Ping(ctx context.Context, _ ...string) error {
	c.mu.Lock()
	shards := make([]*redis.PubSub, 0, len(c.shards))
	for _, ps := range c.shards {
		shards = append(shards, ps)
	}
	c.mu.Unlock()
	if len(shards) == 0 {
		// Nothing followed yet, so no shard to ask: the subscription is as up as Redis is.
		if err := c.rdb.Ping(ctx).Err(); err != nil {
			return err
		}
		select {
		case c.pong <- struct{}{}:
		default:
		}
		return nil
	}
	var errs []error
	for _, ps := range shards {
		errs = append(errs, ps.Ping(ctx))
	}
	return errors.Join(errs...)
}

func (c *shardedConn) ReceiveTimeout(ctx context.Context, timeout time.Duration) (any, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-c.out:
		return r.msg, r.err
	case <-c.pong:
		return &redis.Pong{}, nil
	case <-t.C:
		return nil, errReceiveTimeout{}
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.ctx.Done():
		return nil, redis.ErrClosed
	}
}

// Close ends every shard's connection and waits for their goroutines; it may be called more than once.
func (c *shardedConn) Close() error {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		c.cancel()
		for _, ps := range c.shards {
			_ = ps.Close()
		}
	}
	c.mu.Unlock()
	c.wg.Wait()
	return nil
}

// pump forwards one shard's messages until an error, after which it replaces the shard's connection and ends.
func (c *shardedConn) pump(addr string, ps *redis.PubSub) {
	ctx := c.ctx
	for {
		msg, err := ps.Receive(ctx)
		if errors.Is(err, redis.ErrClosed) || ctx.Err() != nil {
			return
		}
		if m, ok := msg.(*redis.Subscription); ok && m.Kind == "sunsubscribe" && c.moved(ctx, addr, m.Channel) {
			continue
		}
		select {
		case c.out <- received{msg, err}:
		case <-ctx.Done():
			return
		}
		if err == nil {
			c.mu.Lock()
			delete(c.backoff, addr)
			c.mu.Unlock()
			continue
		}
		c.rebuild(addr, ps)
		return
	}
}

// rebuild replaces a shard's connection after an error, subscribing its channels again one by one. go-redis would
// reconnect by itself, but it resubscribes every channel in one SSUBSCRIBE, which Redis refuses (CROSSSLOT) when
// they hash to different slots of the master. The wait before it grows while the master stays unreachable.
func (c *shardedConn) rebuild(addr string, ps *redis.PubSub) {
	c.mu.Lock()
	wait := max(c.backoff[addr]*2, 50*time.Millisecond)
	c.backoff[addr] = min(wait, 2*time.Second)
	c.mu.Unlock()
	select {
	case <-time.After(wait):
	case <-c.ctx.Done():
		return
	}
	c.mu.Lock()
	if c.closed || c.shards[addr] != ps {
		c.mu.Unlock()
		return
	}
	delete(c.shards, addr)
	var channels []string
	for ch, a := range c.route {
		if a == addr {
			channels = append(channels, ch)
			delete(c.route, ch)
		}
	}
	c.mu.Unlock()
	_ = ps.Close()
	if cc, ok := c.rdb.(*redis.ClusterClient); ok {
		cc.ReloadState(c.ctx) // after a failover the slots have a new master
	}
	_ = c.Subscribe(c.ctx, channels...) // what fails here fails the new pump, which rebuilds again
}

// moved handles a sunsubscribe the hub did not ask for: the channel's slot now lives on another master, so the
// channel is subscribed there. The new confirmation makes the subscriber repair the topic from its stream.
func (c *shardedConn) moved(ctx context.Context, addr, channel string) bool {
	c.mu.Lock()
	wanted := c.route[channel] == addr
	ps := c.shards[addr]
	if wanted {
		delete(c.route, channel)
	}
	c.mu.Unlock()
	if !wanted {
		return false
	}
	_ = ps.SUnsubscribe(ctx, channel) // forget it here, or a reconnect would subscribe it on the wrong master
	if cc, ok := c.rdb.(*redis.ClusterClient); ok {
		cc.ReloadState(ctx)
	}
	// Subscribe takes c.mu and the other shard's own lock, neither of which is held while waiting for this pump.
	_ = c.Subscribe(ctx, channel)
	return true
}

// errReceiveTimeout is a net.Error, as go-redis's own timeouts are, so the reader treats it the same way.
type errReceiveTimeout struct{}

func (errReceiveTimeout) Error() string   { return "pub/sub receive timeout" }
func (errReceiveTimeout) Timeout() bool   { return true }
func (errReceiveTimeout) Temporary() bool { return true }
