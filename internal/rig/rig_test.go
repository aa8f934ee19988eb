package rig

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSeries(t *testing.T) {
	body := "# HELP a x\n# TYPE a counter\na 3\nb{k=\"v w\"} 1.5\nbad\nc NaN-ish\n\nd 2e3\n"
	want := map[string]float64{"a": 3, `b{k="v w"}`: 1.5, "d": 2000}
	if got := Series([]byte(body)); !reflect.DeepEqual(got, want) {
		t.Errorf("Series = %v, want %v", got, want)
	}
}

func FuzzSeries(f *testing.F) {
	f.Add("a 1\n# c\nb{x=\"1\"} 2\n")
	f.Fuzz(func(t *testing.T, body string) {
		for k := range Series([]byte(body)) {
			if strings.ContainsAny(k, "\n") || strings.HasPrefix(k, "#") {
				t.Fatalf("series %q from %q", k, body)
			}
		}
	})
}

func TestMetricsSendsTheTokenAndRefusesAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" || r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte("up 1\n"))
	}))
	defer srv.Close()
	if m, err := Metrics(context.Background(), nil, srv.URL, "tok"); err != nil || m["up"] != 1 {
		t.Errorf("Metrics with the token = %v, %v; want up 1", m, err)
	}
	if _, err := Metrics(context.Background(), nil, srv.URL, ""); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("Metrics without the token = %v, want the 401 named", err)
	}
}

func TestPoll(t *testing.T) {
	n := 0
	if err := Poll(context.Background(), time.Minute, time.Millisecond, "n reaches 3", func() bool { n++; return n >= 3 }); err != nil || n != 3 {
		t.Errorf("Poll = %v after %d calls, want nil after 3", err, n)
	}
	err := PollWhy(context.Background(), 10*time.Millisecond, time.Millisecond, "never", func() (bool, string) { return false, "still no" })
	if err == nil || !strings.Contains(err.Error(), "never: not within 10ms (still no)") {
		t.Errorf("PollWhy past its deadline = %v, want what, the deadline and the last word", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Poll(ctx, time.Minute, time.Millisecond, "never", func() bool { return false }); !errors.Is(err, context.Canceled) {
		t.Errorf("Poll with an ended context = %v, want context.Canceled", err)
	}
}

func TestFreeAddrs(t *testing.T) {
	for _, free := range []func() (string, error){LoopbackAddr, FreeBusAddr} {
		a, err := free()
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", a)
		if err != nil {
			t.Fatalf("listen on the free address %s: %v", a, err)
		}
		l.Close()
	}
}
