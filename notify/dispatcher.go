package notify

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/syncverse/hub/internal/delay"
	"github.com/syncverse/hub/workflow"
)

// Defaults of Config.
const (
	DefaultTimeout    = 10 * time.Second
	DefaultRetryFor   = 24 * time.Hour
	DefaultBackoffMin = time.Second
	DefaultBackoffMax = 10 * time.Minute
	DefaultClaimAfter = time.Minute
	// The ceilings on what one topic's notifications may cost (see Config).
	DefaultMaxPending   = 1000
	DefaultMaxDataBytes = 4096
	DefaultWorkers      = 4
	// maxWorkflowName is the most of a workflow's id a notification carries; maxNames is how many ids a coalesced
	// delivery lists.
	maxWorkflowName = 256
	maxNames        = 50
)

// Config tunes a Dispatcher. Zero values mean the documented defaults.
type Config struct {
	Webhooks   []Webhook
	Timeout    time.Duration // one request's time limit (notify.timeout)
	RetryFor   time.Duration // how long a failing delivery is retried before it is dead (notify.retry_for)
	BackoffMin time.Duration // the first retry's delay; each next one doubles, with jitter
	BackoffMax time.Duration // the longest delay between tries (notify.backoff_max)
	// ClaimAfter is how long a delivery another replica took may go unanswered before this one takes it over
	// (notify.claim_after); it is longer than Timeout.
	ClaimAfter time.Duration
	// MaxPending is the most deliveries the outbox and the retry set hold, across the replicas
	// (notify.max_pending); one more is dropped and counted.
	MaxPending int
	// MaxDataBytes is the most of a workflow's data a notification carries (notify.max_data_bytes).
	MaxDataBytes int
	// Workers is how many deliveries this replica sends at once (notify.workers).
	Workers  int
	Consumer string // this replica's name in the outbox's consumer group
	Metrics  *Metrics
	Log      zerolog.Logger
	Now      func() time.Time
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Timeout, DefaultTimeout)
	def(&c.RetryFor, DefaultRetryFor)
	def(&c.BackoffMin, DefaultBackoffMin)
	def(&c.BackoffMax, DefaultBackoffMax)
	def(&c.ClaimAfter, DefaultClaimAfter)
	c.ClaimAfter = max(c.ClaimAfter, 2*c.Timeout)
	c.MaxPending = cmp.Or(c.MaxPending, DefaultMaxPending)
	c.MaxDataBytes = cmp.Or(c.MaxDataBytes, DefaultMaxDataBytes)
	c.Workers = cmp.Or(c.Workers, DefaultWorkers)
	if c.Metrics == nil {
		c.Metrics = NewMetrics(nil)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Dispatcher queues notifications for the webhooks that want them and sends what the outbox holds. It implements
// workflow.Notifier.
type Dispatcher struct {
	cfg    Config
	out    Outbox
	hooks  map[string]Webhook // by Name
	client *http.Client
}

var _ workflow.Notifier = (*Dispatcher)(nil)

// New returns a Dispatcher on out. The webhooks must be valid (Webhook.Validate).
func New(out Outbox, cfg Config) *Dispatcher {
	cfg = cfg.withDefaults()
	d := &Dispatcher{cfg: cfg, out: out, hooks: map[string]Webhook{}}
	for _, w := range cfg.Webhooks {
		d.hooks[w.Name()] = w
	}
	d.client = &http.Client{Timeout: cfg.Timeout, CheckRedirect: sameHostRedirect}
	return d
}

// sameHostRedirect follows at most three redirects that keep the method and body (307, 308) to the same host;
// any other redirect is answered as it came, and counts as a refusal.
func sameHostRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 3 || req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme ||
		req.Method != http.MethodPost {
		return http.ErrUseLastResponse
	}
	return nil
}

// Notify queues n once for every webhook that wants it, its data cut to MaxDataBytes. A notification of the same
// kind and topic as one still waiting is folded into it; past MaxPending it is dropped, counted and logged.
func (d *Dispatcher) Notify(ctx context.Context, n workflow.Notification) error {
	var cut bool
	if n.Data, cut = truncateData(n.Data, d.cfg.MaxDataBytes); cut {
		n.DataTruncated = true
		d.cfg.Metrics.truncated.Inc()
	}
	n.Workflow = shortName(n.Workflow)
	var ds []Delivery
	for name, w := range d.hooks {
		if w.wants(n) {
			ds = append(ds, Delivery{ID: n.ID + "-" + name, Webhook: name, Notification: n, First: d.cfg.Now().UTC()})
		}
	}
	if len(ds) == 0 {
		return nil
	}
	added, err := d.out.Add(ctx, ds, d.cfg.MaxPending)
	d.cfg.Metrics.coalesced.Add(float64(added.Coalesced))
	if added.Dropped > 0 {
		d.cfg.Metrics.dropped.WithLabelValues(dropFull).Add(float64(added.Dropped))
		d.cfg.Log.Warn().Str("kind", n.Kind).Str("topic", n.Topic).Int("max_pending", d.cfg.MaxPending).
			Msg("webhook outbox full; notification dropped")
	}
	return err
}

