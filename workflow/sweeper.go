package workflow

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/syncverse/hub/hub"
)

// Defaults of Config.
const (
	DefaultStallAfter = 60 * time.Second
	DefaultSweep      = time.Second
	DefaultRescan     = 10 * time.Second
	// The ceilings on the state the hub keeps of workflows (see Config).
	DefaultMaxTopicWorkflows  = 1000
	DefaultMaxTopicStateBytes = 8 << 20
	DefaultMaxWorkflows       = 100000
	// DefaultSweepFields is how many state fields one sweep reads at most; topics past it wait for the next sweep.
	DefaultSweepFields = 50000
)

// Source is what the Sweeper needs from the event store. Its methods are safe for concurrent use.
type Source interface {
	// Topics calls fn with every topic that has a state.
	Topics(ctx context.Context, fn func(topic string)) error
	// Cursors returns the state cursor of each topic, "" for a topic whose state is gone.
	Cursors(ctx context.Context, topics []string) ([]string, error)
	// States reads topics' states a few fields at a time, without the events' data (several topics share round
	// trips). prevs[i] is the last state read of topics[i] (nil for none): the envelopes it judged are not read again.
	States(ctx context.Context, topics []string, prevs []*TopicState) ([]*TopicState, error)
	// Data returns the data of a workflow's latest progress event ("null" for none), for a notification.
	Data(ctx context.Context, topic, workflow string) (json.RawMessage, error)
	// Trim deletes workflows from a topic's state, except those with an event newer than their EventID; it returns
	// how many it deleted.
	Trim(ctx context.Context, topic string, wfs []*Workflow) (int, error)
	// Commit records c in one atomic step unless its mark holds c.Value already or c.Expect is no longer the
	// workflow's latest event; committed says whether this call recorded it. With c.Event the health event is
	// published in the same step.
	Commit(ctx context.Context, c Commit) (committed bool, err error)
	// MarkQueued records that the notification of a mark's value is queued, if the mark still holds value.
	MarkQueued(ctx context.Context, topic, workflow, mark, value string) error
}

// Notifier queues a notification durably. Queuing one ID twice sends it once.
type Notifier interface {
	Notify(ctx context.Context, n Notification) error
}

// Rule overrides stall_after for the topics a pattern covers (an exact topic, or a prefix ending in *).
type Rule struct {
	Topics     string        `yaml:"topics"`
	StallAfter time.Duration `yaml:"stall_after"`
}

// Config tunes a Sweeper. Zero values mean the documented defaults.
type Config struct {
	StallAfter time.Duration // workflows.stall_after
	Rules      []Rule        // workflows.rules: the first that covers a topic wins
	Sweep      time.Duration // how often workflows are judged
	// Rescan is how often every topic's state is looked for; between rescans only topics with workflows under way
	// are read. It is at most half the shortest stall_after.
	Rescan time.Duration
	// Ceilings on the state: workflows per topic (workflows.max_topic_workflows), bytes per topic
	// (workflows.max_topic_state_bytes), workflows in all (workflows.max_workflows). Past one, the oldest workflows
	// are deleted from the state, those that ended and were notified first, and from the largest topics first.
	MaxTopicWorkflows  int
	MaxTopicStateBytes int64
	MaxWorkflows       int
	SweepFields        int // the state fields one sweep reads at most
	Metrics            *Metrics
	Log                zerolog.Logger
	Now                func() time.Time
}

