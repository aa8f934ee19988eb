//go:build slow

package browser

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The console without a mouse, and without eyes on it: tab order, focus rings, shortcuts that keep out of fields,
// scrolling by keyboard, and the polite summary a screen reader hears.

// keys types keys into the focused element as a physical keyboard does: each key's text rides on its keydown, so a
// handler that prevents the keydown (a shortcut) also prevents the character. chromedp.KeyEvent sends the character
// as an event of its own, which lands in whatever field the shortcut just focused.
func keys(t *testing.T, tab context.Context, k string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	defer cancel()
	for _, r := range k {
		events := kb.Encode(r)
		down, up := *events[0], *events[len(events)-1]
		if len(events) == 3 {
			down.Text, down.UnmodifiedText = events[1].Text, events[1].UnmodifiedText
		}
		for _, e := range []input.DispatchKeyEventParams{down, up} {
			if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, e); err != nil {
				t.Fatalf("DispatchKeyEvent(%q %s): %v", r, e.Type, err)
			}
		}
	}
}

// focusStop names the focused element for the tab order, and says whether its focus can be seen: a ring of at
// least 2 px from :focus-visible, on an element inside the viewport.
const focusStop = `(() => {
	const el = document.activeElement;
	if (!el || el === document.body) return {name: 'body', ring: false};
	const name = el.classList.contains('card') ? 'card' : el.dataset.ack ? 'ack' :
		el.dataset.filter !== undefined ? 'summary:' + el.dataset.filter : el.id || el.className || el.tagName;
	const cs = getComputedStyle(el), r = el.getBoundingClientRect();
	const ring = el.matches(':focus-visible') && cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2 &&
		r.width > 0 && r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth;
	return {name, ring};
})()`

type stop struct {
	Name string `json:"name"`
	Ring bool   `json:"ring"`
}

// tabThrough presses Tab from the top of a freshly loaded page until the focus comes round again, and returns the
// stops in order.
func tabThrough(t *testing.T, tab context.Context) []stop {
	t.Helper()
	var stops []stop
	for range 80 {
		keys(t, tab, kb.Tab)
		s := evalJS[stop](t, tab, focusStop)
		if len(stops) > 0 && (s.Name == stops[0].Name || s.Name == "body") {
			return stops
		}
		stops = append(stops, s)
	}
	t.Fatalf("Tab did not come round in 80 presses: %v", stops)
	return nil
}

// focusables lists the visible controls (cards share one tab stop, so they are left out); unreached is those of them,
// still on the page, that no Tab press reached. Controls the demo adds during the walk are not counted.
const (
	focusables = `window.__controls = [...document.querySelectorAll('a[href], button, input, select, [tabindex]:not([tabindex="-1"])')]
	.filter(el => !el.closest('dialog:not([open]), [hidden]') && !el.classList.contains('card') &&
		el.getClientRects().length > 0 && !el.disabled), true`
	unreached = `__controls.filter(el => el.isConnected && el.getClientRects().length > 0 && !__reached.has(el))
	.map(el => el.id || el.dataset.filter || el.dataset.ack || el.outerHTML.slice(0, 60))`
)

func TestConsoleKeyboard(t *testing.T) {
	browser := newBrowser(t)
	h := a11yDemo(t)
	tab := newTab(t, browser)
	// Short enough that the cards and the log overflow their panels and must scroll.
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1200, 640)); err != nil {
		t.Fatalf("EmulateViewport: %v", err)
	}
	navigate(t, tab, demoURL(h, "light"))
	waitDemoBoard(t, tab)
	waitJS(t, tab, 20*time.Second, "log long enough to scroll", `(l => l.scrollHeight > l.clientHeight * 2)(document.getElementById('log'))`)
	evalJS[bool](t, tab, `window.__reached = new Set(), document.addEventListener('focusin', e => __reached.add(e.target)), true`)
	evalJS[bool](t, tab, focusables)

	stops := tabThrough(t, tab)
	var names []string
	for _, s := range stops {
		names = append(names, s.Name)
		if !s.Ring {
			t.Errorf("Tab stop %s: focus not visible (no :focus-visible ring of 2 px or more in the viewport)", s.Name)
		}
	}
	t.Logf("tab order: %v", names)
	want := []string{"skip", "topic-input", "browse-topics", "theme-toggle", "help-open", "stall-after", "ack",
		"summary:", "summary:attention", "card-filter", "card", "table-wrap", "log-pause", "log-text", "log-type",
		"log-workflow", "log"}
	if !hasSubsequence(names, want...) {
		t.Errorf("tab order = %v, want these in this order: %v", names, want)
	}
	if n := slices.Index(names, "card"); n < 0 || slices.Index(names[n+1:], "card") >= 0 {
		t.Errorf("tab order = %v, want the cards to be exactly one tab stop", names)
	}
	if left := evalJS[[]string](t, tab, unreached); len(left) > 0 {
		t.Errorf("controls no Tab press reached: %v", left)
	}

	keyboardFilters(t, tab)
	keyboardTheme(t, tab)
	keyboardLog(t, tab)
	keyboardCards(t, tab)
	keyboardShortcutsInFields(t, tab)
	screenshot(t, tab, "console-keyboard")
}

