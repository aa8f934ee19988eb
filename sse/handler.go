package sse

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/syncverse/hub/hub"
)

// The defaults of Config, exported so the hub's configuration reads them instead of writing them again.
const (
	DefaultHeartbeat      = 15 * time.Second
	DefaultRetry          = 3 * time.Second
	DefaultWriteTimeout   = 10 * time.Second
	DefaultMaxTopics      = 32
	DefaultMaxCursorBytes = 8 << 10
)

// Config tunes a Handler. Zero values mean the documented defaults.
type Config struct {
	Heartbeat      time.Duration // a silent stream gets a :heartbeat comment this often (default 15s)
	Retry          time.Duration // the reconnect delay hinted to browsers, jittered ±50% per connection (default 3s)
	WriteTimeout   time.Duration // each write must finish within this, or the client is dropped (default 10s)
	MaxTopics      int           // topics per connection (default 32)
	MaxCursorBytes int           // Last-Event-ID length (default 8 KiB)
	MaxHistory     int           // history=N is capped here (default hub.DefaultMaxReplay, the hub's own replay bound)
	// NoDetach keeps every stream with net/http, one goroutine each: the raw HTTP/1.1 engine (stream_raw.go) off.
	NoDetach bool
	Logger   zerolog.Logger
	LogLimit int // stream opened/closed lines a second at info; beyond it at debug, with a count (default 50)
	Metrics  *Metrics
	// Admit, when set, is asked first about every request: an error refuses it (with 503, see Authorize for how an
	// error chooses its answer); a release it returns (nil: none) is called once, when the stream ends or the request
	// is refused after all. It holds what a stream keeps for its life, such as a connection slot: a raw stream
	// outlives the ServeHTTP call, so a middleware could not. It may set headers of the answer (CORS), never write it.
	Admit func(w http.ResponseWriter, r *http.Request) (release func(), err error)
	// Authorize, when set, decides whether r may subscribe to topics, until when (Access.Until, zero: no end; the
	// stream ends with an auth-expired event then), and who the stream is to presence (Access.Viewer; its Frames is
	// the handler's, from presence=1). An error that has a Status() int method is answered with that status, any
	// other with 403; one with a SetHeaders(http.Header) method sets the answer's headers too. Admit's and
	// Authorize's refusals are theirs to count and log: hub_sse_requests_rejected_total counts only the handler's
	// own (a bad request, a hub shutting down), so each refusal is counted once.
	Authorize func(r *http.Request, topics []string) (Access, error)
}

// Access is what Config.Authorize grants a stream.
type Access struct {
	Until  time.Time
	Viewer hub.Viewer
}

func (c Config) withDefaults() Config {
	if c.Heartbeat <= 0 {
		c.Heartbeat = DefaultHeartbeat
	}
	if c.Retry <= 0 {
		c.Retry = DefaultRetry
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.MaxTopics <= 0 {
		c.MaxTopics = DefaultMaxTopics
	}
	if c.MaxCursorBytes <= 0 {
		c.MaxCursorBytes = DefaultMaxCursorBytes
	}
	if c.MaxHistory <= 0 {
		c.MaxHistory = hub.DefaultMaxReplay
	}
	if c.Metrics == nil {
		c.Metrics = NewMetrics(nil)
	}
	if c.LogLimit <= 0 {
		c.LogLimit = 50
	}
	return c
}

// Handler serves GET /events: it admits and validates the request, subscribes to the hub and streams frames until
// the client leaves, is evicted, its permission ends, or the hub shuts down. Raw HTTP/1.1 streams outlive their
// ServeHTTP call (see rawStream): close the hub, then call Shutdown to wait for them.
type Handler struct {
	hub   *hub.Hub
	cfg   Config
	log   *streamLog
	churn atomic.Int64 // streams opened plus streams closed
	engine
}

// New returns the /events handler for h.
func New(h *hub.Hub, cfg Config) *Handler {
	cfg = cfg.withDefaults()
	return &Handler{hub: h, cfg: cfg, log: &streamLog{limit: cfg.LogLimit}, engine: newEngine()}
}

// Churn is the number of streams opened plus the number closed so far: what a burst of connects or disconnects
// moves (internal/memtrim watches it).
func (h *Handler) Churn() int64 { return h.churn.Load() }

// request is a validated /events request.
type request struct {
	topics   []string
	from     []hub.From
	startID  bool // start_id=1: an id-only frame with the stream's position once its replay is done
	presence bool // presence=1: presence frames asked for
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	release, ok := h.admit(w, r)
	if !ok {
		return
	}
	req, access, status, err := h.authorize(r)
	if err != nil {
		release()       // before the answer: a client that has it may at once count on what was released
		if req == nil { // a bad request, the handler's own refusal; Admit's and Authorize's are counted by their owner
			h.cfg.Metrics.rejected.WithLabelValues(strconv.Itoa(status)).Inc()
		}
		h.refuse(w, status, err)
		return
	}
	if r.Method == http.MethodHead { // what a GET would answer, without opening the stream
		release()
		setStreamHeaders(w.Header())
		w.WriteHeader(http.StatusOK)
		return
	}
	access.Viewer.Frames = req.presence
	sub, err := h.hub.SubscribeAs(req.topics, access.Viewer)
	if err != nil {
		release()
		h.cfg.Metrics.rejected.WithLabelValues("503").Inc()
		writeError(w, http.StatusServiceUnavailable, "the hub is shutting down; reconnect to another replica")
		return
	}
	var nc net.Conn
	if !h.cfg.NoDetach {
		// Counted before the hijack, while the HTTP server still counts the request: a shutdown that has waited for
		// the server then sees the stream here.
		h.wg.Add(1)
		if nc = hijack(w, r); nc == nil {
			h.wg.Done()
		}
	}
	info := h.opened(r, req, nc != nil)
	if nc != nil {
		h.serveRaw(r.Context(), w, nc, sub, req, access.Until, info, release)
		return
	}
	defer release()
	defer sub.Close()
	s := &stream{}
	s.init(h, newHTTPOutput(w, r, sub.Done()), sub, access.Until)
	s.startID = req.startID
	reason := s.serve(r.Context(), req.from)
	h.closed(info, reason, s.delivered)
}

// admit asks Config.Admit about r, answering it when it is refused. The release it returns is never nil.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	if h.cfg.Admit == nil {
		return func() {}, true
	}
	release, err := h.cfg.Admit(w, r)
	if err != nil {
		h.refuse(w, http.StatusServiceUnavailable, err)
		return nil, false
	}
	if release == nil {
		release = func() {}
	}
	return release, true
}

