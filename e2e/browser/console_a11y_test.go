//go:build slow

package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/demo"
	"github.com/syncverse/hub/internal/rig"
)

// The console's accessibility tests: axe-core (from the npm registry, installed into web/a11y by `npm ci`) audits
// the demo in both themes; the keyboard and narrow-screen tests drive the same page as an operator without a mouse,
// or on a phone, would.

// axeSource reads axe.min.js as `npm ci` in web/a11y installs it. Under CI a missing axe-core fails the test, since
// a skipped audit there would let a violation land; on a workstation it skips with the command that installs it.
func axeSource(t *testing.T) string {
	t.Helper()
	path := filepath.Join("web", "a11y", "node_modules", "axe-core", "axe.min.js")
	src, err := os.ReadFile(path)
	if err == nil {
		return string(src)
	}
	rig.Missing(t, "axe-core", fmt.Sprintf("the console's accessibility audit does not run (%v)", err), "npm ci --prefix web/a11y")
	return ""
}

// a11yDemo is the demo's simulated agents publishing on the demo topic of a test hub, plus workflows in every state
// the agents reach only by chance: failed, and stalled under a lost lease (which raises an alarm).
func a11yDemo(t *testing.T) *hubtest.Hub {
	t.Helper()
	h := hubtest.Start(t, rig.StartRedis(t))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { demo.Run(ctx, h.Pub, h.RDB, prometheus.NewRegistry(), zerolog.Nop()) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	for _, d := range []string{
		`{"workflow":"wf-a11y-deploy","title":"Deploy web frontend","step":"canary","progress":0.8,"status":"failed","agent":"agent-8","message":"canary error rate 4.1% > 1%"}`,
		`{"workflow":"wf-a11y-migrate","title":"Migrate orders DB","step":"copy rows","progress":0.62,"status":"running","agent":"agent-9","eta_s":340}`,
	} {
		h.Publish(demo.Topic, "progress", d)
	}
	h.Publish(demo.Topic, "lock", `{"key":"db/orders","holder":"agent-9","fence":41,"state":"acquired","ttl_ms":30000,"workflow":"wf-a11y-migrate"}`)
	h.Publish(demo.Topic, "lock", `{"key":"db/orders","holder":"agent-9","fence":41,"state":"lost","ttl_ms":0,"workflow":"wf-a11y-migrate"}`)
	return h
}

// demoURL is the console on the demo topic; wf-a11y-migrate, which stops reporting, stalls after 3 s.
func demoURL(h *hubtest.Hub, theme string) string {
	return h.URL + "/?topic=" + demo.Topic + "&stall_after=3s&theme=" + theme
}

// waitDemoBoard waits until the board shows the demo's agents and every state the audit must cover.
func waitDemoBoard(t *testing.T, tab context.Context) {
	t.Helper()
	waitJS(t, tab, 20*time.Second, "demo board with agents, a failed and a stalled card, and locks", `__hub.state === 'live' &&
		document.querySelectorAll('#cards .card').length >= 5 && __hub.counts.locks >= 2 &&
		document.querySelector('#cards .card[data-shown="failed"]') &&
		document.querySelector('#cards .card[data-shown="stalled"]') &&
		document.querySelectorAll('#log .log-row').length >= 5 &&
		document.querySelector('#alarms:not([hidden]) .alarm[data-key="db/orders"]')`)
}

// axeViolation is one failed rule of an axe-core run, with the nodes that fail it.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target  []string `json:"target"`
		Summary string   `json:"summary"`
	} `json:"nodes"`
}

func (v axeViolation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s, %d nodes): %s", v.ID, v.Impact, len(v.Nodes), v.Help)
	for _, n := range v.Nodes {
		fmt.Fprintf(&b, "\n      %s: %s", strings.Join(n.Target, " "), strings.ReplaceAll(n.Summary, "\n", "; "))
	}
	return b.String()
}

// runAxe audits the whole page as it is with every rule axe-core runs by default (WCAG A/AA and best practices)
// and returns the violations.
func runAxe(t *testing.T, tab context.Context, axe string) []axeViolation {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 60*time.Second)
	defer cancel()
	if !evalJS[bool](t, tab, `!!window.axe`) {
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](axe)); err != nil {
			t.Fatalf("inject axe-core: %v", err)
		}
	}
	const audit = `axe.run(document, {resultTypes: ['violations']}).then(r => r.violations.map(v => ({
		id: v.id, impact: v.impact, help: v.help,
		nodes: v.nodes.map(n => ({target: n.target.map(String), summary: n.failureSummary || ''})),
	})))`
	vs, err := chromedp.Run(ctx, chromedp.Evaluate[[]axeViolation](audit, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe.run: %v", err)
	}
	return vs
}

// colourOnly lists the states on the board that a colour-blind operator could not read: a card whose badge does not
// name its status, a lock whose state cell has no word, a warning or error log row without its spoken prefix, a
// connection pill without a label.
const colourOnly = `[
	...[...document.querySelectorAll('#cards .card')].filter(c => !c.querySelector('.status-text').textContent.toLowerCase()
		.includes(c.dataset.shown)).map(c => 'card ' + c.dataset.workflow),
	...[...document.querySelectorAll('#locks .lock-state')].filter(td => !/[a-z]{3}/i.test(td.textContent))
		.map(td => 'lock ' + td.parentNode.dataset.key),
	...[...document.querySelectorAll('#log .level-error, #log .level-warn')].filter(r => !/^(Error|Warning): /.test(r.textContent))
		.map(r => 'log row ' + r.textContent),
	...(document.getElementById('conn-label').textContent.trim() ? [] : ['connection pill']),
]`

