package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/syncverse/hub/internal/rig"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/internal/delay"
)

// The floor is the least a Redis-to-SSE server can do and still deliver what the hub delivers live: one SUBSCRIBE
// per topic followed, one goroutine per stream writing through net/http, a frame per event. It keeps no history,
// replays nothing, repairs no gap, sends no heartbeat, checks no token and counts nothing but its open streams. The
// topics scenario runs against it (--target floor) to show what the hub's per-event cost is above that floor.
type floor struct {
	rdb    *redis.Client
	ps     *redis.PubSub
	prefix string
	active atomic.Int64
	opened atomic.Int64

	mu      sync.Mutex
	streams map[string]map[chan []byte]struct{} // topic -> its streams' queues
}

// floorQueue is each stream's queue, in frames; a stream that falls this far behind is closed (as the hub evicts).
const floorQueue = 256

func newFloor(rdb *redis.Client, prefix string) *floor {
	return &floor{rdb: rdb, ps: rdb.Subscribe(context.Background()), prefix: prefix,
		streams: map[string]map[chan []byte]struct{}{}}
}

func (f *floor) channel(topic string) string { return f.prefix + ":{" + topic + "}:live" }

// receive reads the pub/sub connection until ctx ends: each message is framed once and queued to its topic's streams.
func (f *floor) receive(ctx context.Context) {
	for ctx.Err() == nil {
		msg, err := f.ps.ReceiveMessage(ctx)
		if err != nil {
			delay.Sleep(ctx, 50*time.Millisecond) // go-redis reconnects and resubscribes
			continue
		}
		topic, ok := strings.CutPrefix(msg.Channel, f.prefix+":{")
		if topic, ok = strings.CutSuffix(topic, "}:live"); !ok {
			continue
		}
		var env struct {
			ID   string          `json:"id"`
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if json.Unmarshal([]byte(msg.Payload), &env) != nil || env.ID == "" {
			continue
		}
		frame := []byte("id: " + env.ID + "\nevent: " + env.Type + "\ndata: " + string(env.Data) + "\n\n")
		f.mu.Lock()
		for q := range f.streams[topic] {
			select {
			case q <- frame:
			default: // too slow: its handler sees the queue closed and ends the stream
				delete(f.streams[topic], q)
				close(q)
			}
		}
		f.mu.Unlock()
	}
}

func (f *floor) join(ctx context.Context, topic string, q chan []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.streams[topic] == nil {
		if err := f.ps.Subscribe(ctx, f.channel(topic)); err != nil {
			return err
		}
		f.streams[topic] = map[chan []byte]struct{}{}
	}
	f.streams[topic][q] = struct{}{}
	return nil
}

func (f *floor) leave(topic string, q chan []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.streams[topic][q]; ok {
		delete(f.streams[topic], q)
		close(q)
	}
	if len(f.streams[topic]) == 0 {
		delete(f.streams, topic)
		_ = f.ps.Unsubscribe(context.Background(), f.channel(topic))
	}
}

// ServeHTTP is GET /events?topic=T (one topic) and GET /metrics (hub_sse_connections_active and
// hub_sse_connections_opened_total only).
func (f *floor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/metrics" {
		fmt.Fprintf(w, "hub_sse_connections_active %d\nhub_sse_connections_opened_total %d\n", f.active.Load(), f.opened.Load())
		return
	}
	topic := r.URL.Query().Get("topic")
	if r.URL.Path != "/events" || topic == "" {
		http.Error(w, "GET /events?topic=T", http.StatusNotFound)
		return
	}
	q := make(chan []byte, floorQueue)
	if err := f.join(r.Context(), topic, q); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer f.leave(topic, q)
	f.opened.Add(1)
	f.active.Add(1)
	defer f.active.Add(-1)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl := w.(http.Flusher)
	_, _ = w.Write([]byte("retry: 2000\n\n"))
	fl.Flush()
	for {
		select {
		case frame, ok := <-q:
			if !ok {
				return
			}
			if _, err := w.Write(frame); err != nil {
				return
			}
			fl.Flush()
		case <-r.Context().Done():
			return
		}
	}
}

// floorServe is the hidden scenario floor-serve: it serves the floor on a free loopback port, prints
// "listening on http://ADDR" and runs until ctx ends.
func floorServe(ctx context.Context, o *options, stdout io.Writer) error {
	if o.redisURL == "" {
		return errors.New("the floor reads --redis-url")
	}
	opt, err := redis.ParseURL(o.redisURL)
	if err != nil {
		return fmt.Errorf("--redis-url: %w", err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	f := newFloor(rdb, o.prefix)
	defer f.ps.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { f.receive(ctx) })
	wg.Go(func() {
		<-ctx.Done()
		_ = srv.Close()
	})
	fmt.Fprintln(stdout, floorListening+ln.Addr().String())
	err = srv.Serve(ln)
	cancel()
	_ = f.ps.Close()
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// floorScenario is the hidden scenario that serves the floor; floorListening starts the line it prints.
const (
	floorScenario  = "floor-serve"
	floorListening = "listening on http://"
)

// floorProc is a floor server run as a child process, so its CPU is its own.
type floorProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// startFloor runs bin (hub-bench) --scenario floor-serve on redisURL and returns once it listens, with its URL.
func startFloor(bin, redisURL, prefix string) (*floorProc, string, error) {
	cmd := exec.Command(bin, "--scenario", floorScenario, "--redis-url", redisURL, "--prefix", prefix)
	rig.SetParentDeath(cmd)
	errOut := &rig.TailBuffer{Max: 16 << 10}
	cmd.Stderr = errOut
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start the floor %s: %w", bin, err)
	}
	p := &floorProc{cmd: cmd, done: make(chan struct{})}
	urls := make(chan string, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if addr, ok := strings.CutPrefix(sc.Text(), floorListening); ok {
				urls <- "http://" + addr
			}
		}
		_ = cmd.Wait()
	}()
	select {
	case u := <-urls:
		return p, u, nil
	case <-p.done:
		return nil, "", fmt.Errorf("the floor ended before it listened: %s", strings.TrimSpace(errOut.String()))
	case <-time.After(10 * time.Second):
		p.stop()
		return nil, "", errors.New("the floor did not listen within 10s")
	}
}

func (p *floorProc) pid() int { return p.cmd.Process.Pid }

// stop ends the floor (SIGTERM, then SIGKILL after 5 s) and waits for it.
func (p *floorProc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
