//go:build slow

package browser

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// The console's browser tests: the real hub run through run() against a real Redis, the real console in a headless
// Chromium, events published through the Go publisher. Each test leaves a screenshot in the test output folder.

// consoleTab starts a browser and a hub (with env) on a Redis of its own, and opens a tab of that browser.
func consoleTab(t *testing.T, env ...string) (*hubtest.Hub, context.Context) {
	t.Helper()
	browser := newBrowser(t)
	h := hubtest.Start(t, rig.StartRedis(t), env...)
	return h, newTab(t, browser)
}

func TestConsoleProgress(t *testing.T) {
	h, tab := consoleTab(t)
	const topic = "console.progress"
	navigate(t, tab, h.URL+"/?topic="+topic+"&stall_after=2s")
	waitJS(t, tab, 10*time.Second, "console connects", `__hub.state === 'live'`)

	h.Publish(topic, "progress", `{"workflow":"wf-build","title":"Build api-gateway","step":"compile","progress":0.25,"status":"running","agent":"agent-1","eta_s":90}`)
	h.Publish(topic, "progress", `{"workflow":"wf-test","title":"Test api-gateway","step":"unit tests","progress":0.5,"status":"running","agent":"agent-2"}`)
	h.Publish(topic, "progress", `{"workflow":"wf-deploy","title":"Deploy api-gateway","step":"waiting for build","progress":0,"status":"queued"}`)
	took := waitJS(t, tab, 2*time.Second, "three cards with step, percent and status", fmt.Sprintf(`%s && %s && %s`,
		cardIs("wf-build", "compile", "25", "running"),
		cardIs("wf-test", "unit tests", "50", "running"),
		cardIs("wf-deploy", "waiting for build", "0", "queued")))
	t.Logf("cards up to date %v after publishing", took)

	h.Publish(topic, "progress", `{"workflow":"wf-deploy","step":"rollout","progress":0.1,"status":"failed","message":"rollout failed: 3 pods in CrashLoopBackOff"}`)
	waitJS(t, tab, 2*time.Second, "failed card sorts first", cardIs("wf-deploy", "rollout", "10", "failed")+
		` && `+cardOrder+`[0] === 'wf-deploy'`)

	// wf-test keeps reporting; wf-build goes quiet and must be marked stalled after stall_after (2 s).
	stalled := cardSel("wf-build") + `.dataset.stalled === 'true'`
	for i := 0; !evalJS[bool](t, tab, stalled); i++ {
		if i > 40 {
			t.Fatalf("wf-build not stalled 8 s after its last event; page: %s", evalJS[string](t, tab, pageState))
		}
		h.Publish(topic, "progress", fmt.Sprintf(`{"workflow":"wf-test","step":"unit tests","progress":%.2f,"status":"running"}`, 0.5+float64(i)/100))
		time.Sleep(200 * time.Millisecond)
	}
	if evalJS[bool](t, tab, cardSel("wf-test")+`.dataset.stalled === 'true'`) {
		t.Errorf("wf-test is marked stalled although it kept reporting")
	}
	if got, want := evalJS[[]string](t, tab, cardOrder), []string{"wf-deploy", "wf-build", "wf-test"}; !slices.Equal(got, want) {
		t.Errorf("card order = %v, want failed, then stalled, then running: %v", got, want)
	}
	if txt := evalJS[string](t, tab, cardSel("wf-build")+`.querySelector('.status').textContent`); txt != "❚❚Stalled? · running, quiet" {
		t.Errorf("stalled card's status text = %q, want a word next to the colour (and a question: the page's timer, not the hub, says so)", txt)
	}
	screenshot(t, tab, "console-progress")

	// The board works without a mouse: W enters the cards, arrows move, Enter narrows the log to that workflow.
	if err := chromedp.Do(tab, chromedp.KeyEvent("w"), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent("\r")); err != nil {
		t.Fatalf("keys W, →, Enter: %v", err)
	}
	waitJS(t, tab, 2*time.Second, "keyboard selects wf-build and filters the log", `document.activeElement.dataset.workflow === 'wf-build' && `+
		`document.getElementById('log-workflow').value === 'wf-build' && document.querySelectorAll('#log .log-row').length > 0 && `+
		`[...document.querySelectorAll('#log .log-row')].every(r => r.dataset.workflow === 'wf-build')`)

	// A reload paints from the snapshot and counts nothing twice.
	navigate(t, tab, h.URL+"/?topic="+topic+"&stall_after=2s")
	waitJS(t, tab, 10*time.Second, "reloaded console shows the snapshot", `__hub.state === 'live' && `+
		cardIs("wf-deploy", "rollout", "10", "failed")+` && `+cardSel("wf-build")+`.dataset.stalled === 'true'`)
	if n := evalJS[int](t, tab, `__hub.counts.events + __hub.counts.replayed`); n != 0 {
		t.Errorf("after a reload the console applied %d events on top of the snapshot, want 0", n)
	}
}

