package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/syncverse/hub/internal/redistest"
	"github.com/syncverse/hub/internal/ssetest"
	"github.com/syncverse/hub/internal/testutil"
	"github.com/syncverse/hub/pubsub"
)

// The alert rules and the dashboard use only metrics a running hub exposes: a renamed metric would otherwise leave
// an alert that never fires and a panel that stays empty.
func TestAlertsAndDashboardUseExistingMetrics(t *testing.T) {
	exposed := busyHubMetrics(t)

	b, err := os.ReadFile("deploy/prometheus-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Name  string
			Rules []struct {
				Alert, Expr, For string
				Labels           map[string]string
				Annotations      map[string]string
			}
		}
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&rules); err != nil {
		t.Fatalf("deploy/prometheus-alerts.yml: %v", err)
	}
	var exprs []string
	alerts := map[string]bool{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			alerts[r.Alert] = true
			if r.Alert == "" || r.Expr == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("alert %q: want alert, expr, labels.severity and annotations.summary", r.Alert)
			}
			if r.For != "" {
				if _, err := model.ParseDuration(r.For); err != nil {
					t.Errorf("alert %s: for %q: %v", r.Alert, r.For, err)
				}
			}
			exprs = append(exprs, r.Expr)
		}
	}
	for _, want := range []string{"HubNotReady", "HubEvictionsRising", "HubGapRepairsRising", "HubDeliveryLatencyHigh"} {
		if !alerts[want] {
			t.Errorf("deploy/prometheus-alerts.yml has no alert %s", want)
		}
	}
	checkMetricNames(t, "deploy/prometheus-alerts.yml", exprs, exposed)

	b, err = os.ReadFile("deploy/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash any
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("deploy/grafana-dashboard.json: %v", err)
	}
	exprs = nil
	collectStrings(dash, func(key, v string) {
		if key == "expr" || key == "definition" {
			exprs = append(exprs, v)
		}
	})
	if len(exprs) < 10 {
		t.Errorf("deploy/grafana-dashboard.json has %d queries, want a panel per concern", len(exprs))
	}
	checkMetricNames(t, "deploy/grafana-dashboard.json", exprs, exposed)
}

var metricName = regexp.MustCompile(`\b(?:hub|go|process)_[a-z0-9_]+\b`)

// checkMetricNames fails for every metric a query names that the scrape lacks; a histogram is named by its
// _bucket, _sum or _count series.
func checkMetricNames(t *testing.T, file string, exprs []string, exposed map[string]bool) {
	t.Helper()
	for _, e := range exprs {
		for _, name := range metricName.FindAllString(e, -1) {
			base := name
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if b, ok := strings.CutSuffix(name, suffix); ok && exposed[b] {
					base = b
				}
			}
			if !exposed[base] {
				t.Errorf("%s: %q uses %s, which a running hub does not expose", file, e, name)
			}
		}
	}
}

func collectStrings(v any, fn func(key, v string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if s, ok := c.(string); ok {
				fn(k, s)
			} else {
				collectStrings(c, fn)
			}
		}
	case []any:
		for _, c := range x {
			collectStrings(c, fn)
		}
	}
}

// busyHubMetrics runs a hub, makes every labelled counter show a series (a stream, a publish over HTTP, an invalid
// live message, a rejected request) and returns the metric families of a scrape.
func busyHubMetrics(t *testing.T) map[string]bool {
	t.Helper()
	rs := redistest.Start(t)
	h := startHub(t, rs)
	s := ssetest.Open(t, h.URL, ssetest.TopicQuery("mon"), "0-0")
	resp, err := http.Post(h.URL+"/publish", "application/json", strings.NewReader(`{"topic":"mon","data":{"workflow":"w"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s.NextEvent(5 * time.Second)
	if err := h.RDB.Publish(context.Background(), pubsub.Keys{Prefix: h.Prefix}.Channel("mon"), "not json").Err(); err != nil {
		t.Fatal(err)
	}
	if r := ssetest.Open(t, h.URL, ssetest.TopicQuery("bad topic!"), ""); r.Status != http.StatusBadRequest {
		t.Fatalf("GET /events?topic=bad topic! = %d, want 400", r.Status)
	}
	testutil.WaitMetric(t, h.URL, 1, 5*time.Second, "hub_events_dropped_total", "reason=invalid_json")
	exposed := map[string]bool{}
	for name := range testutil.Scrape(t, h.URL) {
		exposed[name] = true
	}
	return exposed
}
