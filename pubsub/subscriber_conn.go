package pubsub

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// receive moves everything the pub/sub connection receives into the queue. go-redis reconnects and resubscribes by
// itself after an error; the confirmations it then receives make the processor repair each topic. A connection
// that stays silent through a ping is replaced, since a peer that vanished without closing never errors.
func (s *Subscriber) receive(ctx context.Context) {
	silent := 0
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		ps := s.pubsub()
		if !s.up.Load() {
			_ = ps.Ping(ctx) // (re)connects now, and its pong tells that the connection is up
		}
		msg, err := ps.ReceiveTimeout(ctx, s.cfg.PingEvery)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				silent++
				if silent > 2 {
					s.replaceConn(ctx)
					silent = 0
				} else {
					_ = ps.Ping(ctx)
				}
				continue
			}
			s.setUp(false, err)
			s.m.receiveErrors.Inc()
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 2*time.Second)
			continue
		}
		silent, backoff = 0, 50*time.Millisecond
		s.setUp(true, nil)
		switch m := msg.(type) {
		case *redis.Message:
			if t, ok := s.keys.TopicOf(m.Channel, "live"); ok {
				s.enqueue(item{kind: itemMessage, topic: t, payload: m.Payload})
			}
		case *redis.Subscription:
			if m.Kind != "subscribe" && m.Kind != "ssubscribe" {
				continue
			}
			if t, ok := s.keys.TopicOf(m.Channel, "live"); ok {
				s.enqueue(item{kind: itemConfirmed, topic: t})
			}
		}
	}
}

func (s *Subscriber) setUp(up bool, err error) {
	if s.up.Swap(up) == up {
		return
	}
	s.m.up.Set(map[bool]float64{true: 1, false: 0}[up])
	if up {
		s.log.Info().Msg("redis pub/sub connection up")
	} else {
		s.log.Warn().Err(err).Msg("redis pub/sub connection down; streams stay open, gaps are repaired on recovery")
	}
}

func (s *Subscriber) pubsub() liveConn {
	s.psMu.Lock()
	defer s.psMu.Unlock()
	return s.ps
}

// replaceConn drops a connection that no longer answers and subscribes again on a new one.
func (s *Subscriber) replaceConn(ctx context.Context) {
	s.psMu.Lock()
	defer s.psMu.Unlock()
	_ = s.ps.Close()
	chans := make([]string, 0, len(s.channels))
	for c := range s.channels {
		chans = append(chans, c)
	}
	s.ps = s.open(ctx, chans...)
	s.setUp(false, errors.New("no answer to ping"))
}

// subscribe and unsubscribe change the channel set of the current connection (and of any that replaces it).
func (s *Subscriber) subscribe(ctx context.Context, channels ...string) error {
	s.psMu.Lock()
	defer s.psMu.Unlock()
	for _, c := range channels {
		s.channels[c] = struct{}{}
	}
	return s.ps.Subscribe(ctx, channels...)
}

func (s *Subscriber) unsubscribe(ctx context.Context, channels ...string) error {
	s.psMu.Lock()
	defer s.psMu.Unlock()
	for _, c := range channels {
		delete(s.channels, c)
	}
	return s.ps.Unsubscribe(ctx, channels...)
}