func TestConsoleReconnect(t *testing.T) {
	h, tab := consoleTab(t, "HUB_SSE_RETRY=300ms")
	const topic = "console.reconnect"
	navigate(t, tab, h.URL+"/?topic="+topic)
	waitJS(t, tab, 10*time.Second, "console connects", `__hub.state === 'live'`)

	var ids []string
	for i := range 40 {
		switch i {
		case 12:
			if err := h.Stop(); err != nil {
				t.Fatalf("stop hub: %v", err)
			}
		case 24:
			h.Start(h.Addr)
		}
		ids = append(ids, h.Publish(topic, "progress",
			fmt.Sprintf(`{"workflow":"wf-r","step":"step %02d","progress":%.3f,"status":"running"}`, i, float64(i+1)/40)))
		time.Sleep(25 * time.Millisecond)
	}
	waitJS(t, tab, 15*time.Second, "every event in the log", fmt.Sprintf(
		`document.querySelectorAll('#log [data-id]').length >= %d && __hub.state === 'live'`, len(ids)))
	got := evalJS[[]string](t, tab, `[...document.querySelectorAll('#log [data-id]')].map(e => e.dataset.id).reverse()`)
	if !slices.Equal(got, ids) {
		t.Errorf("log ids (oldest first) =\n%v\nwant every published id once, in order:\n%v", got, ids)
	}
	if rows := evalJS[[]string](t, tab, strayRows); len(rows) > 0 {
		t.Errorf("log rows that are neither events nor the console's notes: %q", rows)
	}
	states := evalJS[[]string](t, tab, `__hub.states`)
	if !hasSubsequence(states, "live", "reconnecting", "live") {
		t.Errorf("connection states = %v, want live → reconnecting → live", states)
	}
	if n := evalJS[int](t, tab, `__hub.counts.replayed`); n == 0 {
		t.Errorf("replayed counter = 0 after events published while the hub was down")
	}
	waitJS(t, tab, 2*time.Second, "card shows the last step", cardIs("wf-r", "step 39", "100", "running"))
	screenshot(t, tab, "console-reconnect")
}

