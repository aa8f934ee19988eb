package workflow_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
	"github.com/syncverse/hub/workflow"
)

// sweepRig is one Redis, a publisher for agents, and a clock the test moves.
type sweepRig struct {
	t      testing.TB
	rdb    *redis.Client
	prefix string
	pub    *pubsub.Publisher
	mu     sync.Mutex
	now    time.Time
	told   []workflow.Notification
}

func newRig(t testing.TB) *sweepRig {
	rs := rig.StartRedis(t)
	p := rig.Prefix(t)
	r := &sweepRig{t: t, rdb: rs.Client(), prefix: p, now: time.Now()}
	r.pub = pubsub.NewPublisher(r.rdb, pubsub.PublisherConfig{Prefix: p})
	return r
}

func (r *sweepRig) Notify(_ context.Context, n workflow.Notification) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, old := range r.told {
		if old.ID == n.ID { // as the outbox does: one id is sent once
			return nil
		}
	}
	r.told = append(r.told, n)
	return nil
}

func (r *sweepRig) kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, n := range r.told {
		out = append(out, n.Kind+":"+n.Workflow)
	}
	return out
}

// wantKinds fails the test unless the notifications told so far are want, in order; when says at which point.
func (r *sweepRig) wantKinds(when string, want ...string) {
	r.t.Helper()
	if got := r.kinds(); !equal(got, want) {
		r.t.Fatalf("notifications %s = %v, want %v", when, got, want)
	}
}

func (r *sweepRig) clock() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now
}

func (r *sweepRig) advance(d time.Duration) {
	r.mu.Lock()
	r.now = r.now.Add(d)
	r.mu.Unlock()
}

// sync sets the test's clock back to the real one, which assigns the ids of newly published events.
func (r *sweepRig) sync() {
	r.mu.Lock()
	r.now = time.Now()
	r.mu.Unlock()
}

// sweeper is one replica.
func (r *sweepRig) sweeper(reg prometheus.Registerer, cfg workflow.Config) *workflow.Sweeper {
	cfg.Now = r.clock
	cfg.Metrics = workflow.NewMetrics(reg, nil)
	return workflow.New(pubsub.NewWorkflows(r.pub), r, cfg)
}

func (r *sweepRig) publish(topic, typ, data string) string {
	r.t.Helper()
	id, err := r.pub.Publish(context.Background(), topic, typ, []byte(data))
	if err != nil {
		r.t.Fatalf("Publish(%s, %s, %s) = %v", topic, typ, data, err)
	}
	return id
}

func (r *sweepRig) sweep(s *workflow.Sweeper) {
	r.t.Helper()
	if err := s.Sweep(context.Background()); err != nil {
		r.t.Fatalf("Sweep = %v", err)
	}
}

// health returns the verdicts stored in topic's stream.
func (r *sweepRig) health(topic string) []workflow.Health {
	r.t.Helper()
	keys := pubsub.Keys{Prefix: r.prefix}
	entries, err := r.rdb.XRange(context.Background(), keys.Stream(topic), "-", "+").Result()
	if err != nil {
		r.t.Fatal(err)
	}
	var out []workflow.Health
	for _, e := range entries {
		if e.Values["t"] != workflow.EventType {
			continue
		}
		var h workflow.Health
		if err := json.Unmarshal([]byte(e.Values["d"].(string)), &h); err != nil {
			r.t.Fatalf("health event %s = %v: %v", e.ID, e.Values["d"], err)
		}
		out = append(out, h)
	}
	return out
}

