package pubsub

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/rig"
)

// bigTopic publishes n events of about size bytes on topic and returns their ids.
func bigTopic(t *testing.T, b *backend, topic string, n, size int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = b.publish(t, topic, "", fmt.Sprintf(`{"i":%d,"x":"%s"}`, i, strings.Repeat("x", size-20)))
	}
	return ids
}

// TestReplayPagesBoundedInBytes: a page asked for 1,000 events of 16 KB ends once it holds the page size, says the
// stream goes on, and reading on from its end gets every event once, in order.
func TestReplayPagesBoundedInBytes(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		reg := metered()
		const pageBytes = 64 << 10
		st := NewHistory(b.rdb, HistoryConfig{Prefix: b.prefix, MaxPageBytes: pageBytes, Registerer: reg})
		ids := bigTopic(t, b, "t", 40, 16<<10)
		var got []string
		after := hub.ID{}
		for pages := 0; ; pages++ {
			page, more, err := st.Read(ctx, "t", after, 1000)
			if err != nil {
				t.Fatalf("Read(after %s, 1000): %v", after, err)
			}
			size := 0
			for _, ev := range page {
				size += len(ev.Data)
				got = append(got, ev.IDText)
			}
			if size > pageBytes+(17<<10) {
				t.Fatalf("Read(after %s, 1000) = %d events, %d bytes; want at most %d bytes and one event", after, len(page), size, pageBytes)
			}
			if !more {
				break
			}
			if len(page) == 0 || pages > 40 {
				t.Fatalf("Read(after %s) = %d events, more; want progress", after, len(page))
			}
			after = page[len(page)-1].ID
		}
		if !slices.Equal(got, ids) {
			t.Errorf("paged Read got %d ids, want the %d published, in order", len(got), len(ids))
		}
		if v := metricOf(t, reg, "hub_redis_pages_cut_total"); v < 5 {
			t.Errorf("hub_redis_pages_cut_total = %v, want at least 5 (40 events of 16 KB in pages of 64 KB)", v)
		}
	})
}

// TestTailBoundedInBytes: the last 30 of 40 events of 16 KB do not fit in a page of 64 KB: Tail returns the first
// page of them, starting at the 30th newest, and says more follow.
func TestTailBoundedInBytes(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		st := NewHistory(b.rdb, HistoryConfig{Prefix: b.prefix, MaxPageBytes: 64 << 10})
		ids := bigTopic(t, b, "t", 40, 16<<10)
		page, more, err := st.Tail(ctx, "t", 30)
		if err != nil || !more || len(page) == 0 || len(page) > 5 || page[0].IDText != ids[10] {
			t.Fatalf("Tail(30) = %d events from %q, more %v, %v; want up to 5 from %s, more", len(page), idsOf(page)[:min(1, len(page))], more, err, ids[10])
		}
		small, more, err := st.Tail(ctx, "t", 2)
		if err != nil || more || !slices.Equal(idsOf(small), ids[38:]) {
			t.Errorf("Tail(2) = %q, more %v, %v; want %q, no more", idsOf(small), more, err, ids[38:])
		}
	})
}

// TestStoreReadsCapped: with every read slot taken, a history read waits (counted) and runs once a slot is free.
func TestStoreReadsCapped(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		reg := metered()
		st := NewHistory(b.rdb, HistoryConfig{Prefix: b.prefix, MaxReads: 1, Registerer: reg})
		id := b.publish(t, "t", "", `{"n":1}`)
		if !st.pg.slots.TryAcquire(1) {
			t.Fatal("the one read slot is taken before any read")
		}
		done := make(chan []*hub.Event)
		go func() {
			evs, _, _ := st.Read(ctx, "t", hub.ID{}, 10)
			done <- evs
		}()
		rig.Eventually(t, 10*time.Second, "hub_redis_reads_waited_total at 1 while the slot is held", func() bool {
			return metricOf(t, reg, "hub_redis_reads_waited_total") == 1
		})
		select {
		case <-done:
			t.Fatal("Read returned while every read slot was taken")
		default:
		}
		st.pg.slots.Release(1)
		if evs := <-done; !slices.Equal(idsOf(evs), []string{id}) {
			t.Errorf("Read after the slot freed = %q, want %q", idsOf(evs), []string{id})
		}
	})
}

// TestReadAfterLargestIDIsEmpty: nothing follows the largest id; Redis would refuse the range that starts after it.
func TestReadAfterLargestIDIsEmpty(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		b.publish(t, "t", "", `{"n":1}`)
		evs, more, err := b.store().Read(ctx, "t", maxID, 10)
		if err != nil || more || len(evs) != 0 {
			t.Errorf("Read(after %s) = %q, more %v, %v; want nothing, no error", maxID, idsOf(evs), more, err)
		}
	})
}