func TestConsoleReset(t *testing.T) {
	h, tab := consoleTab(t, "HUB_SSE_RETRY=300ms")
	const topic = "console.reset"
	step := func(i int) {
		h.Publish(topic, "progress", fmt.Sprintf(`{"workflow":"wf-x","title":"Reindex search","step":"shard %d","progress":%.2f,"status":"running"}`, i, float64(i)/20))
	}
	for i := range 3 {
		step(i)
	}
	navigate(t, tab, h.URL+"/?topic="+topic)
	waitJS(t, tab, 10*time.Second, "console shows the snapshot", `__hub.state === 'live' && `+cardIs("wf-x", "shard 2", "10", "running"))

	// While the page is away, the history moves on and is trimmed below the page's position.
	if err := h.Stop(); err != nil {
		t.Fatalf("stop hub: %v", err)
	}
	for i := 3; i < 15; i++ {
		step(i)
	}
	if err := h.RDB.XTrimMaxLen(context.Background(), h.StreamKey(topic), 3).Err(); err != nil {
		t.Fatalf("XTRIM %s MAXLEN 3: %v", h.StreamKey(topic), err)
	}
	h.Start(h.Addr)

	waitJS(t, tab, 15*time.Second, "console reloaded the snapshot after the reset", `__hub.counts.resets === 1 && `+
		`__hub.counts.snapshots === 2 && __hub.state === 'live' && `+
		`document.querySelector('#last-reset:not([hidden])')?.dataset.reason === 'history-truncated' && `+
		cardIs("wf-x", "shard 14", "70", "running"))
	states := evalJS[[]string](t, tab, `__hub.states`)
	if !hasSubsequence(states, "reset", "live") {
		t.Errorf("connection states = %v, want reset → live", states)
	}
	ids := evalJS[[]string](t, tab, `[...document.querySelectorAll('#log [data-id]')].map(e => e.dataset.id)`)
	if len(ids) != len(slicesCompact(ids)) {
		t.Errorf("log shows an event twice after the reset: %v", ids)
	}
	if rows := evalJS[[]string](t, tab, strayRows); len(rows) > 0 {
		t.Errorf("log rows that are neither events nor the console's notes: %q", rows)
	}
	screenshot(t, tab, "console-reset")
}

func TestConsoleLockAlarm(t *testing.T) {
	h, tab := consoleTab(t)
	const topic = "console.locks"
	// A populated board: the screenshot of this test is the one the README shows.
	for _, d := range []string{
		`{"workflow":"wf-migrate","title":"Migrate orders DB","step":"copy rows","progress":0.62,"status":"running","agent":"agent-7","eta_s":340,"message":"copied 6.2M of 10M rows"}`,
		`{"workflow":"wf-report","title":"Render nightly report","step":"aggregate","progress":0.35,"status":"running","agent":"agent-3","message":"region eu-west done"}`,
		`{"workflow":"wf-deploy","title":"Deploy web frontend","step":"canary","progress":0.8,"status":"failed","agent":"agent-2","message":"canary error rate 4.1% > 1%"}`,
		`{"workflow":"wf-certs","title":"Rotate TLS certificates","step":"done","progress":1,"status":"succeeded","agent":"agent-5","message":"12 certificates rotated"}`,
		`{"workflow":"wf-index","title":"Reindex search","step":"waiting for a slot","progress":0,"status":"queued"}`,
		`{"workflow":"wf-backup","title":"Backup object store","step":"snapshot","progress":0.4,"status":"cancelled","agent":"agent-4","message":"cancelled by operator"}`,
	} {
		h.Publish(topic, "progress", d)
	}
	h.Publish(topic, "lock", `{"key":"db/orders","holder":"agent-7","fence":41,"state":"acquired","ttl_ms":30000,"workflow":"wf-migrate"}`)
	h.Publish(topic, "lock", `{"key":"reports/nightly","holder":"agent-3","fence":12,"state":"acquired","ttl_ms":30000,"workflow":"wf-report"}`)
	navigate(t, tab, h.URL+"/?topic="+topic)
	waitJS(t, tab, 10*time.Second, "console shows the snapshot", `__hub.state === 'live' && __hub.counts.locks === 2`)

	h.Publish(topic, "lock", `{"key":"db/orders","holder":"agent-7","fence":41,"state":"lost","ttl_ms":0,"workflow":"wf-migrate"}`)
	waitJS(t, tab, 2*time.Second, "lost-lease alarm visible", `(() => {
		const a = document.querySelector('#alarms [data-alarm="lost"][data-key="db/orders"]');
		const row = document.querySelector('#locks tr[data-key="db/orders"]');
		return a && a.getClientRects().length > 0 && row && row.dataset.state === 'lost' && row.dataset.alarm === 'lost' &&
			`+cardSel("wf-migrate")+`.dataset.leaseAlarm === 'lost';
	})()`)

	h.Publish(topic, "lock", `{"key":"reports/nightly","holder":"agent-9","fence":13,"state":"acquired","ttl_ms":30000}`)
	waitJS(t, tab, 2*time.Second, "overlapping holders alarm visible",
		`document.querySelector('#alarms [data-alarm="overlap"][data-key="reports/nightly"]')?.getClientRects().length > 0`)
	screenshot(t, tab, "console")
}

