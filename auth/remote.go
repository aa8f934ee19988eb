package auth

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for a key set fetched from auth.jwks_url.
const (
	DefaultJWKSRefresh = 5 * time.Minute  // how often the set is fetched again when its answer names no max-age
	DefaultJWKSRefetch = 30 * time.Second // the least time between two fetches caused by an unknown kid
	jwksFetchTimeout   = 10 * time.Second
	jwksMaxBytes       = 1 << 20
	jwksMinWait        = time.Second // the shortest wait a max-age can ask for
	jwksMaxBackoff     = time.Minute // the longest wait between attempts while the URL fails
)

// Outcomes of a key set fetch, as OnRefresh reports them.
const (
	RefreshOK      = "ok"      // a valid set was fetched and is now in force
	RefreshError   = "error"   // the URL could not be reached or did not answer 200
	RefreshInvalid = "invalid" // it answered 200 with something that is not a usable key set
)

// RefreshOutcomes lists every outcome, so a metric can show each at zero.
var RefreshOutcomes = []string{RefreshOK, RefreshError, RefreshInvalid}

// noKeysError marks a token refused because the identity provider's keys have never been fetched.
type noKeysError struct{ msg string }

func (e *noKeysError) Error() string { return e.msg }

// remoteKeys is the key set an identity provider publishes at auth.jwks_url. The last good set stays in force
// while the URL fails: an IdP that is down for a minute must not lock every client out of the hub.
type remoteKeys struct {
	url       string
	client    *http.Client
	refresh   time.Duration
	refetch   time.Duration
	now       func() time.Time
	onRefresh func(outcome string)
	onProblem func(err error)

	set     atomic.Pointer[keySet] // nil until the first good fetch
	fetchMu sync.Mutex             // one fetch at a time; a caller that waits on it then sees its result

	mu        sync.Mutex
	lastByKid time.Time // when an unknown kid last caused a fetch
}

type keySet struct {
	keys     []key
	unusable int // signing keys of the set that were left out
	fetched  time.Time
	maxAge   time.Duration // from Cache-Control; 0 when the answer gave none
}

func newRemoteKeys(cfg Config) (*remoteKeys, error) {
	if err := checkJWKSURL(cfg.JWKSURL); err != nil {
		return nil, err
	}
	r := &remoteKeys{url: cfg.JWKSURL, client: cfg.HTTPClient, refresh: cfg.JWKSRefresh, refetch: cfg.JWKSRefetch,
		now: cfg.Now, onRefresh: cfg.OnRefresh, onProblem: cfg.OnProblem}
	if r.client == nil {
		r.client = &http.Client{Timeout: jwksFetchTimeout}
	}
	r.client = checkingRedirects(r.client)
	if r.refresh <= 0 {
		r.refresh = DefaultJWKSRefresh
	}
	if r.refetch <= 0 {
		r.refetch = DefaultJWKSRefetch
	}
	if r.onRefresh == nil {
		r.onRefresh = func(string) {}
	}
	if r.onProblem == nil {
		r.onProblem = func(error) {}
	}
	return r, nil
}

// checkJWKSURL allows https, and plain http only to a loopback address: keys fetched in the clear from elsewhere
// could be swapped by anyone on the path, and with them every grant.
func checkJWKSURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("auth.jwks_url %q: want an https:// URL", clip(raw))
	}
	if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		return fmt.Errorf("auth.jwks_url %q: plain http is allowed only to a loopback address; use https", clip(raw))
	}
	return nil
}

// jwksMaxRedirects is how many redirects a key set fetch follows.
const jwksMaxRedirects = 5

