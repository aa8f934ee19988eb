package docs_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/lease"
)

// docMetric is one row of docs/metrics.md.
type docMetric struct {
	name, typ string
	labels    map[string][]string // label → its closed set of values; nil for an open-ended label
}

// metricsDoc reads the tables of docs/metrics.md by section: "The hub" and "The lease library".
func metricsDoc(t *testing.T) map[string][]docMetric {
	t.Helper()
	b := hubtest.ReadFile(t, "docs/metrics.md")
	out := map[string][]docMetric{}
	section := ""
	for line := range strings.SplitSeq(string(b), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = h
			continue
		}
		if !strings.HasPrefix(line, "| `") || strings.HasPrefix(section, "Renamed") {
			continue
		}
		cells := strings.Split(strings.ReplaceAll(line, `\|`, "\x00"), "|")
		if len(cells) < 5 {
			t.Fatalf("docs/metrics.md: row %q has fewer than 4 cells", line)
		}
		m := docMetric{name: strings.Trim(strings.TrimSpace(cells[1]), "`"), typ: strings.TrimSpace(cells[2]), labels: map[string][]string{}}
		for _, l := range backticked.FindAllStringSubmatch(cells[3], -1) {
			name, values, closed := strings.Cut(l[1], "=")
			m.labels[name] = nil
			if closed {
				m.labels[name] = strings.Split(values, "\x00")
			}
		}
		out[section] = append(out[section], m)
	}
	return out
}

var backticked = regexp.MustCompile("`([^`]+)`")

// rawScrape returns the body of GET url.
func rawScrape(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %s, %v", url, resp.Status, err)
	}
	return b
}

func parseScrape(t *testing.T, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("parse the scrape: %v", err)
	}
	return fams
}

// A hub that has served nothing but its readiness probe exposes what docs/metrics.md says, no more and no less,
// with every labelled counter present at each of its known values; promtool's linter has nothing to say about it.
// HUB_FRESH_SCRAPE=FILE keeps the scrape.
func TestFreshHubMetricsMatchTheDocs(t *testing.T) {
	doc := metricsDoc(t)
	h := hubtest.Start(t, rig.StartRedis(t))
	body := rawScrape(t, h.URL+"/metrics")
	if p := os.Getenv("HUB_FRESH_SCRAPE"); p != "" {
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkAgainstDoc(t, "hub", doc["The hub"], parseScrape(t, body), "hub_")
	promtoolCheckMetrics(t, body)

	// The lease library's series, as the --demo agents register them, scraped over HTTP the same way.
	reg := prometheus.NewRegistry()
	lease.NewMetrics(reg, "hub")
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	lb := rawScrape(t, srv.URL)
	checkAgainstDoc(t, "lease", doc["The lease library"], parseScrape(t, lb), "hub_lease_")
	promtoolCheckMetrics(t, lb)
}

func checkAgainstDoc(t *testing.T, what string, rows []docMetric, fams map[string]*dto.MetricFamily, prefix string) {
	t.Helper()
	if len(rows) == 0 {
		t.Fatalf("docs/metrics.md: no rows for the %s", what)
	}
	listed := map[string]bool{}
	for _, row := range rows {
		listed[row.name] = true
		f := fams[row.name]
		if f == nil {
			t.Errorf("docs/metrics.md lists %s, which a fresh %s scrape lacks", row.name, what)
			continue
		}
		if got := strings.ToLower(f.GetType().String()); got != row.typ {
			t.Errorf("%s is a %s, docs/metrics.md says %s", row.name, got, row.typ)
		}
		if len(f.Metric) == 0 {
			t.Errorf("%s has no series on a fresh %s", row.name, what)
			continue
		}
		var names []string
		for _, l := range f.Metric[0].Label {
			names = append(names, l.GetName())
		}
		var want []string
		for l := range row.labels {
			want = append(want, l)
		}
		sort.Strings(names)
		sort.Strings(want)
		if !slices.Equal(names, want) {
			t.Errorf("%s has labels %v, docs/metrics.md says %v", row.name, names, want)
		}
		for label, values := range row.labels {
			for _, v := range values {
				if _, ok := rig.MetricValue(fams, row.name, label+"="+v); !ok {
					t.Errorf("%s{%s=%q} is missing from a fresh %s scrape; every known value must be a series from the start", row.name, label, v, what)
				}
			}
		}
	}
	for name := range fams {
		if strings.HasPrefix(name, prefix) && !listed[name] {
			t.Errorf("a fresh %s exposes %s, which docs/metrics.md does not list", what, name)
		}
	}
}

// promtoolCheckMetrics runs Prometheus' own linter over a scrape. Without promtool the check is skipped, except in
// CI, which installs it (.ci/run).
func promtoolCheckMetrics(t *testing.T, scrape []byte) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool not found; CI installs Debian's prometheus package for it")
		}
		t.Log("promtool not found: the metrics lint is skipped")
		return
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = bytes.NewReader(scrape)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
