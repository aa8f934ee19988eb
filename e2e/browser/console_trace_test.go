//go:build slow

package browser

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/syncverse/hub/e2e/hubtest"
)

// An event's trace id in the console: EventSource cannot read the SSE trace line, so the log's "trace" disclosure
// asks the history API for that one event when opened, and not before. One event is published with a traceparent
// and one without; the keyboard reaches the log's trace control, keeps it while a newer event arrives, opens each,
// and reads the trace id and "no trace".
func TestConsoleTraceID(t *testing.T) {
	h, tab := consoleTab(t)
	const topic = "console.trace"
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	navigate(t, tab, h.URL+"/?topic="+topic)
	waitJS(t, tab, 10*time.Second, "console live", `__hub.state === 'live'`)

	traced := publishHTTP(t, h, topic, `{"workflow":"wf-t","step":"traced","progress":0.2,"status":"running"}`,
		"00-"+traceID+"-00f067aa0ba902b7-01")
	plain := publishHTTP(t, h, topic, `{"workflow":"wf-t","step":"plain","progress":0.4,"status":"running"}`, "")
	row := func(id string) string {
		return fmt.Sprintf(`document.querySelector('#log .log-row[data-id=%s]')`, jsString(id))
	}
	waitJS(t, tab, 5*time.Second, "both events in the log", row(traced)+` && `+row(plain))
	const asked = `performance.getEntriesByType('resource').filter(r => r.name.includes('/history')).length`
	if n := evalJS[int](t, tab, asked); n != 0 {
		t.Errorf("before any trace is opened the page asked the history API %d times, want 0", n)
	}

	// The log is one tab stop, and its newest row's trace button the next one; Enter opens it.
	evalJS[bool](t, tab, `document.getElementById('log').focus(), true`)
	if err := chromedp.Do(tab, chromedp.KeyEvent(kb.Tab)); err != nil {
		t.Fatalf("Tab: %v", err)
	}
	waitJS(t, tab, 2*time.Second, "Tab from the log reaches the newest row's trace button",
		`document.activeElement.classList.contains('trace-btn') && document.activeElement.closest('.log-row').dataset.id === `+jsString(plain))
	// A newer event arriving does not take the tab stop (nor the focus) away from the button the keyboard is on.
	newer := publishHTTP(t, h, topic, `{"workflow":"wf-t","step":"newer","progress":0.6,"status":"running"}`, "")
	waitJS(t, tab, 5*time.Second, "the newer event in the log", row(newer))
	waitJS(t, tab, 2*time.Second, "the focus stays on the trace button it was on",
		`document.activeElement.classList.contains('trace-btn') && document.activeElement.closest('.log-row').dataset.id === `+jsString(plain)+
			` && document.activeElement.tabIndex === 0 && document.activeElement.getClientRects().length > 0`)
	if err := chromedp.Do(tab, chromedp.KeyEvent("\r")); err != nil {
		t.Fatalf("Enter: %v", err)
	}
	waitJS(t, tab, 5*time.Second, "the event without a traceparent says no trace",
		row(plain)+`.querySelector('.trace-detail[data-state="none"]')?.textContent.startsWith('no trace')`)

	// Down moves to the older row's button; Space opens it.
	if err := chromedp.Do(tab, chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(" ")); err != nil {
		t.Fatalf("Down, Space: %v", err)
	}
	waitJS(t, tab, 5*time.Second, "the traced event shows its trace id", row(traced)+`.querySelector('.trace-id')?.textContent === `+jsString(traceID))
	got := evalJS[map[string]any](t, tab, `(() => { const r = `+row(traced)+`, b = r.querySelector('.trace-btn');
		return {expanded: b.getAttribute('aria-expanded'), focused: document.activeElement === b, tabStops: document.querySelectorAll('#log .trace-btn[tabindex="0"]').length,
			select: getComputedStyle(r.querySelector('.trace-id')).userSelect, copy: !!r.querySelector('.trace-detail button.trace-copy')}; })()`)
	want := map[string]any{"expanded": "true", "focused": true, "tabStops": 1.0, "select": "all", "copy": true}
	if mustJSON(got) != mustJSON(want) {
		t.Errorf("the traced row after Down and Space: %v, want %v", got, want)
	}
	if n := evalJS[int](t, tab, asked); n != 2 {
		t.Errorf("after opening two traces the page asked the history API %d times, want 2", n)
	}
	screenshot(t, tab, "console-trace")

	// Closing and opening again shows what was found without asking again.
	if err := chromedp.Do(tab, chromedp.KeyEvent("\r"), chromedp.KeyEvent("\r")); err != nil {
		t.Fatalf("Enter, Enter: %v", err)
	}
	waitJS(t, tab, 2*time.Second, "reopened, the trace id is back", row(traced)+`.querySelector('.trace-id')?.textContent === `+jsString(traceID))
	if n := evalJS[int](t, tab, asked); n != 2 {
		t.Errorf("reopening a trace asked the history API again: %d requests, want 2", n)
	}

	// Both disclosures open, in the light and the dark theme: axe-core finds nothing.
	axe := axeSource(t)
	for _, theme := range []string{"light", "dark"} {
		evalJS[bool](t, tab, `document.documentElement.dataset.theme = `+jsString(theme)+`, true`)
		for _, v := range runAxe(t, tab, axe) {
			t.Errorf("%s theme, traces open: %s", theme, v)
		}
	}
	screenshot(t, tab, "console-trace-dark")
}

// publishHTTP publishes one event through POST /publish, with a traceparent header when traceparent is not empty,
// and returns its id.
func publishHTTP(t *testing.T, h *hubtest.Hub, topic, data, traceparent string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.URL+"/publish", strings.NewReader(`{"topic":`+jsString(topic)+`,"type":"progress","data":`+data+`}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if traceparent != "" {
		req.Header.Set("traceparent", traceparent)
	}
	resp, err := h.Client().Do(req)
	if err != nil {
		t.Fatalf("POST /publish: %v", err)
	}
	defer resp.Body.Close()
	var answer struct {
		ID       string   `json:"id"`
		Warnings []string `json:"warnings"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != http.StatusAccepted || answer.ID == "" {
		t.Fatalf("POST /publish = %d, %+v (%v); want 202 with an id", resp.StatusCode, answer, err)
	}
	if w := resp.Header.Get("Warning"); w != "" {
		t.Fatalf("POST /publish warned %q: the traceparent was not taken", w)
	}
	return answer.ID
}