// checkingRedirects returns a copy of c that holds every redirect of a key set fetch to checkJWKSURL's rule: a
// loopback URL that redirects to plain http elsewhere would otherwise hand the hub keys anyone on the path can swap.
func checkingRedirects(c *http.Client) *http.Client {
	cc := *c
	next := c.CheckRedirect
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= jwksMaxRedirects {
			return fmt.Errorf("stopped after %d redirects", jwksMaxRedirects)
		}
		if err := checkJWKSURL(req.URL.String()); err != nil {
			return fmt.Errorf("redirect refused: %w", err)
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return &cc
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// keys returns the set in force, or nil before the first good fetch.
func (r *remoteKeys) keys() []key {
	if s := r.set.Load(); s != nil {
		return s.keys
	}
	return nil
}

// Fetched is when the set in force was fetched; zero before the first good fetch.
func (r *remoteKeys) fetched() time.Time {
	if s := r.set.Load(); s != nil {
		return s.fetched
	}
	return time.Time{}
}

// run fetches the set at once, then again every refresh (or sooner, when the IdP's max-age says so), and more
// often while the URL fails, until ctx ends.
func (r *remoteKeys) run(ctx context.Context) {
	backoff := jwksMinWait
	for {
		wait := r.refresh
		if err := r.fetch(ctx); err != nil {
			wait, backoff = min(backoff, r.refresh), min(2*backoff, jwksMaxBackoff)
		} else {
			backoff = jwksMinWait
			if s := r.set.Load(); s.maxAge > 0 && s.maxAge < wait {
				wait = max(s.maxAge, jwksMinWait)
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// refetchForKid fetches the set again because a token names a kid it lacks, unless that happened less than
// refetch ago: a stream of tokens with made-up kids must not turn the hub into a load generator against the IdP.
// Either way it returns once any fetch under way has ended, so the caller looks at the newest set.
func (r *remoteKeys) refetchForKid() {
	r.mu.Lock()
	allowed := r.lastByKid.IsZero() || r.now().Sub(r.lastByKid) >= r.refetch
	if allowed {
		r.lastByKid = r.now()
	}
	r.mu.Unlock()
	if !allowed {
		r.fetchMu.Lock() // wait for a fetch under way, if any
		r.fetchMu.Unlock()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), jwksFetchTimeout)
	defer cancel()
	_ = r.fetch(ctx)
}

// fetch gets the set and, when it is good, puts it in force. A failure leaves the set in force as it was.
func (r *remoteKeys) fetch(ctx context.Context) error {
	r.fetchMu.Lock()
	defer r.fetchMu.Unlock()
	outcome, err := r.get(ctx)
	r.onRefresh(outcome)
	if err != nil {
		r.onProblem(err)
	}
	return err
}

func (r *remoteKeys) get(ctx context.Context) (outcome string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return RefreshError, fmt.Errorf("auth.jwks_url: %w", err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return RefreshError, fmt.Errorf("auth.jwks_url: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return RefreshError, fmt.Errorf("auth.jwks_url %s answered %s", r.url, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, jwksMaxBytes+1))
	if err != nil {
		return RefreshError, fmt.Errorf("auth.jwks_url %s: %w", r.url, err)
	}
	if len(data) > jwksMaxBytes {
		return RefreshInvalid, fmt.Errorf("auth.jwks_url %s: key set larger than %d bytes", r.url, jwksMaxBytes)
	}
	keys, unusable, err := parseJWKS(data, "auth.jwks_url "+r.url)
	for _, u := range unusable {
		r.onProblem(u)
	}
	if err != nil {
		return RefreshInvalid, err
	}
	r.set.Store(&keySet{keys: keys, unusable: len(unusable), fetched: r.now(), maxAge: maxAge(resp.Header.Values("Cache-Control"))})
	return RefreshOK, nil
}

// maxAge reads Cache-Control's max-age; 0 when there is none or it cannot be read.
func maxAge(values []string) time.Duration {
	for _, v := range values {
		for _, d := range strings.Split(v, ",") {
			name, val, ok := strings.Cut(strings.TrimSpace(d), "=")
			if !ok || !strings.EqualFold(name, "max-age") {
				continue
			}
			if n, err := strconv.Atoi(strings.Trim(val, `"`)); err == nil && n > 0 {
				const year = 365 * 24 * 3600 // a longer one means "keep it": no overflow into a negative wait
				return time.Duration(min(n, year)) * time.Second
			}
		}
	}
	return 0
}

// unusable is how many signing keys of the set in force were left out.
func (r *remoteKeys) unusable() int {
	if s := r.set.Load(); s != nil {
		return s.unusable
	}
	return 0
}

// noKeys is the refusal for a token that only the IdP's keys could verify, while none has been fetched. It is
// answered to whoever sent the token, so it names neither the URL nor why fetching failed: OnProblem and the
// hub's log have that, hub_auth_jwks_refreshes_total counts the failures.
func (r *remoteKeys) noKeys() error {
	return &noKeysError{"the identity provider's signing keys are not available yet, so no token it issued can be verified; try again shortly"}
}
