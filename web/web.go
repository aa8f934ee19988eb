package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	clientjs "github.com/syncverse/hub/clients/js"
)

//go:embed static
var static embed.FS

// contentTypes is explicit because mime.TypeByExtension reads the host's mime tables, which differ between the
// build machine, the container and CI; a module script served as text/plain is refused by the browser.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".json": "application/json",
	".txt":  "text/plain; charset=utf-8",
	".ts":   "text/plain; charset=utf-8", // hubclient.d.ts, for a reader; no browser runs it
}

// The console talks only to its own origin; a strict policy keeps an injected script or a hostile topic name from
// reaching anything else.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

type asset struct {
	body        []byte
	contentType string
	etag        string
}

type handler struct {
	assets map[string]asset
}

// Handler serves the embedded console: / is index.html and every other file of static/ is served by its name.
//
// File names carry no content hash, so responses say Cache-Control: no-cache with a strong ETag: a browser
// revalidates each load for the price of a 304, and a new binary is never hidden behind a stale cached app.js.
// Anything else answers a JSON 404, the same error shape as the rest of the hub.
//
// The hub's JavaScript client (clients/js, the npm package) is served under /client/: the console imports it from
// there, and so can any page of the hub's origin. It is embedded by its own package, since an embed cannot reach
// outside web/; the browser gets the same bytes the npm package ships, with no copy to drift.
func Handler() http.Handler {
	h := &handler{assets: map[string]asset{}}
	for _, src := range []struct {
		fsys        fs.FS
		root, mount string
	}{{static, "static", "/"}, {clientjs.FS, ".", "/client/"}} {
		if err := h.add(src.fsys, src.root, src.mount); err != nil {
			// The files are compiled in; failing to read them is a broken build, not a runtime condition.
			panic("web: read embedded console: " + err.Error())
		}
	}
	return h
}

// add serves every file under root of fsys at mount followed by its path below root.
func (h *handler) add(fsys fs.FS, root, mount string) error {
	return fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		ct, ok := contentTypes[path.Ext(p)]
		if !ok {
			ct = http.DetectContentType(body)
		}
		rel, _ := strings.CutPrefix(p, root+"/")
		sum := sha256.Sum256(body)
		h.assets[mount+rel] = asset{
			body:        body,
			contentType: ct,
			etag:        `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`,
		}
		return nil
	})
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	name := r.URL.Path
	if name == "/" || name == "" {
		name = "/index.html"
	}
	a, ok := h.assets[name]
	if !ok {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", a.contentType)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", a.etag)
	hd.Set("X-Content-Type-Options", "nosniff")
	if a.contentType == contentTypes[".html"] {
		hd.Set("Content-Security-Policy", contentSecurityPolicy)
		hd.Set("Referrer-Policy", "no-referrer")
	}
	// ServeContent answers If-None-Match and Range from the ETag set above; the zero time keeps it from inventing a
	// Last-Modified for files that have none.
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
