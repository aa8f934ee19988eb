package bench

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/syncverse/hub/pubsub"
)

// publishing is one run of the publishers: pubs goroutines, each sending perPub events of its own sequence in
// pipelined batches through the publish script, as an agent's PublishBatch does.
type publishing struct {
	pub     *pubsub.Publisher
	topic   string
	pubs    int
	perPub  int
	rate    float64 // events per second, all publishers together; 0 = as fast as Redis takes them
	payload int
	batch   int // most events per pipeline
	meter   *meter

	ok        []bool // per event index, whether the script stored it; read after run returns
	firstSent time.Time
	lastSent  time.Time
	errs      []error
}

// pace is how often a rate-limited publisher sends what has come due, so a batch stays small and latency honest.
const pace = 2 * time.Millisecond

func (p *publishing) run(ctx context.Context) {
	p.ok = make([]bool, p.pubs*p.perPub)
	p.errs = make([]error, p.pubs)
	p.firstSent = time.Now()
	var wg sync.WaitGroup
	for i := range p.pubs {
		wg.Go(func() { p.errs[i] = p.one(ctx, i) })
	}
	wg.Wait()
	p.lastSent = time.Now()
}

func (p *publishing) one(ctx context.Context, id int) error {
	return paced(ctx, p.pub, p.perPub, p.batch, p.rate/float64(p.pubs), func(s int, now int64) pubsub.Message {
		return pubsub.Message{Topic: p.topic, Type: "progress", Data: payload(id, s, now, p.payload)}
	}, func(s int) {
		p.ok[id*p.perPub+s] = true
		p.meter.published()
	})
}

// paced publishes events 0 to total-1 at per events a second (all at once when per is 0), in batches of at most
// batch: event(k, now) is the k-th event, stamped with the send time now; stored(k) is called for each one the
// script stored. It returns the first error, or ctx's.
func paced(ctx context.Context, pub *pubsub.Publisher, total, batch int, per float64, event func(k int, now int64) pubsub.Message,
	stored func(k int)) error {
	start := time.Now()
	msgs := make([]pubsub.Message, 0, batch)
	var tick *time.Ticker
	if per > 0 {
		tick = time.NewTicker(pace)
		defer tick.Stop()
	}
	var firstErr error
	for sent := 0; sent < total; {
		due := total
		if per > 0 {
			due = min(total, int(per*time.Since(start).Seconds())+1)
		}
		if n := min(due-sent, batch); n > 0 {
			msgs = msgs[:0]
			now := time.Now().UnixNano()
			for k := sent; k < sent+n; k++ {
				msgs = append(msgs, event(k, now))
			}
			_, errs := pub.PublishBatch(ctx, msgs)
			for i, err := range errs {
				if err == nil {
					stored(sent + i)
				} else if firstErr == nil {
					firstErr = err
				}
			}
			sent += n
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return firstErr
}

// payload is an event's data: its publisher, its sequence, its send time, and padding up to size bytes.
func payload(pub, seq int, sentNs int64, size int) []byte {
	b := make([]byte, 0, max(size, 64))
	b = append(b, `{"p":`...)
	b = strconv.AppendInt(b, int64(pub), 10)
	b = append(b, `,"s":`...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, sentNs, 10)
	b = append(b, `,"x":"`...)
	for len(b) < size-2 {
		b = append(b, 'x')
	}
	return append(b, `"}`...)
}

func (p *publishing) published() int { return countTrue(p.ok) }

func (p *publishing) err() error { return firstErr(p.errs) }

// countTrue is how many of ok are true.
func countTrue(ok []bool) int {
	n := 0
	for _, o := range ok {
		if o {
			n++
		}
	}
	return n
}

// firstErr is the first error of errs that is not nil, or nil.
func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
