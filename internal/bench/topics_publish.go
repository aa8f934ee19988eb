package bench

import (
	"context"
	"sync"
	"time"

	"github.com/syncverse/hub/pubsub"
)

// topicsPublishing spreads events over every topic: publisher j owns topics j, j+P, j+2P, … and sends them round
// after round (sequence s of each of its topics, then s+1), so each topic's events come from one pipeline in order.
type topicsPublishing struct {
	r         *topicsRun
	ok        [][]bool
	errs      []error
	firstSent time.Time
	lastSent  time.Time
}

func (p *topicsPublishing) run(ctx context.Context) {
	o := p.r.b.o
	pubs := min(o.publishers, len(p.r.names))
	p.ok = make([][]bool, len(p.r.names))
	for i := range p.ok {
		p.ok[i] = make([]bool, p.r.perTop)
	}
	p.errs = make([]error, pubs)
	p.firstSent = time.Now()
	var wg sync.WaitGroup
	for j := range pubs {
		wg.Go(func() { p.errs[j] = p.one(ctx, j, pubs) })
	}
	wg.Wait()
	p.lastSent = time.Now()
}

func (p *topicsPublishing) one(ctx context.Context, j, pubs int) error {
	o := p.r.b.o
	var mine []int
	for t := j; t < len(p.r.names); t += pubs {
		mine = append(mine, t)
	}
	return paced(ctx, p.r.b.pub, len(mine)*p.r.perTop, o.batch, o.rate/float64(pubs), func(k int, now int64) pubsub.Message {
		t, s := mine[k%len(mine)], k/len(mine)
		return pubsub.Message{Topic: p.r.names[t], Type: "progress", Data: progressPayload(0, s, now, o.payload)}
	}, func(k int) {
		p.ok[mine[k%len(mine)]][k/len(mine)] = true
		p.r.b.m.published()
	})
}

func (p *topicsPublishing) published() int {
	n := 0
	for _, t := range p.ok {
		n += countTrue(t)
	}
	return n
}

func (p *topicsPublishing) err() error { return firstErr(p.errs) }

// progressPayload is payload as a valid progress event (docs/schemas/progress.json: a workflow, other fields allowed),
// what a console's topic carries: the hub checks it on receipt and the workflow sweeper follows it.
func progressPayload(pub, seq int, sentNs int64, size int) []byte {
	return append([]byte(`{"workflow":"bench",`), payload(pub, seq, sentNs, size-len(`"workflow":"bench",`))[1:]...)
}
