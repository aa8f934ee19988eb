package limits

import (
	"fmt"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Rate limits something per key (a credential or an address) with a token bucket each: publishing, or new
// connections and streams.
type Rate struct {
	reason  string
	format  string // the refusal's message, given the rate, the burst and the wait
	limit   rate.Limit
	burst   int
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	sweepAt int
	now     func() time.Time
}

// NewRate allows perSecond events per key with bursts of burst; perSecond <= 0 means no limit (a nil *Rate).
func NewRate(perSecond float64, burst int) *Rate {
	return newRate(ReasonPublishRate, "publish rate over %g events/s (burst %d); retry after %v", perSecond, burst)
}

// NewConnRate allows perSecond new connections (or streams) per address with bursts of burst; perSecond <= 0 means
// no limit. Use AllowAddr.
func NewConnRate(perSecond float64, burst int) *Rate {
	return newRate(ReasonConnRate, "too many new connections and streams from your address (over %g/s, burst %d); "+
		"retry after %v", perSecond, burst)
}

func newRate(reason, format string, perSecond float64, burst int) *Rate {
	if perSecond <= 0 {
		return nil
	}
	return &Rate{reason: reason, format: format, limit: rate.Limit(perSecond), burst: max(burst, 1),
		buckets: map[string]*rate.Limiter{}, sweepAt: 1024, now: time.Now}
}

// AllowAddr is Allow for a client address; an IPv6 client counts per /64.
func (r *Rate) AllowAddr(a netip.Addr) error {
	if r == nil {
		return nil
	}
	return r.Allow(bucket(a).String())
}

// Allow takes one token from key's bucket, or refuses with the time until one is available. A refused request
// costs nothing, so a client that keeps hammering is not pushed further back than its real rate.
func (r *Rate) Allow(key string) error {
	if r == nil {
		return nil
	}
	now := r.now()
	r.mu.Lock()
	lim, ok := r.buckets[key]
	if !ok {
		r.sweep(now)
		lim = rate.NewLimiter(r.limit, r.burst)
		r.buckets[key] = lim
	}
	res := lim.ReserveN(now, 1)
	wait := res.DelayFrom(now)
	if wait > 0 {
		res.CancelAt(now)
	}
	r.mu.Unlock()
	if wait == 0 {
		return nil
	}
	return &Refusal{Code: http.StatusTooManyRequests, Reason: r.reason, RetryAfter: wait,
		Msg: fmt.Sprintf(r.format, float64(r.limit), r.burst, wait.Round(time.Millisecond))}
}

// sweep forgets full buckets once the map has grown: a full bucket behaves exactly like a new one, so forgetting it
// changes nothing for its client and keeps memory bounded by the clients that are actually publishing.
func (r *Rate) sweep(now time.Time) {
	if len(r.buckets) < r.sweepAt {
		return
	}
	for k, lim := range r.buckets {
		if lim.TokensAt(now) >= float64(r.burst) {
			delete(r.buckets, k)
		}
	}
	r.sweepAt = max(1024, 2*len(r.buckets))
}
