package deploy_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
)

// The alert rules and the dashboard use only metrics a fresh hub already exposes: a renamed metric would otherwise
// leave an alert that never fires and a panel that stays empty, and a series that only appears with its first event
// would leave "No data" where a 0 belongs. Every alert waits (for:) and links to its runbook section.
func TestAlertsAndDashboardUseExistingMetrics(t *testing.T) {
	h := hubtest.Start(t, rig.StartRedis(t))
	exposed := map[string]bool{}
	for name := range rig.Scrape(t, h.URL) {
		exposed[name] = true
	}

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
	runbook, err := os.ReadFile("docs/runbook.md")
	if err != nil {
		t.Fatal(err)
	}
	var exprs []string
	alerts := map[string]bool{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			alerts[r.Alert] = true
			if r.Alert == "" || r.Expr == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("alert %q: want alert, expr, labels.severity and annotations.summary", r.Alert)
			}
			if d, err := model.ParseDuration(r.For); err != nil || d == 0 {
				t.Errorf("alert %s: for %q (%v); want a duration, so one bad scrape does not page", r.Alert, r.For, err)
			}
			const base = "https://github.com/syncverse/hub/blob/main/docs/runbook.md#"
			anchor, ok := strings.CutPrefix(r.Annotations["runbook_url"], base)
			if !ok || anchor != strings.ToLower(r.Alert) || !strings.Contains(string(runbook), "\n## "+r.Alert+"\n") {
				t.Errorf("alert %s: runbook_url %q; want %s%s and a section \"## %s\" in docs/runbook.md",
					r.Alert, r.Annotations["runbook_url"], base, strings.ToLower(r.Alert), r.Alert)
			}
			exprs = append(exprs, r.Expr)
		}
	}
	for _, want := range []string{"HubDown", "HubAbsent", "HubNotReady", "HubPublishFailing", "HubConnectionsNearLimit",
		"HubFileDescriptorsNearLimit", "HubEvictionsRising", "HubGapRepairsRising", "HubQueueOverflow", "HubDeliveryLatencyHigh"} {
		if !alerts[want] {
			t.Errorf("deploy/prometheus-alerts.yml has no alert %s", want)
		}
	}
	checkMetricNames(t, "deploy/prometheus-alerts.yml", exprs, exposed)
	promtool(t, "check", "rules", "deploy/prometheus-alerts.yml")
	promtool(t, "test", "rules", "deploy/prometheus-alerts.test.yml")

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
	checkPanelUnits(t, dash)
}

// checkPanelUnits fails a panel that plots seconds and something else on one axis (events and seconds, as the replay
// panel once did).
func checkPanelUnits(t *testing.T, dash any) {
	t.Helper()
	panels, _ := dash.(map[string]any)["panels"].([]any)
	for _, p := range panels {
		panel, _ := p.(map[string]any)
		var seconds, other []string
		collectStrings(panel["targets"], func(key, v string) {
			if key != "expr" {
				return
			}
			for _, name := range metricName.FindAllString(v, -1) {
				if strings.Contains(name, "_seconds") {
					seconds = append(seconds, name)
				} else {
					other = append(other, name)
				}
			}
		})
		if len(seconds) > 0 && len(other) > 0 {
			t.Errorf("dashboard panel %q plots %v and %v on one axis", panel["title"], seconds, other)
		}
	}
}

// promtool runs Prometheus' promtool with args. Without it the check is skipped, except in CI, which installs it.
func promtool(t *testing.T, args ...string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool not found; CI installs Debian's prometheus package for it")
		}
		t.Logf("promtool not found: promtool %s skipped", strings.Join(args, " "))
		return
	}
	if out, err := exec.Command(path, args...).CombinedOutput(); err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
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
