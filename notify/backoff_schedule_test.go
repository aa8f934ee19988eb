package notify_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/notify"
	"github.com/syncverse/hub/workflow"
)

// failingReceiver answers every request 500 and notes when each came.
type failingReceiver struct {
	mu sync.Mutex
	at []time.Time
}

func (rc *failingReceiver) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	rc.mu.Lock()
	rc.at = append(rc.at, time.Now())
	rc.mu.Unlock()
	w.WriteHeader(http.StatusInternalServerError)
}

func (rc *failingReceiver) tries() []time.Time {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]time.Time(nil), rc.at...)
}

// A receiver that always fails is tried on the documented schedule: each delay doubles from the first up to the cap,
// jittered in its upper half. So the k-th delay is at least half its step (a retry that does not wait, or a delay
// that does not grow, is caught) and at most its step plus the outbox's poll and some slack for a loaded machine.
func TestBackoffDoublesUpToItsCap(t *testing.T) {
	const (
		first, most = 200 * time.Millisecond, 1600 * time.Millisecond
		poll        = first // the dispatcher waits for new deliveries up to min(1 s, the first delay)
		slack       = 600 * time.Millisecond
		tries       = 7
	)
	f := newFixture(t)
	rc := &failingReceiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	d := f.run(t, notify.Config{Webhooks: []notify.Webhook{{URL: srv.URL}}, BackoffMin: first, BackoffMax: most})
	if err := d.Notify(context.Background(), note(workflow.Failed)); err != nil {
		t.Fatal(err)
	}
	rig.Eventually(t, 20*time.Second, "seven tries", func() bool { return len(rc.tries()) >= tries })
	at := rc.tries()
	step := first
	for k := 1; k < tries; k++ {
		gap := at[k].Sub(at[k-1])
		if gap < step/2 || gap > step+poll+slack {
			t.Errorf("delay before try %d = %v, want between %v and %v (a step of %v, jittered in its upper half)",
				k+1, gap.Round(time.Millisecond), step/2, step+poll+slack, step)
		}
		step = min(2*step, most)
	}
}
