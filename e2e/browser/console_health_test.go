//go:build slow

package browser

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
)

// The hub's own verdicts on the console: a stall the hub declared (the page's own timer is set far out of reach, so
// any "stalled" shown is the hub's), a duplicate run of one lock key, both again after a reload (from the snapshot),
// and the timeline that draws the incident: two holders of one key at once, and the hub's verdict on it.
func TestConsoleShowsHubVerdictsAndTimeline(t *testing.T) {
	h := hubtest.Start(t, rig.StartRedis(t), "HUB_WORKFLOWS_STALL_AFTER=2s", "HUB_WORKFLOWS_SWEEP=100ms")
	const topic = "saga.42"
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	tab := newTab(t, newBrowser(t))
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1400, 1000)); err != nil {
		t.Fatal(err)
	}
	url := h.URL + "/?topic=" + topic + "&stall_after=600s&theme=light"
	navigate(t, tab, url)
	waitJS(t, tab, 10*time.Second, "the console live on an empty topic", `__hub.state === 'live'`)
	h.Publish(topic, "progress", `{"workflow":"wf-saga-a","title":"Saga A: provision project 42","step":"create schema","progress":0.3,"status":"running","agent":"agent-a"}`)
	h.Publish(topic, "lock", `{"key":"project-42","holder":"agent-a","fence":7,"state":"acquired","ttl_ms":30000,"workflow":"wf-saga-a"}`)
	// Both sagas keep working from the moment they start, every 500 ms, so neither is ever silent for stall_after;
	// the build goes silent and stalls.
	var sagaB atomic.Bool
	wg.Go(func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for _, wf := range []string{"a", "b"} {
				if wf == "b" && !sagaB.Load() {
					continue
				}
				p := min(0.9, 0.3+float64(i)*0.01)
				_, _ = h.Pub.Publish(ctx, topic, "progress", fmt.Appendf(nil,
					`{"workflow":"wf-saga-%s","step":"create schema","progress":%.2f,"status":"running","agent":"agent-%s"}`, wf, p, wf))
				_, _ = h.Pub.Publish(ctx, topic, "lock", fmt.Appendf(nil,
					`{"key":"project-42","holder":"agent-%s","fence":%d,"state":"renewed","ttl_ms":30000,"workflow":"wf-saga-%s"}`,
					wf, map[string]int{"a": 7, "b": 8}[wf], wf))
			}
		}
	})
	h.Publish(topic, "progress", `{"workflow":"wf-build","title":"Build web frontend","step":"compile","progress":0.5,"status":"running","agent":"agent-c"}`)
	h.Publish(topic, "progress", `{"workflow":"wf-tests","title":"Integration tests","step":"suite 3/7","progress":0.4,"status":"failed","agent":"agent-d","message":"3 tests failed"}`)
	time.Sleep(1500 * time.Millisecond) // the second holder comes later, so the timeline shows two holds overlapping
	h.Publish(topic, "progress", `{"workflow":"wf-saga-b","title":"Saga B: provision project 42","step":"create schema","progress":0.1,"status":"running","agent":"agent-b"}`)
	h.Publish(topic, "lock", `{"key":"project-42","holder":"agent-b","fence":8,"state":"acquired","ttl_ms":30000,"workflow":"wf-saga-b"}`)
	sagaB.Store(true)

	verdicts := `__hub.state === 'live' &&
		` + cardSel("wf-build") + `?.dataset.shown === 'stalled' &&
		` + cardSel("wf-build") + `?.textContent.includes('Stalled · hub verdict') &&
		` + cardSel("wf-saga-b") + `?.textContent.includes('Duplicate run (hub verdict) on project-42') &&
		!!document.querySelector('#alarms:not([hidden])')?.textContent.includes('Duplicate run (hub verdict)')`
	waitJS(t, tab, 15*time.Second, "the hub's stall and duplicate verdicts on the cards and in the alarms", verdicts)
	// A machine stalled for stall_after can make even a busy saga stall for a moment (the hub then says recovered at
	// its next event); what must not happen is a saga that keeps working staying stalled.
	if got := evalJS[string](t, tab, cardSel("wf-saga-a")+`.dataset.shown`); got != "running" {
		t.Logf("wf-saga-a shown as %q at the verdicts; waiting for its next events", got)
		waitJS(t, tab, 3*time.Second, "wf-saga-a shown running (its events keep coming)", cardSel("wf-saga-a")+`?.dataset.shown === 'running'`)
	}

	evalJS[bool](t, tab, `document.querySelector('#timeline summary').click(), true`)
	waitJS(t, tab, 5*time.Second, "the timeline with the overlapping holds and the verdict", `
		document.querySelectorAll('#timeline-svg .tl-bar').length >= 4 &&
		document.querySelectorAll('#timeline-svg .tl-hold').length >= 2 &&
		document.querySelector('#timeline-svg .tl-overlap') && document.querySelector('#timeline-svg .tl-verdict')`)
	summary := evalJS[string](t, tab, `document.getElementById('timeline-summary').textContent`)
	for _, want := range []string{"at once", "project-42 held by agent-", "duplicate run of wf-saga-b", "Build web frontend stalled", "Integration tests failed"} {
		if !strings.Contains(summary, want) {
			t.Errorf("timeline summary = %q, want it to say %q", summary, want)
		}
	}
	evalJS[bool](t, tab, `document.getElementById('timeline').scrollIntoView(), true`)
	screenshot(t, tab, "console-timeline")
	if axe := axeSource(t); axe != "" {
		if vs := runAxe(t, tab, axe); len(vs) > 0 {
			for _, v := range vs {
				t.Errorf("axe with the timeline open: %s", v)
			}
		}
	}
	navigate(t, tab, url) // a console opened later sees the same verdicts, from the snapshot
	waitJS(t, tab, 10*time.Second, "the verdicts after a reload", verdicts)
}