func (c Config) withDefaults() Config {
	c.StallAfter = cmp.Or(c.StallAfter, DefaultStallAfter)
	c.Sweep = cmp.Or(c.Sweep, DefaultSweep)
	c.Rescan = cmp.Or(c.Rescan, DefaultRescan)
	c.MaxTopicWorkflows = cmp.Or(c.MaxTopicWorkflows, DefaultMaxTopicWorkflows)
	c.MaxTopicStateBytes = cmp.Or(c.MaxTopicStateBytes, DefaultMaxTopicStateBytes)
	c.MaxWorkflows = cmp.Or(c.MaxWorkflows, DefaultMaxWorkflows)
	c.SweepFields = cmp.Or(c.SweepFields, DefaultSweepFields)
	shortest := c.StallAfter
	for _, r := range c.Rules {
		shortest = min(shortest, r.StallAfter)
	}
	c.Rescan = max(min(c.Rescan, shortest/2), c.Sweep)
	if c.Metrics == nil {
		c.Metrics = NewMetrics(nil, nil)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Validate reports a rule that covers nothing or allows no silence.
func (r Rule) Validate() error {
	if err := hub.ValidatePattern(r.Topics); err != nil {
		return err
	}
	if r.StallAfter <= 0 {
		return errors.New("stall_after must be positive")
	}
	return nil
}

// Sweeper judges every workflow's health at each sweep.
type Sweeper struct {
	cfg    Config
	src    Source
	notify Notifier

	topics   map[string]*TopicState // the states read so far, by topic
	deferred map[string]int         // topics a sweep did not read for want of budget, by the sweep: read first, oldest first
	sweeps   int
	lastScan time.Time
	failing  bool
}

// New returns a Sweeper reading src and telling notify.
func New(src Source, notify Notifier, cfg Config) *Sweeper {
	return &Sweeper{cfg: cfg.withDefaults(), src: src, notify: notify, topics: map[string]*TopicState{},
		deferred: map[string]int{}}
}

// Run sweeps until ctx ends, then returns nil.
func (s *Sweeper) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.Sweep)
	defer t.Stop()
	for {
		s.report(s.Sweep(ctx))
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (s *Sweeper) report(err error) {
	switch {
	case err != nil && !s.failing && !errors.Is(err, context.Canceled):
		s.failing = true
		s.cfg.Log.Error().Err(err).Msg("workflow sweep failed; verdicts wait until the store answers")
	case err == nil && s.failing:
		s.failing = false
		s.cfg.Log.Info().Msg("workflow sweep recovered")
	}
}

// Sweep reads what changed and commits every verdict due now. Only Run's goroutine (or a test) calls it.
func (s *Sweeper) Sweep(ctx context.Context) error {
	start := s.cfg.Now()
	defer func() { s.cfg.Metrics.sweep.Observe(time.Since(start).Seconds()) }()
	if err := s.refresh(ctx, start); err != nil {
		return err
	}
	now := s.cfg.Now()
	var acts []action
	var locking []*TopicState // the states with a lock held or a fence gone backwards
	for _, st := range s.topics {
		if !now.Before(st.until) {
			acts = s.judge(now, st, acts)
		}
		if len(st.holders) > 0 || len(st.FenceLow) > 0 {
			locking = append(locking, st)
		}
	}
	acts = append(acts, duplicates(locking)...)
	var firstErr error
	for _, a := range acts {
		if st := s.topics[a.commit.Topic]; st != nil {
			st.busy, st.committed = true, true // a commit marks its workflow stale: read the topic again next sweep
			st.touched()
		}
		if err := s.apply(ctx, now, a); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if err := s.enforce(ctx); err != nil && firstErr == nil {
		firstErr = err
	}
	s.cfg.Metrics.count(s.topics, now, s.stallAfter)
	return firstErr
}

func (s *Sweeper) stallAfter(topic string) time.Duration {
	for _, r := range s.cfg.Rules {
		if hub.Match(r.Topics, topic) {
			return r.StallAfter
		}
	}
	return s.cfg.StallAfter
}

// apply commits one action and queues its notification. A commit another replica made first is not an error: it
// queues the notification too, so a replica that stopped between the two steps is made good.
func (s *Sweeper) apply(ctx context.Context, now time.Time, a action) error {
	c := a.commit
	if !a.requeue {
		committed, err := s.src.Commit(ctx, c)
		if err != nil {
			return err
		}
		a.wf.stale = true
		if !committed {
			return nil
		}
		s.committed(now, a)
	}
	if a.notify == "" {
		return s.markQueued(ctx, a)
	}
	data, err := s.src.Data(ctx, c.Topic, c.Workflow)
	if err != nil {
		return err
	}
	n := Notification{
		ID: notificationID(c.Topic, c.Workflow, c.Mark, c.Value), Kind: a.notify, Topic: c.Topic,
		Workflow: c.Workflow, At: now.UTC(), Data: data,
	}
	if !a.about.IsZero() {
		n.EventID = a.about.String()
	}
	if n.Data == nil {
		n.Data = json.RawMessage("null")
	}
	if err := s.notify.Notify(ctx, n); err != nil {
		return err
	}
	a.wf.stale = true
	return s.markQueued(ctx, a)
}

// markQueued records that the action's notification is queued, in the store and in what the sweeper holds.
func (s *Sweeper) markQueued(ctx context.Context, a action) error {
	c := a.commit
	if err := s.src.MarkQueued(ctx, c.Topic, c.Workflow, c.Mark, c.Value); err != nil {
		return err
	}
	if a.wf.Marks != nil {
		a.wf.Marks[c.Mark] = Mark{Value: c.Value, Queued: true}
	}
	return nil
}

func (s *Sweeper) committed(now time.Time, a action) {
	if a.verdict != "" {
		s.cfg.Metrics.verdicts.WithLabelValues(a.verdict).Inc()
		s.cfg.Log.Info().Str("topic", a.commit.Topic).Str("workflow", a.commit.Workflow).
			Str("verdict", a.verdict).Str("basis", a.commit.Value).Msg("workflow verdict")
	}
	if a.commit.Mark == MarkFinal && !a.wf.Start.IsZero() {
		d := idTime(a.wf.EventID).Sub(idTime(a.wf.Start))
		s.cfg.Metrics.duration.WithLabelValues(a.wf.Status).Observe(max(d, 0).Seconds())
	}
}
