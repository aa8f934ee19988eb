//go:build slow

package browser

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/internal/tokentest"
)

// The rig of the console's sign-in tests: the hub behind a counting proxy, the browser, a publisher, a login page.

const signinLoginURL = "https://sso.example.com/hub-login"

// countingProxy forwards to the hub and keeps the method and path of every request. It serves the pages of own
// itself, by path, as a reverse proxy in front of a hub and a company login page would.
type countingProxy struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newCountingProxy(t *testing.T, target string, own map[string]http.Handler) *countingProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // an SSE frame goes through at once
	p := &countingProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen = append(p.seen, r.Method+" "+r.URL.Path)
		p.mu.Unlock()
		if h, ok := own[r.URL.Path]; ok {
			h.ServeHTTP(w, r)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { p.CloseClientConnections(); p.Close() })
	return p
}

// mark is how many requests have been seen so far; since(mark) lists those after it.
func (p *countingProxy) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.seen)
}

func (p *countingProxy) since(mark int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen[mark:])
}

// signinHub runs the hub with HS256 auth and auth.login_url, the browser, and a tab on the console behind the
// counting proxy; the browser starts after the proxy so that it is closed first.
func signinHub(t *testing.T) (*hubtest.Hub, *countingProxy, context.Context) {
	t.Helper()
	return signinHubWith(t, signinLoginURL, nil)
}

func signinHubWith(t *testing.T, loginURL string, own map[string]http.Handler) (*hubtest.Hub, *countingProxy, context.Context) {
	t.Helper()
	h := hubtest.Start(t, rig.StartRedis(t), "HUB_AUTH_HMAC_SECRET="+tokentest.Secret, "HUB_AUTH_LOGIN_URL="+loginURL,
		"HUB_SSE_RETRY=300ms")
	p := newCountingProxy(t, h.URL, own)
	return h, p, newTab(t, newBrowser(t))
}

// signInWith pastes tok into the sign-in field and presses Enter, as an operator would.
func signInWith(t *testing.T, tab context.Context, tok string) {
	t.Helper()
	evalJS[bool](t, tab, fmt.Sprintf(`(el => (el.focus(), el.value = %s, el.dispatchEvent(new Event('input')), true))(
		document.getElementById('signin-token'))`, jsString(tok)))
	if err := chromedp.Do(tab, chromedp.KeyEvent("\r")); err != nil {
		t.Fatalf("key Enter in the sign-in field: %v", err)
	}
}

// browserCookie is the session cookie as the browser holds it for url, or nil.
func browserCookie(t *testing.T, tab context.Context, u string) *network.Cookie {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	defer cancel()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{u}})
	if err != nil {
		t.Fatalf("Network.getCookies: %v", err)
	}
	for _, c := range res.Cookies {
		if c.Name == auth.DefaultCookie {
			return c
		}
	}
	return nil
}

// signedOutShown is a page expression: the sign-in panel shows, the feed has stopped, nothing else is asked for,
// and the connection pill, drawn on the next frame after the state changes, says so.
const signedOutShown = `(p => p && !p.hidden && p.getClientRects().length > 0)(document.getElementById('signin')) &&
	__hub.state === 'signed-out' && __hub.session.state === 'signed-out' &&
	document.getElementById('conn-label').textContent === 'Signed out'`

// publisher publishes progress events on a topic every few milliseconds until stopped, and keeps their ids.
type publisher struct {
	stop chan struct{}
	done chan struct{}
	ids  []string
	err  error
}

func startPublishing(h *hubtest.Hub, topic, workflow string, every time.Duration) *publisher {
	p := &publisher{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for i := 0; ; i++ {
			data := fmt.Sprintf(`{"workflow":%q,"step":"step %03d","progress":%.3f,"status":"running"}`, workflow, i, float64(i%1000)/1000)
			id, err := h.Pub.Publish(context.Background(), topic, "progress", []byte(data))
			if err != nil {
				p.err = err
				return
			}
			p.ids = append(p.ids, id)
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// Stop ends the publishing and returns the ids published, in order.
func (p *publisher) Stop(t *testing.T) []string {
	t.Helper()
	close(p.stop)
	<-p.done
	if p.err != nil {
		t.Fatalf("Publish: %v", p.err)
	}
	return p.ids
}

// signedOutOnFirstAnswer checks that the console decided it was signed out on the hub's first answer: one
// /auth/session asked, no stream or topic list tried, and the panel within a second of that answer on the page's
// clock (the console's own reaction, about 70 ms on an idle machine; a retry or a timer in between would show). It
// returns the time from the document's arrival to the signed-out state (scripts, the probe, the panel), which on an
// idle machine is what "within a second" of opening the page measures: about 0.4-0.5 s here.
func signedOutOnFirstAnswer(t *testing.T, tab context.Context, asked []string) time.Duration {
	t.Helper()
	probes := 0
	for _, r := range asked {
		if strings.Contains(r, "/auth/session") {
			probes++
		}
		if strings.Contains(r, "/events") || strings.Contains(r, "/topics") {
			t.Errorf("signed out, the console asked for %s before showing it", r)
		}
	}
	if probes != 1 {
		t.Errorf("the console asked /auth/session %d times before showing signed-out (%q), want once", probes, asked)
	}
	ms := evalJS[[]float64](t, tab, `[__hub.session.stateAt,
		performance.getEntriesByType('resource').find(r => r.name.includes('/auth/session')).responseEnd,
		performance.getEntriesByType('navigation')[0].responseEnd]`)
	at := func(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
	if react := at(ms[0] - ms[1]); react > time.Second {
		t.Errorf("signed-out state shown %v after the hub's 401 arrived, want within a second", react)
	}
	return at(ms[0] - ms[2])
}

// loginPage is a company login page at its smallest: it has obtained tok for the operator, trades it for the
// session cookie with POST /auth/session, and returns to ?return= when that is a page of the same origin.
func loginPage(tok string) http.Handler {
	page := `<!doctype html><title>Company login</title><p>Signing you in…</p><script>
fetch('/auth/session', {method: 'POST', headers: {Authorization: 'Bearer ' + ` + jsString(tok) + `}}).then((res) => {
  const back = new URL(new URLSearchParams(location.search).get('return') || '/', location.href);
  if (res.ok && back.origin === location.origin) location.replace(back.href);
  else document.querySelector('p').textContent = 'sign-in failed: ' + res.status;
});
</script>`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	})
}
