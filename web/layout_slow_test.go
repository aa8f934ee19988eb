//go:build slow

package web

import (
	"cmp"
	"context"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/syncverse/hub/internal/rig"
)

// The console in Chromium, at a desktop and a phone width, light and dark: opening a full timeline (a lane filler
// as tall as a hundred workflows) leaves the event log room to read; it used to squeeze the log panel to nothing on
// a wide screen. The page runs without a hub behind it: the layout does not depend on what the stream brings.
func TestConsoleTimelineLeavesTheLogRoom(t *testing.T) {
	browser := cmp.Or(os.Getenv("HUB_CHROMIUM"), "chromium")
	path := rig.Require(t, browser, "the console's layout is not checked in a browser", "apt-get install -y chromium, or set HUB_CHROMIUM")
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()), chromedp.NoSandbox, chromedp.DisableGPU)...)
	defer cancelAlloc()
	for _, size := range []struct {
		name          string
		width, height int64
		minLog        float64
	}{
		{"desktop", 1280, 800, 150},
		{"phone", 390, 844, 100}, // one column: the log keeps its own height, whatever the timeline's
	} {
		for _, scheme := range []string{"light", "dark"} {
			t.Run(size.name+"/"+scheme, func(t *testing.T) {
				ctx, cancel := chromedp.NewContext(actx)
				defer cancel()
				ctx, stop := context.WithTimeout(ctx, 60*time.Second)
				defer stop()
				height := func(sel string) float64 {
					t.Helper()
					v, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelector('`+sel+`').getBoundingClientRect().height`))
					if err != nil {
						t.Fatalf("height of %s: %v", sel, err)
					}
					return v
				}
				if err := chromedp.Do(ctx, chromedp.EmulateViewport(size.width, size.height),
					chromedp.Navigate(srv.URL+"/?topic=demo&theme="+scheme)); err != nil {
					t.Fatal(err)
				}
				rig.Eventually(t, 20*time.Second, "the console's board", func() bool {
					ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.querySelector('#timeline summary') && document.documentElement.dataset.theme === '`+scheme+`'`))
					return err == nil && ok
				})
				before := height(".panel.log")
				if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('#timeline').open = true;
					document.querySelector('.timeline-wrap').append(Object.assign(document.createElement('div'), {style: 'height: 3000px'}))`)); err != nil {
					t.Fatal(err)
				}
				rig.Eventually(t, 10*time.Second, "the open timeline", func() bool { return height("#timeline-svg") > 0 })
				after, timeline := height(".panel.log"), height("#timeline")
				t.Logf("%s %s: event log %.0f px high, %.0f px with the timeline open (%.0f px)", size.name, scheme, before, after, timeline)
				if after < size.minLog || after < before-1 && size.width < 961 {
					t.Errorf("with the timeline open the event log is %.0f px high (%.0f px before), want at least %.0f", after, before, size.minLog)
				}
				if timeline < 100 {
					t.Errorf("the open timeline is %.0f px high, want room for its lanes", timeline)
				}
			})
		}
	}
}
