package eventschema

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/hub"
)

// Mode is events.validation: what the hub does with data that does not match its type's schema.
type Mode string

const (
	Off    Mode = "off"    // nothing is checked
	Warn   Mode = "warn"   // counted and logged; stored and delivered as it is
	Strict Mode = "strict" // the hub's publishers refuse it; on receipt, as warn
)

// Modes lists every mode; DefaultMode is events.validation's default.
var Modes = []Mode{Off, Warn, Strict}

const DefaultMode = Warn

// CheckMode refuses a mode that is not one of Modes, naming them.
func CheckMode(m Mode) error {
	for _, k := range Modes {
		if m == k {
			return nil
		}
	}
	names := make([]string, len(Modes))
	for i, k := range Modes {
		names[i] = string(k)
	}
	return fmt.Errorf("%q is not %s or %s", m, strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

// Where an event was checked: the at label of hub_events_invalid_total.
const (
	AtPublish = "publish" // by a publisher of this hub, before it is stored (POST /publish)
	AtReceipt = "receipt" // as the subscriber hands it to the hub, whoever published it
)

// logEvery is how often one (topic, type) may log its bad data; maxLogKeys bounds the pairs remembered; the budget
// (events.invalid_log_lines) bounds the lines of every pair together per logEvery, so a publisher spreading bad data over thousands of topics
// writes at most that many lines a minute (each names its pair; the rest are counted, in the metric and in the
// suppressed field of the pair's next line).
const (
	logEvery   = time.Minute
	maxLogKeys = 4096
	// DefaultLogLines is events.invalid_log_lines' default.
	DefaultLogLines = 100
)

// Checker applies a Mode with a Set, counting and logging what does not match.
type Checker struct {
	set     *Set
	mode    Mode
	invalid *prometheus.CounterVec
	held    prometheus.Counter
	log     zerolog.Logger
	limit   *limiter
}

// NewChecker returns a checker of set in mode that logs at most lines lines a minute (DefaultLogLines when not
// positive). It registers hub_events_invalid_total, every series at 0, and hub_events_invalid_logs_suppressed_total
// with reg, whatever the mode.
func NewChecker(set *Set, mode Mode, lines int, reg prometheus.Registerer, log zerolog.Logger) *Checker {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hub_events_invalid_total",
		Help: "Events whose data does not match the schema of their type (docs/schemas), by type and where they were checked: publish (a publisher of this hub) or receipt (every event the hub receives).",
	}, []string{"type", "at"})
	for _, typ := range Types {
		if typ != "health" { // every publisher refuses health, the hub's own: it is only ever received
			c.WithLabelValues(typ, AtPublish)
		}
		c.WithLabelValues(typ, AtReceipt)
	}
	held := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hub_events_invalid_logs_suppressed_total",
		Help: "Log lines about invalid event data held back: a (topic, type) logs once a minute, and all of them together events.invalid_log_lines a minute.",
	})
	reg.MustRegister(c, held)
	if lines <= 0 {
		lines = DefaultLogLines
	}
	return &Checker{set: set, mode: mode, invalid: c, held: held, log: log, limit: newLimiter(logEvery, maxLogKeys, lines, time.Now)}
}

// Mode is the checker's mode.
func (c *Checker) Mode() Mode { return c.mode }

// Publish checks an event a publisher of this hub is about to store, its topic and type already valid. Data that
// matches, and every event in mode off, gets nil, nil. In mode warn it returns the problems, one per field
// ("progress: 40 is not between 0 and 1"), for the publisher to show its caller, and the event is stored; in mode
// strict it returns the *Invalid and the caller refuses the event. Either way the problem is counted and logged.
func (c *Checker) Publish(topic, typ string, data []byte) ([]string, error) {
	if c.mode == Off {
		return nil, nil
	}
	var bad *Invalid
	if !errors.As(c.set.Validate(typ, data), &bad) {
		return nil, nil
	}
	c.report(topic, bad, AtPublish, "")
	return bad.judged(c.mode)
}

