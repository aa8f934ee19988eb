package sse

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/syncverse/hub/hub"
)

func benchEvent(n int, data string) *hub.Event {
	id := hub.ID{Ms: 1732870000000 + uint64(n)}
	return &hub.Event{Topic: "project.42", ID: id, IDText: id.String(), Type: "progress", Data: []byte(data),
		Source: hub.SourceLive}
}

func BenchmarkEncode(b *testing.B) {
	cases := map[string]string{
		"progress":  `{"workflow":"wf-1","step":"compile","progress":0.4,"status":"running"}`,
		"1KiB":      `{"message":"` + strings.Repeat("x", 1000) + `"}`,
		"multiline": "{\n" + strings.Repeat(`  "k": "v",`+"\n", 20) + `  "end": true` + "\n}",
	}
	for name, data := range cases {
		b.Run(name, func(b *testing.B) {
			ev := benchEvent(1, data)
			b.ReportAllocs()
			b.SetBytes(int64(len(Encode(ev))))
			for b.Loop() {
				_ = Encode(ev)
			}
		})
	}
}

func BenchmarkParseCursor(b *testing.B) {
	cases := []struct {
		name   string
		topics []string
		raw    string
	}{
		{"one-topic", []string{"project.42"}, "1732870000000-3"},
		{"three-topics", []string{"a", "project.42", "wf-7f3a"}, "project.42=1732870000000-3;a=1732870000001-0;wf-7f3a=1732869999999-12"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseCursor(c.topics, c.raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendCursor is the id line a multi-topic stream writes for every event.
func BenchmarkAppendCursor(b *testing.B) {
	h := hub.New(benchNopStore{}, hub.Config{})
	defer h.Close()
	topics := []string{"a", "project.42", "wf-7f3a"}
	sub, err := h.Subscribe(topics)
	if err != nil {
		b.Fatal(err)
	}
	if err := sub.Start(context.Background(), []hub.From{{After: hub.ID{Ms: 5}, Set: true}, {}, {After: hub.ID{Ms: 9, Seq: 2}, Set: true}}, benchNopSink{}); err != nil {
		b.Fatal(err)
	}
	ev := benchEvent(7, `{}`)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = appendCursor(buf[:0], sub, ev)
	}
}

// BenchmarkConnLive is the whole live path of one event to n streams, minus the socket: Broadcast, each stream's
// batch, Advance, framing, one write and one flush into a ResponseWriter that discards. The event and its encoding
// are made once per event; the figures per delivery are what each client costs. "raw" streams write chunks to their
// connection (HTTP/1.1 on the raw engine); the others go through net/http's writer.
func BenchmarkConnLive(b *testing.B) {
	for _, n := range []int{1, 1000} {
		for _, raw := range []bool{false, true} {
			name := fmt.Sprintf("streams=%d", n)
			if raw {
				name += "/raw"
			}
			b.Run(name, func(b *testing.B) { benchConnLive(b, n, raw) })
		}
	}
}

func benchConnLive(b *testing.B, n int, raw bool) {
	h := hub.New(benchNopStore{}, hub.Config{})
	defer h.Close()
	hd := New(h, Config{})
	conns := make([]*stream, n)
	for i := range conns {
		sub, err := h.Subscribe([]string{"project.42"})
		if err != nil {
			b.Fatal(err)
		}
		if err := sub.Start(context.Background(), []hub.From{{}}, benchNopSink{}); err != nil {
			b.Fatal(err)
		}
		var out output = newHTTPOutput(&discardWriter{h: http.Header{}}, &http.Request{ProtoMajor: 1}, sub.Done())
		if raw {
			ro := newRawOutput(devNull(b), sub.Done(), nil)
			ro.shared = true // as on a worker: non-blocking writes
			out = ro
		}
		conns[i] = &stream{}
		conns[i].init(hd, out, sub, time.Time{})
	}
	data := `{"workflow":"wf-1","step":"compile","progress":0.4,"status":"running"}`
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		h.Broadcast(benchEvent(i, data))
		for _, c := range conns {
			if _, err := c.live(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/delivery")
}

// devNullConn is a net.Conn whose writes go to /dev/null: each is a real write syscall, without a socket.
type devNullConn struct {
	net.Conn
	f *os.File
}

func devNull(b *testing.B) devNullConn {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return devNullConn{f: f}
}

func (d devNullConn) Write(p []byte) (int, error)           { return d.f.Write(p) }
func (d devNullConn) SetWriteDeadline(time.Time) error      { return nil }
func (d devNullConn) SyscallConn() (syscall.RawConn, error) { return d.f.SyscallConn() }

type benchNopStore struct{}

var benchReady = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (benchNopStore) Follow(string) <-chan struct{} { return benchReady }
func (benchNopStore) Unfollow(string)               {}
func (benchNopStore) Read(context.Context, string, hub.ID, int) ([]*hub.Event, bool, error) {
	return nil, false, nil
}
func (benchNopStore) Tail(context.Context, string, int) ([]*hub.Event, bool, error) {
	return nil, false, nil
}
func (benchNopStore) Newest(context.Context, string) (hub.ID, error) { return hub.ID{}, nil }

type benchNopSink struct{}

func (benchNopSink) Deliver([]*hub.Event) error { return nil }
func (benchNopSink) Idle() error                { return nil }

// discardWriter is a ResponseWriter with what http.ResponseController needs, and no socket.
type discardWriter struct {
	h http.Header
	n int
}

func (d *discardWriter) Header() http.Header              { return d.h }
func (d *discardWriter) WriteHeader(int)                  {}
func (d *discardWriter) Write(b []byte) (int, error)      { d.n += len(b); return len(b), nil }
func (d *discardWriter) FlushError() error                { return nil }
func (d *discardWriter) SetWriteDeadline(time.Time) error { return nil }
