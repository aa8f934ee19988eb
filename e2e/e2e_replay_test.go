package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// publishN publishes n events seq from..from+n-1 in pipelined batches and returns their ids in order.
func publishN(t testing.TB, h *hubtest.Hub, topic string, from, n int) []string {
	t.Helper()
	ids := make([]string, 0, n)
	for start := from; start < from+n; start += 200 {
		var batch []pubsub.Message
		for i := start; i < min(start+200, from+n); i++ {
			batch = append(batch, pubsub.Message{Topic: topic, Type: "progress", Data: []byte(hubtest.EventData(i))})
		}
		got, errs := h.Pub.PublishBatch(context.Background(), batch)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("PublishBatch: event %d: %v", start+i, err)
			}
		}
		ids = append(ids, got...)
	}
	return ids
}

// A client resuming after event 10 of 1,000 gets exactly 11..1000, then the events published during its replay,
// each once and in order.
func TestReplayThenLiveExactlyOnce(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs)
	ids := publishN(t, h, "r", 1, 1000)
	type published struct {
		ids []string
		err error // the goroutine reports it: only the test's goroutine may end the test
	}
	live := make(chan published, 1)
	go func() {
		var p published
		for i := 1001; i <= 1200 && p.err == nil; i++ {
			var id string
			id, p.err = h.Pub.Publish(context.Background(), "r", "progress", []byte(hubtest.EventData(i)))
			p.ids = append(p.ids, id)
		}
		live <- p
	}()
	c := rig.OpenStream(t, h.URL, rig.TopicQuery("r"), ids[9])
	got := c.Events(1190, 20*time.Second)
	more := <-live
	if more.err != nil {
		t.Fatalf("publish during the replay: %v", more.err)
	}
	want := append(ids[10:], more.ids...)
	for i, f := range got {
		if f.ID != want[i] || f.Data != hubtest.EventData(11+i) {
			t.Fatalf("event %d = id %s data %s, want id %s data %s", i, f.ID, f.Data, want[i], hubtest.EventData(11+i))
		}
	}
	select {
	case f := <-c.Frames():
		if f.Comment == "" {
			t.Fatalf("extra frame after the last event: %+v", f)
		}
	case <-time.After(200 * time.Millisecond):
	}
	if v, _ := rig.MetricValue(rig.Scrape(t, h.URL), "hub_replay_events"); v < 1 {
		t.Errorf("hub_replay_events count = %v, want >= 1", v)
	}
}

// The query parameter last_event_id resumes too, and the header wins over it (EventSource resends the first URL).
func TestResumeFromQueryAndHeaderWins(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs)
	ids := publishN(t, h, "q", 1, 5)
	c := rig.OpenStream(t, h.URL, url.Values{"topic": {"q"}, "last_event_id": {ids[1]}}, "")
	if got := c.NextEvent(5 * time.Second); got.ID != ids[2] {
		t.Errorf("resume from query %s: first event %s, want %s", ids[1], got.ID, ids[2])
	}
	c.Close()
	c = rig.OpenStream(t, h.URL, url.Values{"topic": {"q"}, "last_event_id": {ids[0]}}, ids[3])
	if got := c.NextEvent(5 * time.Second); got.ID != ids[4] {
		t.Errorf("header %s over query %s: first event %s, want %s", ids[3], ids[0], got.ID, ids[4])
	}
	c.Close()
	c = rig.OpenStream(t, h.URL, url.Values{"topic": {"q"}, "history": {"2"}}, "")
	got := c.Events(2, 5*time.Second)
	if got[0].ID != ids[3] || got[1].ID != ids[4] {
		t.Errorf("history=2 replayed %s %s, want %s %s", got[0].ID, got[1].ID, ids[3], ids[4])
	}
}