func verdicts(hs []workflow.Health) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Verdict+":"+h.Workflow)
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Two replicas judge one workflow through a stall, a second sweep, a restart and a recovery: one verdict each.
func TestStallIsJudgedOnceAcrossReplicasAndRestarts(t *testing.T) {
	r := newRig(t)
	cfg := workflow.Config{StallAfter: 10 * time.Second}
	reg := prometheus.NewRegistry()
	a, b := r.sweeper(reg, cfg), r.sweeper(nil, cfg)
	started := r.publish("deploy.1", "progress", `{"workflow":"wf-1","status":"running","progress":0.2}`)
	r.sweep(a)
	r.sweep(b)
	if got := r.health("deploy.1"); len(got) != 0 {
		t.Fatalf("health before stall_after = %v, want none", got)
	}
	r.advance(11 * time.Second)
	r.sweep(a)
	r.sweep(b)
	r.sweep(a)
	got := r.health("deploy.1")
	if !equal(verdicts(got), []string{"stalled:wf-1"}) {
		t.Fatalf("health after 11 s of silence = %v, want one stalled", verdicts(got))
	}
	sid, _ := hub.ParseID(started)
	if !got[0].Since.Equal(time.UnixMilli(int64(sid.Ms)).UTC()) {
		t.Errorf("stalled since %v, want the last event's time %v", got[0].Since, time.UnixMilli(int64(sid.Ms)))
	}
	if v, ok := rig.MetricValue(rig.Gather(t, reg), "hub_workflows", "status=stalled"); !ok || v != 1 {
		t.Errorf("hub_workflows{status=stalled} = %v (gathered: %v), want 1", v, ok)
	}
	restarted := r.sweeper(nil, cfg)
	r.sweep(restarted)
	if got := r.health("deploy.1"); len(got) != 1 {
		t.Fatalf("a restarted replica published again: %v", verdicts(got))
	}
	r.publish("deploy.1", "progress", `{"workflow":"wf-1","status":"running","progress":0.3}`)
	r.sync()
	r.sweep(b)
	r.sweep(a)
	r.sweep(restarted)
	if got := verdicts(r.health("deploy.1")); !equal(got, []string{"stalled:wf-1", "recovered:wf-1"}) {
		t.Fatalf("health after a new event = %v, want stalled then recovered", got)
	}
	r.wantKinds("after a new event", "stalled:wf-1", "recovered:wf-1")
}

// eta_s longer than stall_after is the silence the agent announced.
func TestETALongerThanStallAfterDelaysTheVerdict(t *testing.T) {
	r := newRig(t)
	s := r.sweeper(nil, workflow.Config{StallAfter: 10 * time.Second})
	r.publish("build.1", "progress", `{"workflow":"wf-2","status":"running","eta_s":60}`)
	r.advance(30 * time.Second)
	r.sweep(s)
	if got := r.health("build.1"); len(got) != 0 {
		t.Fatalf("health 30 s into a 60 s eta = %v, want none", verdicts(got))
	}
	r.advance(31 * time.Second)
	r.sweep(s)
	if got := verdicts(r.health("build.1")); !equal(got, []string{"stalled:wf-2"}) {
		t.Fatalf("health past the eta = %v, want stalled", got)
	}
}

// A rule's stall_after applies to the topics it covers.
func TestRuleOverridesStallAfter(t *testing.T) {
	r := newRig(t)
	s := r.sweeper(nil, workflow.Config{StallAfter: time.Minute,
		Rules: []workflow.Rule{{Topics: "deploy.*", StallAfter: 10 * time.Minute}}})
	r.publish("deploy.9", "progress", `{"workflow":"d","status":"running"}`)
	r.publish("build.9", "progress", `{"workflow":"b","status":"running"}`)
	r.advance(2 * time.Minute)
	r.sweep(s)
	if got := append(verdicts(r.health("deploy.9")), verdicts(r.health("build.9"))...); !equal(got, []string{"stalled:b"}) {
		t.Fatalf("health after 2 min = %v, want only build.9's workflow stalled", got)
	}
}

// A failed workflow is told once; a succeeded one is not told; neither gets a health event.
func TestFailedWorkflowIsNotifiedOnce(t *testing.T) {
	r := newRig(t)
	reg := prometheus.NewRegistry()
	a, b := r.sweeper(reg, workflow.Config{}), r.sweeper(nil, workflow.Config{})
	r.publish("ci.1", "progress", `{"workflow":"ok","status":"running"}`)
	r.publish("ci.1", "progress", `{"workflow":"bad","status":"running"}`)
	r.advance(5 * time.Second)
	r.publish("ci.1", "progress", `{"workflow":"ok","status":"succeeded"}`)
	r.publish("ci.1", "progress", `{"workflow":"bad","status":"failed","message":"compile error"}`)
	for range 3 {
		r.sweep(a)
		r.sweep(b)
	}
	r.wantKinds("after bad failed", "failed:bad")
	var data struct{ Message string }
	_ = json.Unmarshal(r.told[0].Data, &data)
	if data.Message != "compile error" || r.told[0].Topic != "ci.1" || r.told[0].EventID == "" {
		t.Errorf("failed notification = %+v, want topic ci.1, its event id and the latest data", r.told[0])
	}
	if got := r.health("ci.1"); len(got) != 0 {
		t.Errorf("health events for ended workflows = %v, want none", verdicts(got))
	}
}