func TestConsoleIdempotency(t *testing.T) {
	h, tab := consoleTab(t)
	const topic = "console.idem"
	navigate(t, tab, h.URL+"/?topic="+topic)
	waitJS(t, tab, 10*time.Second, "console connects", `__hub.state === 'live'`)

	// An agent that retries a publish sends the same idempotency key again under a new stream id.
	first := h.Publish(topic, "progress", `{"workflow":"wf-i","step":"upload","progress":0.5,"status":"running","idempotency_key":"wf-i/7"}`)
	h.Publish(topic, "progress", `{"workflow":"wf-i","step":"upload","progress":0.5,"status":"running","idempotency_key":"wf-i/7"}`)
	h.Publish(topic, "progress", `{"workflow":"wf-i","step":"verify","progress":0.9,"status":"running","idempotency_key":"wf-i/8"}`)
	waitJS(t, tab, 2*time.Second, "last event applied", cardIs("wf-i", "verify", "90", "running"))
	ids := evalJS[[]string](t, tab, `[...document.querySelectorAll('#log [data-workflow="wf-i"]')].map(e => e.dataset.id).reverse()`)
	if len(ids) != 2 || ids[0] != first {
		t.Errorf("log rows of wf-i = %v, want 2 starting with the first delivery %s", ids, first)
	}
	if n := evalJS[int](t, tab, `__hub.counts.duplicates`); n != 1 {
		t.Errorf("duplicates counter = %d, want 1", n)
	}
	if n := evalJS[int](t, tab, `__hub.workflow('wf-i').events`); n != 2 {
		t.Errorf("wf-i applied %d events, want 2 (the repeat is not applied)", n)
	}

	// A plain PUBLISH is ephemeral: no id, so EventSource repeats the previous lastEventId; the console must not
	// mistake it for a repeat of that event, nor the next stored event for an ephemeral one.
	channel := pubsub.Keys{Prefix: h.Prefix}.Channel(topic)
	if err := h.RDB.Publish(context.Background(), channel, `{"workflow":"wf-i","progress":0.95,"message":"ephemeral tick"}`).Err(); err != nil {
		t.Fatalf("PUBLISH %s: %v", channel, err)
	}
	waitJS(t, tab, 2*time.Second, "ephemeral event shown without an id",
		`(r => r && !r.dataset.id)(document.querySelector('#log [data-source="ephemeral"]')) && `+
			cardIs("wf-i", "verify", "95", "running"))
	last := h.Publish(topic, "progress", `{"workflow":"wf-i","step":"done","progress":1,"status":"succeeded"}`)
	waitJS(t, tab, 2*time.Second, "stored event after an ephemeral one", cardIs("wf-i", "done", "100", "succeeded")+
		fmt.Sprintf(` && document.querySelector('#log [data-id]').dataset.id === %s && __hub.counts.ephemeral === 1`, jsString(last)))
}

// strayRows lists log rows that are not a stored event, an ephemeral one or a note of the console, such as a
// connection error mistaken for an event.
const strayRows = `[...document.querySelectorAll('#log .log-row')].filter(r => !r.dataset.id &&
	r.dataset.source !== 'ephemeral' && r.dataset.source !== 'console' || r.textContent.includes('unexpected id'))
	.map(r => r.textContent)`

// cardIs is a page expression: the workflow's card shows step, percent and status.
func cardIs(workflow, step, percent, status string) string {
	return fmt.Sprintf(`(c => c && c.dataset.step === %s && c.dataset.percent === %s && c.dataset.status === %s)(%s)`,
		jsString(step), jsString(percent), jsString(status), cardSel(workflow))
}

func slicesCompact(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}