// focusOn puts the focus on the element with id, as the Tab presses above showed a keyboard can.
func focusOn(t *testing.T, tab context.Context, id string) {
	t.Helper()
	evalJS[bool](t, tab, fmt.Sprintf(`document.getElementById(%s).focus(), true`, jsString(id)))
}

const activeID = `(e => e.id || e.dataset.filter || e.tagName)(document.activeElement)`

func keyboardFilters(t *testing.T, tab context.Context) {
	t.Helper()
	keys(t, tab, "f")
	if id := evalJS[string](t, tab, activeID); id != "card-filter" {
		t.Fatalf("shortcut F focused %q, want card-filter", id)
	}
	keys(t, tab, "orders") // only wf-a11y-migrate's title; the demo's own workflows have a step called migrate
	waitJS(t, tab, 2*time.Second, "filter F narrows the cards to the one matching", `(c => c.length === 1 && c[0] === 'wf-a11y-migrate')(`+cardOrder+`)`)
	keys(t, tab, kb.Escape)
	waitJS(t, tab, 2*time.Second, "Esc clears the filter", `document.getElementById('card-filter').value === '' && `+cardOrder+`.length >= 5`)

	evalJS[bool](t, tab, `document.querySelector('#summary [data-filter="attention"]').focus(), true`)
	keys(t, tab, "\r")
	waitJS(t, tab, 2*time.Second, "Enter on Needs attention shows only failed and stalled cards", `(b => b.getAttribute('aria-pressed') === 'true')(document.querySelector('#summary [data-filter="attention"]')) &&
		[...document.querySelectorAll('#cards .card')].every(c => c.dataset.shown === 'failed' || c.dataset.shown === 'stalled')`)
	if id := evalJS[string](t, tab, activeID); id != "attention" {
		t.Errorf("after Enter on a summary button the focus is on %q, want it kept on the button", id)
	}
	keys(t, tab, " ")
	waitJS(t, tab, 2*time.Second, "Space releases the filter", `document.querySelector('#summary [data-filter="attention"]').getAttribute('aria-pressed') === 'false' && `+cardOrder+`.length >= 5`)
}

func keyboardTheme(t *testing.T, tab context.Context) {
	t.Helper()
	focusOn(t, tab, "theme-toggle")
	for _, want := range []string{"dark", "auto", "light"} {
		keys(t, tab, "\r")
		got := evalJS[[]string](t, tab, `[document.documentElement.dataset.theme, document.getElementById('theme-toggle').textContent, document.activeElement.id]`)
		if wantText := "Theme: " + strings.ToUpper(want[:1]) + want[1:]; got[0] != want || got[1] != wantText || got[2] != "theme-toggle" {
			t.Errorf("Enter on the theme toggle: [theme, text, focus] = %q, want [%s %s theme-toggle]", got, want, wantText)
		}
	}
}