// TestConsoleAxe audits the demo in the light and the dark theme: the board with its cards, lock panel, alarm and
// event log, then the topic picker and the help dialog open over it, then the landing page's topic list.
func TestConsoleAxe(t *testing.T) {
	axe := axeSource(t)
	browser := newBrowser(t)
	h := a11yDemo(t)
	tab := newTab(t, browser)
	found := 0
	check := func(theme, state string) {
		t.Helper()
		vs := runAxe(t, tab, axe)
		for _, v := range vs {
			t.Errorf("%s theme, %s: %v", theme, state, v)
		}
		found += len(vs)
	}
	for _, theme := range []string{"light", "dark"} {
		navigate(t, tab, demoURL(h, theme))
		waitDemoBoard(t, tab)
		if got := evalJS[string](t, tab, `document.documentElement.dataset.theme`); got != theme {
			t.Fatalf("data-theme = %q, want %q", got, theme)
		}
		screenshot(t, tab, "console-axe-"+theme)
		check(theme, "board")
		if bad := evalJS[[]string](t, tab, colourOnly); len(bad) > 0 {
			t.Errorf("%s theme: states shown by colour alone, without a word: %v", theme, bad)
		}

		evalJS[bool](t, tab, `document.getElementById('browse-topics').click(), true`)
		waitJS(t, tab, 5*time.Second, "topic picker lists the demo topic",
			`document.querySelector('#topics-dialog[open] tr[data-topic="demo"]')`)
		screenshot(t, tab, "console-axe-"+theme+"-topics")
		check(theme, "topic picker")
		evalJS[bool](t, tab, `document.getElementById('topics-dialog').close(), true`)

		evalJS[bool](t, tab, `document.getElementById('help-open').click(), true`)
		waitJS(t, tab, 5*time.Second, "help dialog open", `document.querySelector('#help-dialog[open]')`)
		check(theme, "help dialog")
		evalJS[bool](t, tab, `document.getElementById('help-dialog').close(), true`)

		navigate(t, tab, h.URL+"/?theme="+theme)
		waitJS(t, tab, 10*time.Second, "landing page lists the demo topic", `document.querySelector('#empty tr[data-topic="demo"]')`)
		check(theme, "landing page")
	}
	t.Logf("axe-core: %d violations over 2 themes × 4 states", found)
}

// overflowing lists what sticks out sideways at the current width: the page itself, any element past either edge
// (the skip link and screen-reader text are off-screen on purpose), and any panel that scrolls sideways.
const overflowing = `(() => {
	const w = document.documentElement.clientWidth, bad = [];
	const name = (el) => el.id ? '#' + el.id : el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).split(' ')[0] : '');
	if (document.documentElement.scrollWidth > w) bad.push('page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + w);
	for (const el of document.querySelectorAll('body *')) {
		if (el.closest('.sr-only, .skip, dialog:not([open]), [hidden]')) continue;
		const r = el.getBoundingClientRect();
		if (!r.width || !r.height) continue;
		if (r.right > w + 0.5 || r.left < -0.5) bad.push(name(el) + ' spans ' + Math.round(r.left) + '..' + Math.round(r.right));
		const ox = getComputedStyle(el).overflowX;
		if ((ox === 'auto' || ox === 'scroll') && el.scrollWidth > el.clientWidth + 1) bad.push(name(el) + ' scrolls sideways');
	}
	return bad.slice(0, 20);
})()`

// TestConsoleNarrow: on a phone-sized screen (400 px, and the 500 px the layout was first made for) nothing on the
// board or in the dialogs sticks out sideways.
func TestConsoleNarrow(t *testing.T) {
	browser := newBrowser(t)
	h := a11yDemo(t)
	tab := newTab(t, browser)
	for _, width := range []int64{400, 500} {
		if err := chromedp.Do(tab, chromedp.EmulateViewport(width, 860, chromedp.EmulateMobile, chromedp.EmulateTouch)); err != nil {
			t.Fatalf("EmulateViewport(%d): %v", width, err)
		}
		navigate(t, tab, demoURL(h, "light"))
		waitDemoBoard(t, tab)
		if got := evalJS[int](t, tab, `document.documentElement.clientWidth`); got != int(width) {
			t.Fatalf("page width = %d, want %d", got, width)
		}
		screenshot(t, tab, fmt.Sprintf("console-%dpx", width))
		for _, state := range []struct{ name, open string }{
			{"board", ""},
			{"topic picker", `document.getElementById('browse-topics').click()`},
			{"help", `document.getElementById('help-open').click()`},
		} {
			if state.open != "" {
				evalJS[bool](t, tab, state.open+`, true`)
				waitJS(t, tab, 5*time.Second, state.name+" open", `document.querySelector('dialog[open]') && !document.querySelector('dialog[open] .topics-list:empty')`)
			}
			if bad := evalJS[[]string](t, tab, overflowing); len(bad) > 0 {
				t.Errorf("%d px, %s: overflows horizontally: %s", width, state.name, strings.Join(bad, "; "))
			}
			evalJS[bool](t, tab, `document.querySelectorAll('dialog[open]').forEach(d => d.close()), true`)
		}
	}
}
