package pubsub

import (
	"context"
	"fmt"
	"slices"

	"github.com/syncverse/hub/hub"
)

// tail walks the stream back from its end, one bounded command at a time, until it has seen the last n valid
// events. When they fit in a page it returns them; otherwise it keeps only the oldest one's id as it goes, and
// returns the first page read forward from there.
func (s *History) tail(ctx context.Context, topic string, n int) (page, error) {
	var (
		kept                 []*hub.Event // newest first, while they fit
		keptBytes, all, seen int
		valid                int
		oldest               hub.ID
		fits                 = true
		end                  = "+"
	)
	for valid < n {
		room := s.pg.maxBytes
		if fits {
			room -= keptBytes
		}
		want := s.pg.count(room, avg(all, seen), n-valid)
		msgs, err := s.xrange(ctx, s.keys.Stream(topic), end, "-", want, true, hub.SourceReplay)
		if err != nil {
			return page{}, fmt.Errorf("read the tail of %s: %w", topic, err)
		}
		for _, m := range msgs {
			size := entryBytes(m)
			all, seen = all+size, seen+1
			ev, reason := fromEntry(topic, m, s.max, hub.SourceReplay)
			if reason != "" || valid == n {
				continue // an invalid entry is counted by the Subscriber, which reads every entry once
			}
			valid++
			oldest = ev.ID
			if fits {
				kept, keptBytes = append(kept, ev), keptBytes+size
				if s.pg.full(keptBytes) && valid < n {
					fits, kept = false, nil
				}
			}
		}
		if len(msgs) < want {
			break // the stream's start
		}
		end = "(" + msgs[len(msgs)-1].ID
	}
	if fits {
		slices.Reverse(kept)
		return page{evs: kept}, nil
	}
	s.pg.cut.Inc()
	evs, _, more, err := s.readRaw(ctx, topic, before(oldest), n, hub.SourceReplay)
	if err != nil {
		return page{}, fmt.Errorf("read the tail of %s: %w", topic, err)
	}
	return page{evs: evs, more: more}, nil
}