func keyboardLog(t *testing.T, tab context.Context) {
	t.Helper()
	focusOn(t, tab, "log-pause")
	keys(t, tab, " ")
	waitJS(t, tab, 2*time.Second, "Space pauses the log", `document.getElementById('log-pause').getAttribute('aria-pressed') === 'true' &&
		document.getElementById('log-pause').textContent === 'Resume'`)
	rows := evalJS[int](t, tab, `document.querySelectorAll('#log .log-row').length`)
	waitJS(t, tab, 10*time.Second, "paused log counts the events it holds back", `/paused · [1-9]/.test(document.getElementById('log-count').textContent)`)
	if now := evalJS[int](t, tab, `document.querySelectorAll('#log .log-row').length`); now != rows {
		t.Errorf("paused log went from %d to %d rows", rows, now)
	}

	// The log is a tab stop of its own: End and Home scroll it.
	focusOn(t, tab, "log")
	keys(t, tab, kb.End)
	waitJS(t, tab, 2*time.Second, "End scrolls the focused log down", `document.getElementById('log').scrollTop > 0`)
	keys(t, tab, kb.Home)
	waitJS(t, tab, 2*time.Second, "Home scrolls it back", `document.getElementById('log').scrollTop === 0`)

	focusOn(t, tab, "log-pause")
	keys(t, tab, "\r")
	waitJS(t, tab, 2*time.Second, "Enter resumes the log with the held-back events", `document.getElementById('log-pause').getAttribute('aria-pressed') === 'false' &&
		document.querySelectorAll('#log .log-row').length > `+fmt.Sprint(rows))
}

func keyboardCards(t *testing.T, tab context.Context) {
	t.Helper()
	focusOn(t, tab, "log-text") // W from a field types a w; Esc leaves the field first
	keys(t, tab, kb.Escape)
	keys(t, tab, "w")
	waitJS(t, tab, 2*time.Second, "W focuses a card", `document.activeElement.classList.contains('card')`)
	keys(t, tab, kb.End)
	waitJS(t, tab, 2*time.Second, "End moves to the last card and scrolls the list to it", `(() => {
		const list = document.getElementById('cards'), c = document.activeElement, r = c.getBoundingClientRect(), l = list.getBoundingClientRect();
		return c === list.lastElementChild && list.scrollTop > 0 && r.top >= l.top - 1 && r.bottom <= l.bottom + 1;
	})()`)
	keys(t, tab, kb.Home)
	wf := evalJS[string](t, tab, `document.activeElement === document.getElementById('cards').firstElementChild && document.activeElement.dataset.workflow`)
	if wf == "" {
		t.Fatalf("Home did not move to the first card; focus on %s", evalJS[string](t, tab, `document.activeElement.outerHTML.slice(0, 80)`))
	}
	keys(t, tab, "\r")
	waitJS(t, tab, 2*time.Second, "Enter on a card narrows the log to its workflow", fmt.Sprintf(
		`document.getElementById('log-workflow').value === %s && [...document.querySelectorAll('#log .log-row')].every(r => r.dataset.workflow === %[1]s)`,
		jsString(wf)))
}

// keyboardShortcutsInFields types every shortcut letter into each text field: the letters land in the field and
// no shortcut fires. Outside a field, ? opens the help and Esc closes it.
func keyboardShortcutsInFields(t *testing.T, tab context.Context) {
	t.Helper()
	const typed = "f/t?wpad"
	for _, id := range []string{"topic-input", "card-filter", "log-text", "log-workflow"} {
		focusOn(t, tab, id)
		evalJS[bool](t, tab, fmt.Sprintf(`document.getElementById(%s).value = '', true`, jsString(id)))
		theme := evalJS[string](t, tab, `document.documentElement.dataset.theme`)
		paused := evalJS[string](t, tab, `document.getElementById('log-pause').getAttribute('aria-pressed')`)
		alarms := evalJS[int](t, tab, `__hub.counts.alarms`)
		keys(t, tab, typed)
		got := evalJS[[]string](t, tab, fmt.Sprintf(`[document.activeElement.id, document.getElementById(%s).value,
			String(!!document.querySelector('dialog[open]')), document.documentElement.dataset.theme,
			document.getElementById('log-pause').getAttribute('aria-pressed'), String(__hub.counts.alarms)]`, jsString(id)))
		if want := []string{id, typed, "false", theme, paused, fmt.Sprint(alarms)}; !slices.Equal(got, want) {
			t.Errorf("typing %q into #%s: [focus, value, dialog open, theme, paused, alarms] = %q, want %q", typed, id, got, want)
		}
		keys(t, tab, kb.Escape) // clears the field
		keys(t, tab, kb.Escape) // leaves it
	}
	evalJS[bool](t, tab, `document.getElementById('theme-toggle').focus(), true`)
	keys(t, tab, "?")
	waitJS(t, tab, 2*time.Second, "? opens the help", `document.querySelector('#help-dialog[open]') && document.getElementById('help-dialog').contains(document.activeElement)`)
	keys(t, tab, kb.Escape)
	waitJS(t, tab, 2*time.Second, "Esc closes the help and gives the focus back", `!document.querySelector('dialog[open]') && document.activeElement.id === 'theme-toggle'`)
}

