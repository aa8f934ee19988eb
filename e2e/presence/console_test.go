//go:build slow

package presence

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/syncverse/hub/internal/rig"
)

// TestConsoleShowsWhoIsWatching: the console's status bar counts the watchers of the followed topic (its own stream
// and another on a second hub), and the count is reached with the keyboard, its tooltip shown on focus.
func TestConsoleShowsWhoIsWatching(t *testing.T) {
	browser := ""
	for _, c := range []string{os.Getenv("HUB_CHROMIUM"), "/usr/bin/chromium", "chromium", "chromium-browser"} {
		if p, err := exec.LookPath(c); c != "" && err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("chromium not found (set HUB_CHROMIUM)")
	}
	h1, h2 := twoHubs(t)
	stream(t, h2.URL, nil, nil, "room") // an anonymous watcher on the other hub

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(actx)
	defer cancelTab()
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	if err := chromedp.Do(ctx, chromedp.Navigate(h1.URL+"/?topic=room")); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	eval := func(expr string) string {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return v
	}
	rig.Eventually(t, interval+2*slack, "the console counts 2 watchers", func() bool {
		return eval(`document.querySelector('#watchers .watchers')?.firstChild?.textContent || ''`) == "2"
	})
	// A headless page has no window focus of its own: emulate it, as a user's focused window has it.
	if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		t.Fatalf("focus emulation: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Focus(`#watchers .watchers`)); err != nil {
		t.Fatalf("focus the count: %v", err)
	}
	count := eval(`document.activeElement.firstChild.textContent`)
	tip := eval(`document.getElementById(document.activeElement.getAttribute('aria-describedby')).textContent`)
	tipShown := eval(`getComputedStyle(document.querySelector('#watchers .watchers-tip')).display`) != "none"
	if count != "2" || !strings.Contains(tip, "2 streams on 2 hubs") || !tipShown {
		t.Errorf("watching %q, tooltip %q shown %v; want 2, '2 streams on 2 hubs', shown on focus", count, tip, tipShown)
	}
	if !strings.Contains(tip, "presence grant") {
		t.Errorf("tooltip %q: an anonymous console may not see names and should say why", tip)
	}
}
