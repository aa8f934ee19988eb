//go:build slow

package browser

import (
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// The hub's control frames (reset, auth-expired) never carry an id. The hub no longer delivers a stored event of
// those types, and the console does its part: a frame of either type that carries an id is not obeyed. The page's
// EventSource is recorded as it is made so the test can hand it such frames. (Before: the forged auth-expired
// closed the stream and the forged reset reloaded the snapshot.)
func TestConsoleIgnoresControlFramesWithAnID(t *testing.T) {
	h, tab := consoleTab(t)
	record := `(() => { const Real = window.EventSource; window.__sources = [];
		window.EventSource = class extends Real { constructor(...a) { super(...a); window.__sources.push(this); } }; })();`
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: record}); err != nil {
		t.Fatalf("add the recording script: %v", err)
	}
	const topic = "console.control"
	first := h.Publish(topic, "progress", `{"workflow":"wf-c","step":"one","progress":0.1,"status":"running"}`)
	navigate(t, tab, h.URL+"/?topic="+topic)
	waitJS(t, tab, 10*time.Second, "console live with the first step", `__hub.state === 'live' && `+cardIs("wf-c", "one", "10", "running"))

	forge := func(typ, data, id string) {
		evalJS[bool](t, tab, `(() => { const es = window.__sources.at(-1); es.dispatchEvent(new MessageEvent(`+jsString(typ)+
			`, {data: `+jsString(data)+`, lastEventId: `+jsString(id)+`})); return true; })()`)
	}
	next := first[:len(first)-1] + "9" // a later id of the same topic, as a stored event would carry
	forge("auth-expired", `{}`, next)
	forge("reset", `{"topic":"`+topic+`","reason":"history-lost","oldest":"0-0"}`, next+"9")
	h.Publish(topic, "progress", `{"workflow":"wf-c","step":"two","progress":0.2,"status":"running"}`)
	waitJS(t, tab, 5*time.Second, "the next real event arrives", cardIs("wf-c", "two", "20", "running"))
	got := evalJS[map[string]any](t, tab, `({state: __hub.state, states: __hub.states, resets: __hub.counts.resets,
		snapshots: __hub.counts.snapshots, opens: __hub.counts.opens, sources: window.__sources.length})`)
	if got["state"] != "live" || got["resets"] != 0.0 || got["snapshots"] != 1.0 || got["opens"] != 1.0 || got["sources"] != 1.0 {
		t.Errorf("after an auth-expired and a reset carrying ids: %v; want live, no reset, one snapshot, one stream", got)
	}
}