// Judge applies mode to data of typ as Checker.Publish does, without counting or logging: for publishers that run
// outside a hub (hub publish).
func (s *Set) Judge(mode Mode, typ string, data []byte) ([]string, error) {
	if mode == Off {
		return nil, nil
	}
	var bad *Invalid
	if !errors.As(s.Validate(typ, data), &bad) {
		return nil, nil
	}
	return bad.judged(mode)
}

// judged is bad as mode has it: refused in strict, its problems as warnings otherwise.
func (e *Invalid) judged(mode Mode) ([]string, error) {
	if mode == Strict {
		return nil, e
	}
	return e.Warnings(), nil
}

// Receiving returns a hub.Broadcaster (what the subscriber feeds: the hub) that checks every event of a known type before passing it on to b, in every mode
// but off. It never drops one: a stored event is in its topic's history whatever is said of it here.
func (c *Checker) Receiving(b hub.Broadcaster) hub.Broadcaster {
	if c.mode == Off {
		return b
	}
	return receiving{c: c, next: b}
}

type receiving struct {
	c    *Checker
	next hub.Broadcaster
}

func (r receiving) Broadcast(ev *hub.Event) {
	if r.c.set.Knows(ev.Type) {
		var bad *Invalid
		if errors.As(r.c.set.Validate(ev.Type, ev.Data), &bad) {
			r.c.report(ev.Topic, bad, AtReceipt, ev.IDText)
		}
	}
	r.next.Broadcast(ev)
}

// report counts one bad event and logs it, at most once per logEvery for its (topic, type).
func (c *Checker) report(topic string, bad *Invalid, at, id string) {
	c.invalid.WithLabelValues(bad.Type, at).Inc()
	ok, suppressed := c.limit.allow(topic + "\x00" + bad.Type)
	if !ok {
		c.held.Inc()
		return
	}
	what := "delivered as it is"
	switch {
	case at == AtPublish && c.mode == Strict:
		what = "refused (events.validation: strict)"
	case at == AtPublish:
		what = "stored as it is (events.validation: warn)"
	}
	ev := c.log.Warn().Str("topic", topic).Str("type", bad.Type).Str("at", at).Str("problem", bad.Detail())
	if id != "" {
		ev = ev.Str("id", id)
	}
	ev.Int("suppressed", suppressed).Msg("event data does not match docs/schemas/" + bad.Type + ".json: " + what)
}

// limiter lets each key through once per interval, and all keys together budget times per interval; it says how
// many times a key was held back since its last line. It remembers at most max keys: past that, those not seen for
// an interval are forgotten, and if none is, all are.
type limiter struct {
	mu     sync.Mutex
	every  time.Duration
	max    int
	budget int
	now    func() time.Time
	seen   map[string]*limitState
	window time.Time // when the budget's interval began
	spent  int       // lines let through in it
}

type limitState struct {
	last       time.Time // zero: never let through
	suppressed int
}

func newLimiter(every time.Duration, max, budget int, now func() time.Time) *limiter {
	return &limiter{every: every, max: max, budget: budget, now: now, seen: map[string]*limitState{}}
}

// allow reports whether key may be logged now and, when it may, how many times it was held back since its last line.
func (l *limiter) allow(key string) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	s := l.seen[key]
	if s == nil {
		l.makeRoom(now)
		s = &limitState{}
		l.seen[key] = s
	}
	if !s.last.IsZero() && now.Sub(s.last) < l.every {
		s.suppressed++
		return false, 0
	}
	if now.Sub(l.window) >= l.every {
		l.window, l.spent = now, 0
	}
	if l.spent >= l.budget {
		s.suppressed++
		return false, 0
	}
	l.spent++
	n := s.suppressed
	s.last, s.suppressed = now, 0
	return true, n
}

func (l *limiter) makeRoom(now time.Time) {
	if len(l.seen) < l.max {
		return
	}
	for k, s := range l.seen {
		if now.Sub(s.last) >= l.every {
			delete(l.seen, k)
		}
	}
	if len(l.seen) >= l.max {
		clear(l.seen)
	}
}
