package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sync"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/chaos"
	"github.com/syncverse/hub/internal/rig"
)

// A load generator of the fleet is the hub-bench binary again, run as `hub-bench --scenario fleet-loader` by the
// fleet's parent: one process holds at most RLIMIT_NOFILE sockets, so 100,000 streams need several. The parent
// speaks on its stdin, one line each: the spec first, then "check" with the truth once publishing has ended; its
// EOF means the parent is gone, and the loader ends. The loader answers on stdout: "status" lines while it runs, one
// "result" line at the end.
const fleetLoader = "fleet-loader"

// loaderSpec is the first line a loader reads: which clients it runs. Client i follows topic (i / len(Hubs)) mod
// len(Topics) on hub i mod len(Hubs), so every topic has clients on every hub.
type loaderSpec struct {
	Hubs     []string      `json:"hubs"`
	Topics   []string      `json:"topics"`
	Anchors  []string      `json:"anchors"` // per topic: the event every client resumes after
	First    int           `json:"first"`
	Count    int           `json:"count"`
	DialConc int           `json:"dial_concurrency"`
	Drain    time.Duration `json:"drain"`
}

// loaderTruth is what the check line carries: every topic's stored ids after its anchor, in stream order.
type loaderTruth struct {
	IDs [][]string `json:"ids"`
}

type loaderStatus struct {
	Open      int64 `json:"open"`
	Opened    int64 `json:"opened"`
	Delivered int64 `json:"delivered"`
	Bad       int64 `json:"bad"`
}

// loaderResult is a loader's verdict and figures.
type loaderResult struct {
	Tally       chaos.Tally `json:"tally"`
	Clients     int         `json:"clients"`
	NeverOpened int         `json:"never_opened"`
	Behind      int         `json:"behind"` // not caught up when the drain ran out
	Connects    int         `json:"connects"`
	Refused     int         `json:"refused"`
	Deliveries  int64       `json:"deliveries"`
	LastAt      int64       `json:"last_at_unix_ns"`
	OpenedAt    int64       `json:"all_opened_at_unix_ns"`
	PerHub      []int       `json:"per_hub"` // clients whose latest stream was on each hub
	Buckets     [][2]uint64 `json:"latency_buckets"`
	Windows     []winResult `json:"latency_windows"`
	MaxNs       int64       `json:"latency_max_ns"`
	Bad         []string    `json:"bad,omitempty"`
}

// runLoader is the loader process's life: clients up, status until the check line, then the verdict.
func runLoader(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	lines := make(chan []byte)
	var reader sync.WaitGroup
	reader.Go(func() { // ends at the parent's EOF, which comes after it has read the result (or when it dies)
		defer close(lines)
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 64<<10), 256<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
	})
	defer reader.Wait()
	defer func() {
		for range lines { // drain, so the reader reaches EOF
		}
	}()
	var spec loaderSpec
	first, ok := <-lines
	if !ok {
		return errors.New("fleet-loader: no spec on stdin")
	}
	if err := json.Unmarshal(first, &spec); err != nil {
		return fmt.Errorf("fleet-loader: spec: %w", err)
	}
	if err := raiseNoFile(spec.Count); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ls := startStreams(ctx, &spec)
	defer ls.stop()
	out := &rig.LineWriter{W: stdout}
	stopStatus := ls.report(out)
	truth, err := awaitCheck(ctx, lines)
	stopStatus()
	if err != nil {
		return err
	}
	res, err := ls.verdict(ctx, &spec, truth)
	if err != nil {
		return err
	}
	out.Line("result", res)
	return nil
}

