package notify_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/notify"
	"github.com/syncverse/hub/workflow"
)

// holdingReceiver keeps its first request until released, then accepts every request; it notes each delivery id.
type holdingReceiver struct {
	mu      sync.Mutex
	ids     []string
	arrived chan struct{} // closed when the first request came
	release chan struct{} // closed to let the first request go
}

func (rc *holdingReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	rc.mu.Lock()
	rc.ids = append(rc.ids, r.Header.Get("X-Hub-Delivery"))
	first := len(rc.ids) == 1
	rc.mu.Unlock()
	if first {
		close(rc.arrived)
		select {
		case <-rc.release:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (rc *holdingReceiver) seen() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.ids...)
}

// A delivery is finished only once its POST succeeded: while the request is in flight it is still pending, and a
// replica that stops mid-request leaves it for another, which delivers it with the same X-Hub-Delivery.
func TestDeliveryIsDoneOnlyAfterItsPOSTSucceeded(t *testing.T) {
	f := newFixture(t)
	rc := &holdingReceiver{arrived: make(chan struct{}), release: make(chan struct{})}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	defer close(rc.release)
	hooks := []notify.Webhook{{URL: srv.URL}}
	dying := notify.New(f.out, notify.Config{Webhooks: hooks, Consumer: "hub-a"})
	ctx, stop := context.WithCancel(context.Background())
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		_ = dying.Run(ctx)
	}()
	defer func() { stop(); <-ended }()
	if err := dying.Notify(context.Background(), note(workflow.Failed)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-rc.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("no POST within 10 s")
	}
	if n, err := f.out.Pending(context.Background()); err != nil || n != 1 {
		t.Fatalf("Pending while the POST is in flight = %d, %v; want 1: the delivery is not done before the receiver answered", n, err)
	}
	stop() // the replica goes away mid-request
	<-ended
	f.run(t, notify.Config{Webhooks: hooks, Consumer: "hub-b", Timeout: 100 * time.Millisecond,
		ClaimAfter: 300 * time.Millisecond})
	rig.Eventually(t, 10*time.Second, "the other replica's delivery", func() bool { return len(rc.seen()) == 2 })
	if ids := rc.seen(); ids[0] != ids[1] || ids[0] == "" {
		t.Errorf("X-Hub-Delivery of the two tries = %q, want one id", ids)
	}
	rig.Eventually(t, 5*time.Second, "outbox empty", func() bool {
		n, err := f.out.Pending(context.Background())
		return err == nil && n == 0
	})
}
