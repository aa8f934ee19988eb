//go:build slow

package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/syncverse/hub/internal/rig"
)

// chromiumPath finds the browser for the console tests. Under CI a missing browser fails the test, since a skipped
// browser test there would hide a broken console; on a workstation it skips with a hint.
func chromiumPath(t *testing.T) string {
	t.Helper()
	candidates := []string{os.Getenv("HUB_CHROMIUM"), "/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	rig.Missing(t, "chromium", "the console's browser tests do not run", "apt-get install -y chromium, or set HUB_CHROMIUM")
	return ""
}

// newBrowser starts a headless Chromium with a fresh profile for the test and returns a context whose tab is
// open. The browser is closed, and waited for, before the profile directory is removed.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath(t)
	profile := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.WindowSize(1400, 900),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-sync", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		closing, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = chromedp.Cancel(closing)
		cancelTab()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return ctx
}

// newTab opens another tab of the same browser; it closes when the test ends.
func newTab(t *testing.T, browser context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	// The window size includes the browser's own frame; the viewport is what a screenshot shows.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900)); err != nil {
		t.Fatalf("open tab: %v", err)
	}
	return ctx
}

// runIn runs a in tab and returns its value; it fails the test, naming what, when a errs or takes over within.
func runIn[T any](t *testing.T, tab context.Context, within time.Duration, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, within)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func navigate(t *testing.T, tab context.Context, url string) {
	t.Helper()
	runIn(t, tab, 15*time.Second, "Navigate("+url+")", chromedp.Navigate(url))
}

// evalJS evaluates expr in the page and decodes its value.
func evalJS[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	return runIn(t, tab, 10*time.Second, "Evaluate("+expr+")", chromedp.Evaluate[T](expr))
}

// pageState is what a failing wait prints: enough of the console's own view to tell why.
const pageState = `JSON.stringify({state: __hub.state, states: __hub.states, counts: __hub.counts,
	cards: [...document.querySelectorAll('#cards .card')].map(c => [c.dataset.workflow, c.dataset.shown,
	c.dataset.step, c.dataset.percent]), log: document.querySelectorAll('#log [data-id]').length})`

// waitJS polls until expr is true in the page, and fails the test with the page's state after within.
func waitJS(t *testing.T, tab context.Context, within time.Duration, what, expr string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		ctx, cancel := context.WithTimeout(tab, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+expr+")"))
		cancel()
		if err == nil && ok {
			return time.Since(start)
		}
		if time.Since(start) > within {
			state, _ := chromedp.Run(tab, chromedp.Evaluate[string](pageState))
			t.Fatalf("%s: not true within %v: %s (last error %v)\npage: %s", what, within, expr, err, state)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// outputDir is where the browser tests leave screenshots for a reviewer: $HUB_TEST_OUTPUT, else ./test-output.
func outputDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("HUB_TEST_OUTPUT")
	if dir == "" {
		dir = "test-output"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("create test output folder: %v", err)
	}
	return dir
}

// screenshot saves the tab's viewport as a PNG in the test output folder.
func screenshot(t *testing.T, tab context.Context, name string) {
	t.Helper()
	png := runIn(t, tab, 10*time.Second, "CaptureScreenshot", chromedp.CaptureScreenshot())
	path := filepath.Join(outputDir(t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("write screenshot: %v", err)
	}
	t.Logf("screenshot: %s", path)
}

// jsString quotes s for use inside a page expression.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// cardSel selects a workflow's card.
func cardSel(workflow string) string {
	return fmt.Sprintf(`document.querySelector('#cards .card[data-workflow=%s]')`, jsString(workflow))
}

// cardOrder is the workflows of the cards as the page shows them, top to bottom.
const cardOrder = `[...document.querySelectorAll('#cards .card')].map(c => c.dataset.workflow)`

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func hasSubsequence(have []string, want ...string) bool {
	i := 0
	for _, s := range have {
		if i < len(want) && s == want[i] {
			i++
		}
	}
	return i == len(want)
}
