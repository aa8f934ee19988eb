package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/internal/tracing/tracingtest"
	"github.com/syncverse/hub/pubsub"
)

const (
	publisherTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	publisherSpan  = "00f067aa0ba902b7"
	traceparent    = "00-" + publisherTrace + "-" + publisherSpan + "-01"
)

// waitLive returns once the stream c receives topic's events as the subscriber broadcasts them (a stream opened
// without a position starts where the hub's live feed of the topic does): it publishes probes, untraced, until one
// arrives.
func waitLive(t *testing.T, e *edge, c *rig.Stream, topic string) {
	t.Helper()
	rig.Eventually(t, 20*time.Second, "a probe event on the stream", func() bool {
		e.publish(t, topic, "", `{"probe":true}`)
		for {
			select {
			case f := <-c.Frames():
				if f.Event == "progress" {
					return true
				}
			case <-time.After(500 * time.Millisecond):
				return false
			}
		}
	})
}

// flush exports what the edge's tracer holds, as the hub's shutdown does.
func flush(t *testing.T, e *edge) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Tracing.Shutdown(ctx); err != nil {
		t.Fatalf("tracing shutdown: %v", err)
	}
}

// With tracing on, a publish with a traceparent makes three spans of the publisher's trace, exported over OTLP/HTTP
// to a real receiver: POST /publish (a child of the publisher's span), the publish script's Redis round trip (a child
// of that), and the fan-out of the event to the streams (a child of the publisher's span, which the event carries).
// The event is stored and delivered with the publisher's traceparent.
func TestTracingSpansOfAPublish(t *testing.T) {
	rs := rig.StartRedis(t) // a real redis-server
	recv := tracingtest.Start(t)
	e := newEdge(t, rs, "HUB_TRACING_ENABLED=true", "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL, "OTEL_SERVICE_NAME=hub-under-test")
	if !e.Tracing.Enabled() {
		t.Fatal("HUB_TRACING_ENABLED=true: tracing is off")
	}
	c := rig.OpenStream(t, e.URL, rig.TopicQuery("traced"), "")
	defer c.Close()
	waitLive(t, e, c, "traced")
	status, id, _, msg := postPublish(t, e.URL, `{"topic":"traced","data":{"n":1}}`, http.Header{"Traceparent": {traceparent},
		"Tracestate": {"vendor=abc"}})
	if status != http.StatusAccepted {
		t.Fatalf("POST /publish with a traceparent = %d %q, want 202", status, msg)
	}
	if f := c.NextEvent(10 * time.Second); f.ID != id {
		t.Fatalf("stream delivered %+v, want event %s", f, id)
	}
	entries, err := e.RDB.XRange(context.Background(), e.StreamKey("traced"), id, id).Result()
	if err != nil || len(entries) != 1 || entries[0].Values["tp"] != traceparent {
		t.Errorf("stored entry %v (%v), want tp %s", entries, err, traceparent)
	}
	flush(t, e)

	pub := one(t, recv, SpanPublish)
	script := one(t, recv, pubsub.SpanPublishScript)
	fan := one(t, recv, pubsub.SpanFanOut)
	for _, s := range []tracingtest.Span{pub, script, fan} {
		if s.Service != "hub-under-test" {
			t.Errorf("span %q has service.name %q, want OTEL_SERVICE_NAME's", s.Name, s.Service)
		}
	}
	if pub.ParentSpanID != publisherSpan || fan.ParentSpanID != publisherSpan {
		t.Errorf("publish span's parent %s, fan-out's %s; want the publisher's span %s", pub.ParentSpanID, fan.ParentSpanID, publisherSpan)
	}
	if script.ParentSpanID != pub.SpanID {
		t.Errorf("script span's parent %s, want the publish span %s", script.ParentSpanID, pub.SpanID)
	}
	if pub.Attrs["hub.topic"] != "traced" || fan.Attrs["hub.event_id"] != id {
		t.Errorf("attributes: publish %v, fan-out %v", pub.Attrs, fan.Attrs)
	}
	if _, bad := recv.Requests(); len(bad) > 0 {
		t.Errorf("requests that were not OTLP exports: %v", bad)
	}
}

// one returns the one span called name of the publisher's trace (the probes' spans are of traces of their own).
func one(t *testing.T, recv *tracingtest.Receiver, name string) tracingtest.Span {
	t.Helper()
	var got []tracingtest.Span
	for _, s := range recv.Named(name) {
		if s.TraceID == publisherTrace {
			got = append(got, s)
		}
	}
	if len(got) != 1 {
		t.Fatalf("received %d spans named %q of trace %s, want 1 (all: %+v)", len(got), name, publisherTrace, recv.Spans())
	}
	return got[0]
}

// An invalid traceparent header never fails a publish: 202, a Warning header and a logged warning, and the event
// is stored without one. With tracing on, the hub's publish span then starts a trace of its own, and the event carries
// that one instead.
func TestPublishIgnoresAnInvalidTraceparent(t *testing.T) {
	rs := rig.StartRedis(t) // a real redis-server
	recv := tracingtest.Start(t)
	bad := []string{"00-" + strings.ToUpper(publisherTrace) + "-" + publisherSpan + "-01", "garbage", traceparent + "-x",
		"00-00000000000000000000000000000000-" + publisherSpan + "-01"}
	for _, on := range []bool{false, true} {
		e := newEdge(t, rs, fmt.Sprintf("HUB_TRACING_ENABLED=%v", on), "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL)
		for _, tp := range bad {
			req, _ := http.NewRequest(http.MethodPost, e.URL+"/publish", strings.NewReader(`{"topic":"t","data":{"n":1}}`))
			req.Header.Set("traceparent", tp)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted || !strings.Contains(resp.Header.Get("Warning"), "invalid traceparent") {
				t.Errorf("traceparent %q: %d, Warning %q; want 202 and a warning", tp, resp.StatusCode, resp.Header.Get("Warning"))
			}
		}
		if n := strings.Count(e.logs.String(), "invalid traceparent header ignored"); n != len(bad) {
			t.Errorf("%d warnings logged, want %d: %s", n, len(bad), e.logs.String())
		}
		entries, err := e.RDB.XRange(context.Background(), e.StreamKey("t"), "-", "+").Result()
		if err != nil || len(entries) != len(bad) {
			t.Fatalf("stream holds %d entries (%v), want %d", len(entries), err, len(bad))
		}
		flush(t, e)
		spans := recv.Named(SpanPublish)
		if !on {
			for _, en := range entries {
				if _, ok := en.Values["tp"]; ok {
					t.Errorf("tracing off: entry %s stored a traceparent: %v", en.ID, en.Values)
				}
			}
			if len(spans) != 0 {
				t.Errorf("tracing off: %d publish spans exported", len(spans))
			}
			continue
		}
		if len(spans) != len(bad) {
			t.Fatalf("%d publish spans, want %d", len(spans), len(bad))
		}
		for i, s := range spans {
			want := "00-" + s.TraceID + "-" + s.SpanID + "-01"
			if s.ParentSpanID != "" || entries[i].Values["tp"] != want {
				t.Errorf("publish %d: span parent %q, stored tp %v; want a root span and the event carrying %s", i, s.ParentSpanID, entries[i].Values["tp"], want)
			}
		}
	}
}

// Tracing off (the default) exports nothing, though the traceparent is still stored and delivered.
func TestTracingOffExportsNothing(t *testing.T) {
	rs := rig.StartRedis(t) // a real redis-server
	recv := tracingtest.Start(t)
	for _, env := range [][]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL},
		{"HUB_TRACING_ENABLED=true", "OTEL_SDK_DISABLED=true", "OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL},
	} {
		e := newEdge(t, rs, env...)
		if e.Tracing.Enabled() {
			t.Fatalf("%v: tracing is on", env)
		}
		c := rig.OpenStream(t, e.URL, rig.TopicQuery("quiet"), "quiet=0-0")
		status, id, _, msg := postPublish(t, e.URL, `{"topic":"quiet","data":{"n":1}}`, http.Header{"Traceparent": {traceparent}})
		if status != http.StatusAccepted {
			t.Fatalf("%v: POST /publish = %d %q", env, status, msg)
		}
		if f := c.NextEvent(10 * time.Second); f.ID != id {
			t.Fatalf("%v: stream delivered %+v, want %s", env, f, id)
		}
		c.Close()
		entries, err := e.RDB.XRange(context.Background(), e.StreamKey("quiet"), id, id).Result()
		if err != nil || len(entries) != 1 || entries[0].Values["tp"] != traceparent {
			t.Errorf("%v: stored %v (%v), want tp %s", env, entries, err, traceparent)
		}
		flush(t, e)
	}
	if n, _ := recv.Requests(); n != 0 {
		t.Errorf("tracing off: the receiver got %d requests, want none", n)
	}
}