// Two running workflows holding one key, as the lease incident did: one duplicate, on the newer holder.
func TestTwoHoldersOfOneKeyAreOneDuplicate(t *testing.T) {
	r := newRig(t)
	a, b := r.sweeper(nil, workflow.Config{}), r.sweeper(nil, workflow.Config{})
	r.publish("saga.1", "progress", `{"workflow":"A","status":"running"}`)
	r.publish("saga.1", "lock", `{"key":"project-42","holder":"agent-a","fence":7,"state":"acquired","workflow":"A"}`)
	r.sweep(a)
	r.publish("saga.2", "progress", `{"workflow":"B","status":"running"}`)
	r.publish("saga.2", "lock", `{"key":"project-42","holder":"agent-b","fence":8,"state":"acquired","workflow":"B"}`)
	// A renews after B acquired: B, with the higher fence, is still the second holder.
	r.publish("saga.1", "lock", `{"key":"project-42","holder":"agent-a","fence":7,"state":"renewed","workflow":"A"}`)
	for range 3 {
		r.sweep(a)
		r.sweep(b)
	}
	got := r.health("saga.2")
	if !equal(verdicts(got), []string{"duplicate:B"}) || got[0].Key != "project-42" {
		t.Fatalf("saga.2 health = %+v, want one duplicate on B for project-42", got)
	}
	if other := r.health("saga.1"); len(other) != 0 {
		t.Errorf("saga.1 health = %v, want none (the verdict goes to the newer holder)", verdicts(other))
	}
	r.wantKinds("after two holders of one key", "duplicate:B")
}

// A lock event whose fence went backwards is the other signature of two holders.
func TestFenceGoingBackIsADuplicate(t *testing.T) {
	r := newRig(t)
	s := r.sweeper(nil, workflow.Config{})
	r.publish("locks", "lock", `{"key":"k","holder":"h1","fence":12,"state":"acquired","workflow":"A"}`)
	r.publish("locks", "lock", `{"key":"k","holder":"h2","fence":11,"state":"renewed","workflow":"B"}`)
	r.sweep(s)
	r.sweep(s)
	got := r.health("locks")
	if !equal(verdicts(got), []string{"duplicate:B"}) || got[0].Key != "k" {
		t.Fatalf("health = %+v, want one duplicate on B for k", got)
	}
}

// failingNotifier refuses every notification, as an outbox that is unreachable would.
type failingNotifier struct{}

func (failingNotifier) Notify(context.Context, workflow.Notification) error {
	return context.DeadlineExceeded
}

// A replica that committed a verdict but could not queue its notification leaves it to the next sweep, of any
// replica: the on-call is told once all the same.
func TestCommittedVerdictIsNotifiedAfterAFailedQueue(t *testing.T) {
	r := newRig(t)
	cfg := workflow.Config{StallAfter: 10 * time.Second, Now: r.clock}
	broken := workflow.New(pubsub.NewWorkflows(r.pub), failingNotifier{}, cfg)
	r.publish("deploy.2", "progress", `{"workflow":"wf-3","status":"running"}`)
	r.advance(11 * time.Second)
	if err := broken.Sweep(context.Background()); err == nil {
		t.Fatalf("Sweep with a failing notifier = nil, want its error")
	}
	if got := verdicts(r.health("deploy.2")); !equal(got, []string{"stalled:wf-3"}) {
		t.Fatalf("health = %v, want the stall committed", got)
	}
	healthy := r.sweeper(nil, workflow.Config{StallAfter: 10 * time.Second})
	r.sweep(healthy)
	r.sweep(healthy)
	r.wantKinds("(the stall told once, by the healthy replica)", "stalled:wf-3")
	if got := r.health("deploy.2"); len(got) != 1 {
		t.Errorf("health = %v, want still one verdict", verdicts(got))
	}
}
