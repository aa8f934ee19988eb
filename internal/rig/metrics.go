package rig

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// FetchMetrics GETs base+/metrics through client (http.DefaultClient when nil), with token as a bearer when not
// empty, and returns the body of a 200 answer.
func FetchMetrics(ctx context.Context, client *http.Client, base, token string) ([]byte, error) {
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// Series reads a Prometheus text exposition into its samples, keyed by the series as printed (name{labels}).
func Series(body []byte) map[string]float64 {
	out := make(map[string]float64, 256)
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

// Metrics is FetchMetrics read by Series.
func Metrics(ctx context.Context, client *http.Client, base, token string) (map[string]float64, error) {
	body, err := FetchMetrics(ctx, client, base, token)
	if err != nil {
		return nil, err
	}
	return Series(body), nil
}
