package testutil

import (
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape fetches /metrics over HTTP and parses the text format.
func Scrape(t testing.TB, base string) map[string]*dto.MetricFamily {
	t.Helper()
	return ScrapeWith(t, base, "")
}

// ScrapeWith is Scrape for a hub whose /metrics needs a token (none when token is empty).
func ScrapeWith(t testing.TB, base, token string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// MetricValue returns the value of the series of name whose labels include all of labels ("k=v" pairs); counters,
// gauges and, for histograms, the sample count. ok is false when there is no such series.
func MetricValue(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.Metric {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

func hasLabels(m *dto.Metric, labels []string) bool {
	for _, kv := range labels {
		k, v, _ := strings.Cut(kv, "=")
		found := false
		for _, lp := range m.Label {
			if lp.GetName() == k && lp.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// WaitMetric polls /metrics until the series reaches at least want, and returns its last value.
func WaitMetric(t testing.TB, base string, want float64, within time.Duration, name string, labels ...string) float64 {
	t.Helper()
	deadline := time.Now().Add(within)
	var v float64
	for {
		v, _ = MetricValue(Scrape(t, base), name, labels...)
		if v >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if v < want {
		t.Fatalf("metric %s%v = %v after %v, want >= %v", name, labels, v, within, want)
	}
	return v
}