// TestConsoleAnnouncesStatusChanges: the polite live region says when a workflow fails, stalls or resumes and when
// the stream is lost and back, and stays quiet for ordinary progress.
func TestConsoleAnnouncesStatusChanges(t *testing.T) {
	h, tab := consoleTab(t, "HUB_SSE_RETRY=300ms")
	const topic = "console.announce"
	h.Publish(topic, "progress", `{"workflow":"wf-old","title":"Old failure","status":"failed"}`)
	navigate(t, tab, h.URL+"/?topic="+topic+"&stall_after=2s")
	waitJS(t, tab, 10*time.Second, "console connects", `__hub.state === 'live'`)
	if got := evalJS[[]string](t, tab, `(r => [r.getAttribute('role'), r.getAttribute('aria-live')])(document.getElementById('announce'))`); !slices.Equal(got, []string{"status", "polite"}) {
		t.Fatalf("#announce [role, aria-live] = %q, want [status polite]", got)
	}
	evalJS[bool](t, tab, `window.__said = [], new MutationObserver(() => __said.push(document.getElementById('announce').textContent))
		.observe(document.getElementById('announce'), {childList: true, characterData: true, subtree: true}), true`)

	for i := range 10 {
		h.Publish(topic, "progress", fmt.Sprintf(`{"workflow":"wf-a","title":"Build api","step":"compile","progress":%.1f,"status":"running"}`, float64(i)/10))
		h.Publish(topic, "progress", fmt.Sprintf(`{"workflow":"wf-b","title":"Test api","step":"unit","progress":%.1f,"status":"running"}`, float64(i)/10))
	}
	waitJS(t, tab, 2*time.Second, "progress painted", cardIs("wf-a", "compile", "90", "running")+" && "+cardIs("wf-b", "unit", "90", "running"))
	h.Publish(topic, "progress", `{"workflow":"wf-a","title":"Build api","step":"link","progress":0.95,"status":"failed"}`)
	said := waitSaid(t, tab, 1, "Failed: Build api.")
	if strings.Contains(said[0], "Old failure") {
		t.Errorf("announced %q: the failure already on the board at load is not news", said[0])
	}
	waitSaid(t, tab, 2, "Stalled: Test api.") // wf-b has been quiet for stall_after
	h.Publish(topic, "progress", `{"workflow":"wf-b","title":"Test api","step":"unit","progress":0.95,"status":"running"}`)
	waitSaid(t, tab, 3, "Resumed: Test api.")
	h.Publish(topic, "progress", `{"workflow":"wf-b","title":"Test api","step":"done","progress":1,"status":"succeeded"}`)
	waitJS(t, tab, 2*time.Second, "wf-b succeeded", cardIs("wf-b", "done", "100", "succeeded"))

	if err := h.Stop(); err != nil {
		t.Fatalf("stop hub: %v", err)
	}
	waitSaid(t, tab, 4, "Connection lost, reconnecting.")
	h.Start(h.Addr)
	said = waitSaid(t, tab, 5, "Connection is live again.")
	if len(said) != 5 {
		t.Errorf("announcements = %q, want the 5 status changes and nothing for the 22 progress events", said)
	}
}

// waitSaid waits for the n-th announcement and checks its text.
func waitSaid(t *testing.T, tab context.Context, n int, want string) []string {
	t.Helper()
	waitJS(t, tab, 10*time.Second, fmt.Sprintf("announcement %d", n), fmt.Sprintf(`__said.length >= %d`, n))
	said := evalJS[[]string](t, tab, `__said`)
	if said[n-1] != want {
		t.Errorf("announcement %d = %q, want %q (all: %q)", n, said[n-1], want, said)
	}
	return said
}