// authorize validates and authorizes a request; an error says why it must not stream, and with which status unless
// the error has its own (see refuse).
func (h *Handler) authorize(r *http.Request) (req *request, access Access, status int, err error) {
	req, status, err = h.parse(r)
	if err == nil && h.cfg.Authorize != nil {
		status = http.StatusForbidden
		access, err = h.cfg.Authorize(r, req.topics)
	}
	return req, access, status, err
}

// refuse answers a request that may not stream with err: with err's own status and headers when it has them.
func (h *Handler) refuse(w http.ResponseWriter, status int, err error) {
	var se interface{ Status() int }
	if errors.As(err, &se) {
		status = se.Status()
	}
	var sh interface{ SetHeaders(http.Header) }
	if errors.As(err, &sh) {
		sh.SetHeaders(w.Header())
	}
	writeError(w, status, err.Error())
}

// streamInfo is what the stream logs say about a stream.
type streamInfo struct {
	remote string
	topics []string
	start  time.Time
}

func (h *Handler) opened(r *http.Request, req *request, raw bool) *streamInfo {
	h.churn.Add(1)
	h.cfg.Metrics.opened.Inc()
	h.cfg.Metrics.active.Inc()
	engine := "net/http"
	if raw {
		engine = "raw"
	}
	now := time.Now()
	h.log.event(h.cfg.Logger, now).Str("remote", r.RemoteAddr).Strs("topics", req.topics).Bool("resume", resuming(req.from)).
		Str("engine", engine).Msg("stream opened")
	return &streamInfo{remote: r.RemoteAddr, topics: req.topics, start: now}
}

func (h *Handler) closed(info *streamInfo, reason CloseReason, events int64) {
	h.churn.Add(1)
	h.cfg.Metrics.active.Dec()
	h.cfg.Metrics.closed.WithLabelValues(string(reason)).Inc()
	h.log.event(h.cfg.Logger, time.Now()).Str("remote", info.remote).Strs("topics", info.topics).Str("reason", string(reason)).
		Int64("duration_ms", time.Since(info.start).Milliseconds()).Int64("events", events).Msg("stream closed")
}

func (h *Handler) parse(r *http.Request) (*request, int, error) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return nil, http.StatusMethodNotAllowed, errors.New("use GET")
	}
	q := r.URL.Query()
	topics := q["topic"]
	if len(topics) == 0 {
		return nil, http.StatusBadRequest, errors.New("missing topic: /events?topic=T[&topic=U...]")
	}
	if len(topics) > h.cfg.MaxTopics {
		return nil, http.StatusBadRequest, errors.New("too many topics: " + strconv.Itoa(len(topics)) + ", at most " + strconv.Itoa(h.cfg.MaxTopics))
	}
	seen := make(map[string]bool, len(topics))
	uniq := topics[:0:0]
	for _, t := range topics {
		if err := hub.ValidateTopic(t); err != nil {
			return nil, http.StatusBadRequest, err
		}
		if !seen[t] {
			seen[t] = true
			uniq = append(uniq, t)
		}
	}
	raw := r.Header.Get("Last-Event-ID") // EventSource resends the first URL on reconnect, so the header wins
	if raw == "" {
		raw = q.Get("last_event_id")
	}
	if len(raw) > h.cfg.MaxCursorBytes {
		return nil, http.StatusBadRequest, errors.New(ErrBadCursor.Error() + ": longer than " + strconv.Itoa(h.cfg.MaxCursorBytes) + " bytes")
	}
	from, err := ParseCursor(uniq, raw)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	if v := q.Get("history"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, http.StatusBadRequest, errors.New("history must be a whole number of events")
		}
		for i := range from {
			from[i].History = min(n, h.cfg.MaxHistory)
		}
	}
	req := &request{topics: uniq, from: from}
	switch q.Get("start_id") {
	case "", "0":
	case "1":
		req.startID = true
	default:
		return nil, http.StatusBadRequest, errors.New("start_id must be 0 or 1")
	}
	switch q.Get("presence") {
	case "", "0", "false":
	case "1", "true":
		req.presence = true
	default:
		return nil, http.StatusBadRequest, errors.New("presence must be 1 or 0")
	}
	return req, 0, nil
}

func resuming(from []hub.From) bool {
	for _, f := range from {
		if f.Set {
			return true
		}
	}
	return false
}

// writeError answers with the contract's JSON error body.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
