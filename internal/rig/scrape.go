package rig

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
	body, err := FetchMetrics(context.Background(), nil, base, token)
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// MetricValue returns the value of name summed over its series whose labels include all of labels ("k=v" pairs):
// counters, gauges and, for histograms, the sample count. ok is false when no series matches. It reads what Scrape
// fetched over HTTP or what Gather collected from a registry: one reader of metric values for every test.
func MetricValue(fams map[string]*dto.MetricFamily, name string, labels ...string) (v float64, ok bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.Metric {
		if !hasLabels(m, labels) {
			continue
		}
		ok = true
		switch {
		case m.Counter != nil:
			v += m.Counter.GetValue()
		case m.Gauge != nil:
			v += m.Gauge.GetValue()
		case m.Histogram != nil:
			v += float64(m.Histogram.GetSampleCount())
		case m.Untyped != nil:
			v += m.Untyped.GetValue()
		}
	}
	return v, ok
}

// Gather collects g's metric families by name, for MetricValue.
func Gather(t testing.TB, g prometheus.Gatherer) map[string]*dto.MetricFamily {
	t.Helper()
	list, err := g.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	fams := make(map[string]*dto.MetricFamily, len(list))
	for _, f := range list {
		fams[f.GetName()] = f
	}
	return fams
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
	var v float64
	err := Poll(context.Background(), within, 20*time.Millisecond, "metric "+name, func() bool {
		v, _ = MetricValue(Scrape(t, base), name, labels...)
		return v >= want
	})
	if err != nil {
		t.Fatalf("metric %s%v = %v after %v, want >= %v", name, labels, v, within, want)
	}
	return v
}

// WantByLabel fails the test for every value of label whose series of name (with the more "k=v" labels too) does
// not add up to what want gives that value.
func WantByLabel(t testing.TB, fams map[string]*dto.MetricFamily, name, label string, want map[string]float64, more ...string) {
	t.Helper()
	for value, w := range want {
		labels := append([]string{label + "=" + value}, more...)
		if v, _ := MetricValue(fams, name, labels...); v != w {
			t.Errorf("%s%v = %v, want %v", name, labels, v, w)
		}
	}
}