// awaitCheck waits for the parent's check line and returns the truth it carries.
func awaitCheck(ctx context.Context, lines <-chan []byte) (*loaderTruth, error) {
	var truth loaderTruth
	select {
	case line, ok := <-lines:
		if !ok {
			return nil, errors.New("fleet-loader: the parent went away")
		}
		body, found := bytes.CutPrefix(line, []byte("check "))
		if !found {
			return nil, fmt.Errorf("fleet-loader: want a check line, got %.40q", line)
		}
		if err := json.Unmarshal(body, &truth); err != nil {
			return nil, fmt.Errorf("fleet-loader: truth: %w", err)
		}
		return &truth, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// loaderStreams is a loader's clients and the goroutines that run them.
type loaderStreams struct {
	load     *streamLoad
	clients  []*streamClient
	anchors  []hub.ID
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	openedAt time.Time
}

func startStreams(ctx context.Context, spec *loaderSpec) *loaderStreams {
	ctx, cancel := context.WithCancel(ctx)
	ls := &loaderStreams{cancel: cancel, load: &streamLoad{lat: &histogram{}, wins: &latWindows{}, dialing: make(chan struct{}, max(spec.DialConc, 1))}}
	ls.load.dialer.Timeout = 10 * time.Second
	for _, a := range spec.Anchors {
		id, _ := hub.ParseID(a)
		ls.anchors = append(ls.anchors, id)
	}
	nh, nt := len(spec.Hubs), len(spec.Topics)
	for i := spec.First; i < spec.First+spec.Count; i++ {
		h, t := i%nh, (i/nh)%nt
		order := make([]string, 0, nh) // its own hub, then the others from a place of its own, so a hub's clients spread evenly when it goes
		order = append(order, spec.Hubs[h])
		for k := range nh - 1 {
			order = append(order, spec.Hubs[(h+1+(i/nh/nt+k)%(nh-1))%nh])
		}
		c := &streamClient{hubs: order, topic: t, path: "/events?topic=" + url.QueryEscape(spec.Topics[t]), last: ls.anchors[t]}
		ls.clients = append(ls.clients, c)
		ls.wg.Go(func() { c.run(ctx, ls.load) })
	}
	return ls
}

func (ls *loaderStreams) stop() {
	ls.cancel()
	ls.wg.Wait()
}

// report writes a status line every half second until the returned func is called (which waits for it).
func (ls *loaderStreams) report(out *rig.LineWriter) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			l := ls.load
			if ls.openedAt.IsZero() && int(l.opened.Load()) == len(ls.clients) {
				ls.openedAt = time.Now()
			}
			out.Line("status", loaderStatus{Open: l.open.Load(), Opened: l.opened.Load(), Delivered: l.delivered.Load(), Bad: l.bad.Load()})
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// verdict waits until every client has its topic's newest event (or the drain runs out), stops them, and checks
// what each received against the truth.
func (ls *loaderStreams) verdict(ctx context.Context, spec *loaderSpec, truth *loaderTruth) (*loaderResult, error) {
	ids := make([][]hub.ID, len(spec.Topics))
	for t := range ids {
		if t < len(truth.IDs) {
			for _, s := range truth.IDs[t] {
				id, err := hub.ParseID(s)
				if err != nil {
					return nil, fmt.Errorf("fleet-loader: truth id %q: %w", s, err)
				}
				ids[t] = append(ids[t], id)
			}
		}
	}
	behind := func() int {
		n := 0
		for _, c := range ls.clients {
			if tr := ids[c.topic]; len(tr) > 0 && c.lastID().Less(tr[len(tr)-1]) {
				n++
			}
		}
		return n
	}
	_ = rig.Poll(ctx, spec.Drain, pollEvery, "every client caught up", func() bool { return behind() == 0 })
	res := &loaderResult{Clients: len(ls.clients), Behind: behind(), PerHub: make([]int, len(spec.Hubs))}
	ls.stop()
	for _, c := range ls.clients {
		ls.judge(c, ids[c.topic], spec, res)
	}
	res.Deliveries = ls.load.delivered.Load()
	if !ls.openedAt.IsZero() {
		res.OpenedAt = ls.openedAt.UnixNano()
	}
	res.Buckets, res.MaxNs = sparse(ls.load.lat), ls.load.lat.max.Load()
	w := ls.load.wins
	for i := range w.h {
		if w.h[i].count.Load() > 0 {
			res.Windows = append(res.Windows, winResult{Window: w.first.Load() + int64(i), Buckets: sparse(&w.h[i]), MaxNs: w.h[i].max.Load()})
		}
	}
	return res, nil
}

// winResult is one window's latency histogram; Window is the send time divided by latWindow.
type winResult struct {
	Window  int64       `json:"window"`
	Buckets [][2]uint64 `json:"buckets"`
	MaxNs   int64       `json:"max_ns"`
}

// sparse is h's non-empty buckets, as (bucket, count) pairs.
func sparse(h *histogram) [][2]uint64 {
	var out [][2]uint64
	for i := range h.buckets {
		if n := h.buckets[i].Load(); n > 0 {
			out = append(out, [2]uint64{uint64(i), n})
		}
	}
	return out
}

// merge adds sparse buckets and a maximum into h.
func merge(h *histogram, buckets [][2]uint64, maxNs int64) {
	for _, b := range buckets {
		h.buckets[b[0]].Add(b[1])
		h.count.Add(b[1])
	}
	h.max.Store(max(h.max.Load(), maxNs))
}

func (ls *loaderStreams) judge(c *streamClient, truth []hub.ID, spec *loaderSpec, res *loaderResult) {
	t := chaos.Check(truth, ls.anchors[c.topic], c.recs)
	t.Malformed += c.malformed
	res.Tally = res.Tally.Add(t)
	res.Connects += c.connects
	res.Refused += c.refused
	if c.firstOpen.IsZero() {
		res.NeverOpened++
	}
	if !c.lastAt.IsZero() && c.lastAt.UnixNano() > res.LastAt {
		res.LastAt = c.lastAt.UnixNano()
	}
	for i, h := range spec.Hubs {
		if c.hubs[c.onHub] == h {
			res.PerHub[i]++
		}
	}
	if bad := t.Lost + t.Duplicated + t.Reordered + t.Malformed; bad > 0 && len(res.Bad) < 5 {
		res.Bad = append(res.Bad, fmt.Sprintf("client on %s, topic %s: %v; first missing %v", c.hubs[c.onHub],
			spec.Topics[c.topic], t, chaos.Missing(truth, ls.anchors[c.topic], c.recs, 5)))
	}
}