// Several topics on one connection: the id is a cursor whose first position is the event's own topic, and
// resuming with it yields exactly what was missed in each topic.
func TestMultiTopicCursorRoundTrip(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs)
	c := rig.OpenStream(t, h.URL, rig.TopicQuery("ma", "mb"), "ma=0-0;mb=0-0")
	a1 := h.Publish("ma", "progress", hubtest.EventData(1))
	b1 := h.Publish("mb", "progress", hubtest.EventData(2))
	a2 := h.Publish("ma", "progress", hubtest.EventData(3))
	got := c.Events(3, 5*time.Second)
	// Order across topics is not promised (a replay of mb may overtake a live ma), order within one is. Each cursor
	// names its own event first, then the other topic at the last event delivered before it.
	last := map[string]string{"ma": "0-0", "mb": "0-0"}
	for i, f := range got {
		topic, id := ownPosition(f.ID)
		other := map[string]string{"ma": "mb", "mb": "ma"}[topic]
		if want := topic + "=" + id + ";" + other + "=" + last[other]; f.ID != want {
			t.Errorf("event %d id = %q, want %q", i, f.ID, want)
		}
		last[topic] = id
	}
	seen := idsByTopic(got)
	if want := []string{a1, a2}; fmt.Sprint(seen["ma"]) != fmt.Sprint(want) {
		t.Errorf("ma events %v, want %v", seen["ma"], want)
	}
	if want := []string{b1}; fmt.Sprint(seen["mb"]) != fmt.Sprint(want) {
		t.Errorf("mb events %v, want %v", seen["mb"], want)
	}
	cursor := got[2].ID
	if !strings.Contains(cursor, "ma="+a2) || !strings.Contains(cursor, "mb="+b1) {
		t.Fatalf("cursor after all three events = %q, want positions ma=%s and mb=%s", cursor, a2, b1)
	}
	c.Close()
	b2 := h.Publish("mb", "progress", hubtest.EventData(4))
	a3 := h.Publish("ma", "progress", hubtest.EventData(5))
	b3 := h.Publish("mb", "progress", hubtest.EventData(6))
	c = rig.OpenStream(t, h.URL, rig.TopicQuery("ma", "mb"), cursor)
	perTopic := idsByTopic(c.Events(3, 5*time.Second))
	if fmt.Sprint(perTopic["ma"]) != fmt.Sprint([]string{a3}) || fmt.Sprint(perTopic["mb"]) != fmt.Sprint([]string{b2, b3}) {
		t.Errorf("resumed with %q: got %v, want ma:[%s] mb:[%s %s]", cursor, perTopic, a3, b2, b3)
	}
}

// ownPosition is the first position of a multi-topic cursor: the topic and id of the event that carries it.
func ownPosition(cursor string) (topic, id string) {
	first, _, _ := strings.Cut(cursor, ";")
	topic, id, _ = strings.Cut(first, "=")
	return topic, id
}

// idsByTopic is the ids of the events by the topic of each, in the order they came.
func idsByTopic(events []rig.Frame) map[string][]string {
	ids := map[string][]string{}
	for _, f := range events {
		topic, id := ownPosition(f.ID)
		ids[topic] = append(ids[topic], id)
	}
	return ids
}

// A position older than the stored history gets a reset naming the oldest event, then the rest in order; one newer
// than anything stored (Redis lost data) gets a reset too. Nothing is skipped silently.
func TestResetWhenHistoryTruncated(t *testing.T) {
	rs := rig.StartRedis(t)
	h := hubtest.Start(t, rs)
	ids := publishN(t, h, "tr", 1, 50)
	if err := h.RDB.XTrimMaxLen(context.Background(), h.StreamKey("tr"), 20).Err(); err != nil {
		t.Fatal(err)
	}
	c := rig.OpenStream(t, h.URL, rig.TopicQuery("tr"), ids[4])
	got := c.Events(21, 5*time.Second)
	wantReset := fmt.Sprintf(`{"topic":"tr","reason":"history-truncated","oldest":%q}`, ids[30])
	if got[0].Event != "reset" || got[0].Data != wantReset || got[0].HasID {
		t.Fatalf("first frame = %+v, want event reset without id, data %s", got[0], wantReset)
	}
	for i, f := range got[1:] {
		if f.ID != ids[30+i] {
			t.Fatalf("after reset, event %d = %s, want %s", i, f.ID, ids[30+i])
		}
	}
	c.Close()

	c = rig.OpenStream(t, h.URL, rig.TopicQuery("tr"), "99999999999999-0")
	f := c.NextEvent(5 * time.Second)
	if f.Event != "reset" || !strings.Contains(f.Data, `"reason":"history-lost"`) {
		t.Fatalf("resume beyond the newest event: first event %+v, want a history-lost reset", f)
	}
	next := h.Publish("tr", "progress", hubtest.EventData(51))
	if f := c.NextEvent(5 * time.Second); f.ID != next {
		t.Errorf("after the reset, live event %s, want %s", f.ID, next)
	}
}

// data is the JSON of the i-th event of a test sequence.
