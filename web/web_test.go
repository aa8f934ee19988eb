package web_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/syncverse/hub/web"
)

func TestHandlerServesAssets(t *testing.T) {
	srv := httptest.NewServer(web.Handler())
	defer srv.Close()
	tests := []struct {
		path, contentType, contains string
	}{
		{"/", "text/html; charset=utf-8", `<script type="module" src="app.js">`},
		{"/index.html", "text/html; charset=utf-8", "<title>"},
		{"/app.js", "text/javascript; charset=utf-8", "import"},
		{"/feed.js", "text/javascript; charset=utf-8", "HubClient"},
		{"/client/hubclient.js", "text/javascript; charset=utf-8", "EventSource"},
		{"/client/ids.js", "text/javascript; charset=utf-8", "export function cmpId"},
		{"/style.css", "text/css; charset=utf-8", ":root"},
		{"/favicon.svg", "image/svg+xml", "<svg"},
	}
	for _, tt := range tests {
		res, err := http.Get(srv.URL + tt.path)
		if err != nil {
			t.Fatalf("GET %s: %v", tt.path, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d, want 200", tt.path, res.StatusCode)
		}
		if got := res.Header.Get("Content-Type"); got != tt.contentType {
			t.Errorf("GET %s Content-Type = %q, want %q", tt.path, got, tt.contentType)
		}
		if got := res.Header.Get("Cache-Control"); got != "no-cache" {
			t.Errorf("GET %s Cache-Control = %q, want no-cache", tt.path, got)
		}
		if res.Header.Get("ETag") == "" {
			t.Errorf("GET %s has no ETag", tt.path)
		}
		if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s X-Content-Type-Options = %q, want nosniff", tt.path, got)
		}
		if !strings.Contains(string(body), tt.contains) {
			t.Errorf("GET %s body does not contain %q", tt.path, tt.contains)
		}
	}
}

func TestHandlerIndexHasPolicy(t *testing.T) {
	rec := httptest.NewRecorder()
	web.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	csp := rec.Header().Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self'", "connect-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("GET / Content-Security-Policy = %q, want it to contain %q", csp, want)
		}
	}
}

func TestHandlerRevalidates(t *testing.T) {
	h := web.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/app.js", nil))
	etag := rec.Header().Get("ETag")
	req := httptest.NewRequest(http.MethodGet, "/app.js", nil)
	req.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified {
		t.Errorf("GET /app.js with If-None-Match %s = %d, want 304", etag, rec.Code)
	}
}

func TestHandlerHead(t *testing.T) {
	rec := httptest.NewRecorder()
	web.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/style.css", nil))
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Errorf("HEAD /style.css = %d with %d body bytes, want 200 and none", rec.Code, rec.Body.Len())
	}
}

func TestHandlerErrors(t *testing.T) {
	tests := []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/missing.js", http.StatusNotFound},
		{http.MethodGet, "/static/app.js", http.StatusNotFound},
		{http.MethodGet, "/../go.mod", http.StatusNotFound},
		{http.MethodPost, "/", http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(tt.method, "/", nil)
		req.URL.Path = tt.path
		web.Handler().ServeHTTP(rec, req)
		if rec.Code != tt.status {
			t.Errorf("%s %s = %d, want %d", tt.method, tt.path, rec.Code, tt.status)
		}
		var body struct{ Error string }
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error == "" {
			t.Errorf("%s %s body = %q, want a JSON error", tt.method, tt.path, rec.Body.String())
		}
		if got := rec.Header().Get("Content-Type"); got != "application/json" {
			t.Errorf("%s %s Content-Type = %q, want application/json", tt.method, tt.path, got)
		}
	}
}

// The console loads the npm package's own files from /client/: what the browser gets is byte for byte what
// clients/js ships.
func TestHandlerServesTheClientPackage(t *testing.T) {
	h := web.Handler()
	for _, name := range []string{"hubclient.js", "ids.js", "request.js", "hubclient.d.ts"} {
		want, err := os.ReadFile("../clients/js/" + name)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/client/"+name, nil))
		if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), want) {
			t.Errorf("GET /client/%s = %d with %d bytes, want 200 and the %d bytes of clients/js/%s", name, rec.Code,
				rec.Body.Len(), len(want), name)
		}
	}
}

var importRE = regexp.MustCompile(`(?m)^(?:import|export)\s[^'"]*?from\s+'([^']+)'`)

// Every relative import of every served module resolves to a served module, so the page's module graph loads
// (the browser would refuse the whole page for one missing file).
func TestHandlerModuleGraphResolves(t *testing.T) {
	h := web.Handler()
	seen := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, name, nil))
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s = %d, want 200 (imported by the console)", name, rec.Code)
			return
		}
		for _, m := range importRE.FindAllStringSubmatch(rec.Body.String(), -1) {
			if !strings.HasPrefix(m[1], "./") && !strings.HasPrefix(m[1], "../") {
				t.Errorf("%s imports %q: a bare specifier that no browser resolves without a build step", name, m[1])
				continue
			}
			visit(path.Join(path.Dir(name), m[1]))
		}
	}
	visit("/app.js")
	for _, want := range []string{"/feed.js", "/client/hubclient.js", "/client/ids.js", "/client/request.js"} {
		if !seen[want] {
			t.Errorf("the console's module graph %v does not reach %s", seen, want)
		}
	}
}