// shortName cuts a workflow id to maxWorkflowName bytes.
func shortName(s string) string {
	if len(s) <= maxWorkflowName {
		return s
	}
	s = s[:maxWorkflowName]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// Run sends deliveries with Workers goroutines until ctx ends, then returns nil.
func (d *Dispatcher) Run(ctx context.Context) error {
	if len(d.hooks) == 0 {
		<-ctx.Done()
		return nil
	}
	var wg sync.WaitGroup
	for i := range d.cfg.Workers {
		wg.Go(func() { d.work(ctx, i == 0) })
	}
	wg.Wait()
	return nil
}

// work claims and sends one delivery at a time, so that a slow receiver holds one worker per delivery and the
// others go on; the first worker also refreshes hub_notify_pending.
func (d *Dispatcher) work(ctx context.Context, counts bool) {
	failing := false
	lastCount := time.Time{}
	for ctx.Err() == nil {
		err := d.turn(ctx)
		if now := d.cfg.Now(); counts && err == nil && now.Sub(lastCount) >= 5*time.Second {
			lastCount = now
			if n, err := d.out.Pending(ctx); err == nil {
				d.cfg.Metrics.pending.Set(float64(n))
			}
		}
		switch {
		case err != nil && ctx.Err() == nil:
			if !failing {
				d.cfg.Log.Error().Err(err).Msg("webhook outbox unavailable; deliveries wait for it")
			}
			failing = true
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		case err == nil && failing:
			failing = false
			d.cfg.Log.Info().Msg("webhook outbox available again")
		}
	}
}

// turn moves due retries into the queue, then claims and sends a batch.
func (d *Dispatcher) turn(ctx context.Context) error {
	if err := d.out.Due(ctx, d.cfg.Now()); err != nil {
		return err
	}
	cs, err := d.out.Claim(ctx, d.cfg.Consumer, 1, d.cfg.ClaimAfter, min(time.Second, d.cfg.BackoffMin))
	if err != nil {
		return err
	}
	for _, c := range cs {
		if err := d.deliver(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// deliver makes one try and records its outcome in the outbox.
func (d *Dispatcher) deliver(ctx context.Context, c Claimed) error {
	w, ok := d.hooks[c.Webhook]
	if !ok {
		d.cfg.Metrics.outcome(outcomeDead)
		return d.out.Dead(ctx, c, "the webhook is no longer configured")
	}
	c.Attempt++
	status, err := d.send(ctx, w, c.Delivery)
	log := d.cfg.Log.With().Str("delivery", c.ID).Str("kind", c.Notification.Kind).
		Str("topic", c.Notification.Topic).Int("attempt", c.Attempt).Logger()
	switch {
	case err == nil && status >= 200 && status < 300:
		d.cfg.Metrics.outcome(outcomeDelivered)
		log.Info().Int("status", status).Msg("webhook delivered")
		return d.out.Done(ctx, c)
	case err == nil && !retryable(status):
		d.cfg.Metrics.outcome(outcomeRefused)
		log.Warn().Int("status", status).Msg("webhook refused the delivery; not retried")
		return d.out.Dead(ctx, c, fmt.Sprintf("refused with status %d", status))
	}
	reason := fmt.Sprintf("status %d", status)
	if err != nil {
		if ctx.Err() != nil { // shutting down: the delivery stays claimed and is taken over or retried
			return nil
		}
		reason = err.Error()
	}
	now := d.cfg.Now()
	if now.Sub(c.First) >= d.cfg.RetryFor {
		d.cfg.Metrics.outcome(outcomeDead)
		log.Error().Str("reason", reason).Msg("webhook delivery given up")
		return d.out.Dead(ctx, c, "gave up after "+d.cfg.RetryFor.String()+": "+reason)
	}
	wait := d.backoff(c.Attempt)
	queued, err := d.out.Later(ctx, c, now.Add(wait), d.cfg.MaxPending)
	if err != nil {
		return err
	}
	if !queued {
		d.cfg.Metrics.outcome(outcomeDead)
		d.cfg.Metrics.dropped.WithLabelValues(dropRetryFull).Inc()
		log.Error().Str("reason", reason).Int("max_pending", d.cfg.MaxPending).
			Msg("webhook delivery failed and the retry set is full; dead-lettered")
		return nil
	}
	d.cfg.Metrics.outcome(outcomeRetried)
	log.Warn().Str("reason", reason).Dur("retry_in_ms", wait).Msg("webhook delivery failed; will retry")
	return nil
}

// retryable reports whether a receiver's status asks for another try: 408, 429 and 5xx.
func retryable(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// backoff is the delay before try attempt+1: doubling from BackoffMin up to BackoffMax, with jitter in its upper
// half so that deliveries failed together do not come back together.
func (d *Dispatcher) backoff(attempt int) time.Duration {
	wait := d.cfg.BackoffMin
	for i := 1; i < attempt && wait < d.cfg.BackoffMax; i++ {
		wait *= 2
	}
	wait = min(wait, d.cfg.BackoffMax)
	return delay.Jitter(wait/2, wait)
}

// send POSTs the delivery and returns the receiver's status.
func (d *Dispatcher) send(ctx context.Context, w Webhook, dv Delivery) (int, error) {
	body, err := w.body(dv.Notification)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "syncverse-hub")
	req.Header.Set("X-Hub-Delivery", dv.ID)
	if sig := w.sign(body); sig != "" {
		req.Header.Set("X-Hub-Signature-256", sig)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		var uerr interface{ Unwrap() error }
		if errors.As(err, &uerr) {
			err = uerr.Unwrap() // the URL may carry a token: say what failed, not where
		}
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, nil
}
