package server

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/internal/config"
)

const openAPIFile = "../../docs/openapi.yaml"

// apiDoc is docs/openapi.yaml loaded, checked, and routed.
type apiDoc struct {
	doc    *openapi3.T
	router routers.Router
}

func loadAPIDoc(t *testing.T) *apiDoc {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile(openAPIFile)
	if err != nil {
		t.Fatalf("load %s: %v", openAPIFile, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("%s is not a valid OpenAPI document: %v", openAPIFile, err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("%s is OpenAPI %s, want 3.1", openAPIFile, doc.OpenAPI)
	}
	doc.Servers = nil // the document names the default listen address; the tests serve on a free port
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("route %s: %v", openAPIFile, err)
	}
	return &apiDoc{doc: doc, router: router}
}

// exchange is one request sent to a hub and the response that came back, body read (a stream's only opened).
type exchange struct {
	req    *http.Request
	body   []byte // the request's
	status int
	header http.Header
	resp   []byte
}

// send makes the request of c to base. A stream is closed as soon as its headers are in.
func send(t *testing.T, base string, c call) exchange {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := c.request(t, ctx, base)
	if req.Method == http.MethodPost && strings.HasPrefix(c.body, "{") && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %s %s: %v", c.name, req.Method, c.path, err)
	}
	defer resp.Body.Close()
	ex := exchange{req: req, body: []byte(c.body), status: resp.StatusCode, header: resp.Header}
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		ex.resp, _ = io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	}
	return ex
}

// validate checks ex against the document: the route and operation exist, the status is documented, and the
// headers and body match what it says for that status. It returns the operation's id.
func (d *apiDoc) validate(ex exchange) (string, error) {
	req := ex.req.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(ex.body))
	route, params, err := d.router.FindRoute(req)
	if err != nil {
		return "", err
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	if ex.status < 300 && req.Method != http.MethodHead {
		// What the hub accepted, the document must accept too.
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			return route.Operation.OperationID, err
		}
		req.Body = io.NopCloser(bytes.NewReader(ex.body))
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: ex.status, Header: ex.header, Options: opts}
	out.SetBodyBytes(ex.resp)
	if req.Method == http.MethodHead { // ValidateResponse passes every HEAD: check what a HEAD can show
		return route.Operation.OperationID, d.validateHead(route, ex)
	}
	return route.Operation.OperationID, openapi3filter.ValidateResponse(context.Background(), out)
}

// validateHead checks a HEAD answer: a documented status, no body, and the documented required headers.
func (d *apiDoc) validateHead(route *routers.Route, ex exchange) error {
	r := route.Operation.Responses.Status(ex.status)
	if r == nil {
		return &openapi3filter.ResponseError{Reason: "status " + http.StatusText(ex.status) + " is not documented for HEAD"}
	}
	if len(ex.resp) != 0 {
		return &openapi3filter.ResponseError{Reason: "HEAD answered a body"}
	}
	for name, h := range r.Value.Headers {
		if h.Value.Required && ex.header.Get(name) == "" {
			return &openapi3filter.ResponseError{Reason: "HEAD answer lacks required header " + name}
		}
	}
	return nil
}

// operations is every (method, path) the document describes, with its operation id.
func (d *apiDoc) operations() map[string]string {
	ops := map[string]string{}
	for path, item := range d.doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops[method+" "+path] = op.OperationID
		}
	}
	return ops
}

// servedRoutes lists what the edge serves, as the document writes paths: echo's routes (":topic" is "{topic}", the
// console's "/*" is "/" and "/{file}") and /events, which routes() sends to the sse handler ahead of echo.
func servedRoutes(t *testing.T) []string {
	t.Helper()
	fs := flag.NewFlagSet("routes", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg, err := config.Load(fs, nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	sec, err := NewSecurity(cfg, reg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	e := echoRoutes(&api{cfg: cfg, sec: sec, reg: reg, obs: newObserver(reg, zerolog.Nop(), false)})
	served := []string{"GET /events", "HEAD /events"}
	for _, r := range e.Routes() {
		p := strings.ReplaceAll(r.Path, ":topic", "{topic}")
		if p == "/*" {
			served = append(served, r.Method+" /", r.Method+" /{file}")
			continue
		}
		served = append(served, r.Method+" "+p)
	}
	slices.Sort(served)
	return slices.Compact(served)
}
