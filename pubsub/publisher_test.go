package pubsub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
)

func TestPublishScriptWritesStreamChannelAndState(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		msgs := b.subscribe(t, "wf.1").Channel()
		pub := b.publisher(PublisherConfig{})
		inputs := []struct{ typ, data string }{
			{"", `{"workflow":"wf-1","step":"compile","progress":0.4}`},
			{"lock", `{"key":"deploy","holder":"agent-1","state":"acquired"}`},
			{"log", `{"message":"hello"}`},
			{"progress", `[1,2]`},
			{"progress", `{"workflow":"wf-1","step":"test"}`},
		}
		var ids []string
		for _, in := range inputs {
			id, err := pub.Publish(ctx, "wf.1", in.typ, []byte(in.data))
			if err != nil {
				t.Fatalf("Publish(wf.1, %q, %s) = %v", in.typ, in.data, err)
			}
			ids = append(ids, id)
		}
		entries, err := b.rdb.XRange(ctx, b.keys.Stream("wf.1"), "-", "+").Result()
		if err != nil || len(entries) != len(inputs) {
			t.Fatalf("XRANGE after %d publishes = %d entries, %v", len(inputs), len(entries), err)
		}
		prev := "0-0"
		envs := map[string]string{}
		for i, e := range entries {
			typ := inputs[i].typ
			if typ == "" {
				typ = hub.DefaultType
			}
			want := map[string]any{"p": prev, "t": typ, "d": inputs[i].data}
			if e.ID != ids[i] || fmt.Sprint(e.Values) != fmt.Sprint(want) {
				t.Errorf("entry %d = %s %v, want %s %v", i, e.ID, e.Values, ids[i], want)
			}
			select {
			case m := <-msgs:
				var env map[string]json.RawMessage
				if err := json.Unmarshal([]byte(m.Payload), &env); err != nil {
					t.Fatalf("envelope %q is not JSON: %v", m.Payload, err)
				}
				wantEnv := fmt.Sprintf(`{"id":%q,"prev":%q,"type":%q,"data":%s}`, e.ID, prev, typ, inputs[i].data)
				if m.Payload != wantEnv {
					t.Errorf("envelope %d = %s, want %s", i, m.Payload, wantEnv)
				}
				envs[e.ID] = m.Payload
			case <-time.After(5 * time.Second):
				t.Fatalf("no envelope on %s for entry %d", b.keys.Channel("wf.1"), i)
			}
			prev = e.ID
		}
		state := b.state(t, "wf.1")
		delete(state, "_trim") // where the trimming walk got to: see TestStateTrimmedWithHistory
		wantState := map[string]string{"_cursor": ids[4], "wf:wf-1": envs[ids[4]], "lock:deploy": envs[ids[1]],
			"wfstart:wf-1": ids[0]}
		if fmt.Sprint(state) != fmt.Sprint(wantState) {
			t.Errorf("state hash = %v, want %v", state, wantState)
		}
	})
}

func TestPublishScriptTrimsByLength(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		pub := b.publisher(PublisherConfig{MaxLen: 10})
		publishBatch(t, ctx, pub, messages("t", `{"i":%d}`, 400))
		n, err := b.rdb.XLen(ctx, b.keys.Stream("t")).Result()
		if err != nil || n < 10 || n >= 400 {
			t.Errorf("XLEN after 400 publishes with MaxLen 10 = %d, %v; want 10 ≤ n < 400 (MAXLEN ~)", n, err)
		}
	})
}

func TestPublishScriptTrimsByAge(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		old := b.publisher(PublisherConfig{})
		var ids []hub.ID
		for i := range 300 {
			id, err := old.Publish(ctx, "t", "", fmt.Appendf(nil, `{"i":%d}`, i))
			if err != nil {
				t.Fatal(err)
			}
			parsed, _ := hub.ParseID(id)
			ids = append(ids, parsed)
			if i == 299 && ids[0].Ms == parsed.Ms {
				time.Sleep(2 * time.Millisecond) // make sure the cut below falls after the first entry
			}
		}
		cut := ids[250].Ms + 1 // the age limit falls after the 251st entry
		aged := b.publisher(PublisherConfig{MaxAge: time.Hour})
		aged.now = func() time.Time { return time.UnixMilli(int64(cut)).Add(time.Hour) }
		last, err := aged.Publish(ctx, "t", "", []byte(`{"i":"last"}`))
		if err != nil {
			t.Fatal(err)
		}
		left := b.streamIDs(t, "t")
		if len(left) == 0 || left[len(left)-1] != last {
			t.Fatalf("after MINID trimming the stream is %d entries ending %v, want it to end with the new %s", len(left), left[max(0, len(left)-1):], last)
		}
		if len(left) >= 301 {
			t.Errorf("MaxAge trimming removed nothing: %d entries", len(left))
		}
		kept := map[string]bool{}
		for _, id := range left {
			kept[id] = true
		}
		for _, id := range ids {
			if id.Ms >= cut && !kept[id.String()] {
				t.Errorf("entry %s is newer than the age limit (%d) but was trimmed", id, cut)
			}
		}
		older := 0 // entries older than the age limit that were kept
		for _, id := range ids {
			if id.Ms < cut && kept[id.String()] {
				older++
			}
		}
		if most := trimSlack(t, b); older > most {
			t.Errorf("%d entries older than the age limit (%d) were kept, want at most %d", older, cut, most)
		}
	})
}

// trimSlack is how many entries older than the limit an approximate (~) trim may keep: none on miniredis, which trims
// exactly; on redis-server, which removes whole nodes only, fewer than one node holds.
func trimSlack(t *testing.T, b *backend) int {
	t.Helper()
	if !b.real {
		return 0
	}
	cfg, err := b.rdb.ConfigGet(ctxFor(t), "stream-node-max-entries").Result()
	if err != nil {
		t.Fatalf("CONFIG GET stream-node-max-entries: %v", err)
	}
	n, err := strconv.Atoi(cfg["stream-node-max-entries"])
	if err != nil || n <= 0 {
		t.Fatalf("CONFIG GET stream-node-max-entries = %v, want a positive number", cfg)
	}
	return n - 1
}

// TestPublishScriptValidates runs the script directly, as a client in another language would: what it refuses
// leaves no trace.
func TestPublishScriptValidates(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		cases := []struct{ name, typ, data, errHas string }{
			{"empty type", "", `{}`, "invalid event type"},
			{"upper-case type", "Progress", `{}`, "invalid event type"},
			{"type with a line break", "a\nb", `{}`, "invalid event type"},
			{"type too long", strings.Repeat("a", 65), `{}`, "invalid event type"},
			{"too large", "progress", `"` + strings.Repeat("x", 100) + `"`, "too large"},
		}
		for _, c := range cases {
			_, err := b.script(ctx, "t", b.keys.Channel("t"), c.typ, c.data, 100, 64, "")
			if err == nil || !strings.Contains(err.Error(), c.errHas) {
				t.Errorf("%s: script(type %q, data %q) = %v, want an error with %q", c.name, c.typ, c.data, err, c.errHas)
			}
		}
		if n, _ := b.rdb.Exists(ctx, b.keys.Stream("t"), b.keys.State("t")).Result(); n != 0 {
			t.Errorf("refused publishes left %d keys, want none", n)
		}
		if id, err := b.script(ctx, "t", b.keys.Channel("t"), "a.b_c-9", strings.Repeat("1", 64), 100, 64, ""); err != nil {
			t.Errorf("script(type a.b_c-9, 64 bytes with limit 64) = %s, %v; want it stored", id, err)
		}
	})
}

// TestPublishScriptRefusesWhatTheHubDrops: the script refuses data that is not one JSON value, so a client publishing
// through it does not get an id for an event the hub then drops. Redis's cjson is lenient about a few number spellings
// (nan, Infinity, 0x10, 01, 1.): those are stored, and the hub's reads never hand them to a client.
func TestPublishScriptRefusesWhatTheHubDrops(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		for _, data := range []string{`{"a":`, `1 2`, `{} x`, ``} {
			if id, err := b.script(ctx, "t", b.keys.Channel("t"), "progress", data, 100, 1024, ""); err == nil {
				t.Errorf("script(data %q) = %s, nil; want an error (json.Valid refuses it)", data, id)
			}
		}
		store := NewHistory(b.rdb, HistoryConfig{Prefix: b.keys.Prefix})
		for _, data := range []string{"nan", "-inf", "Infinity", "0x10", "01", "1."} {
			if _, err := b.script(ctx, "t", b.keys.Channel("t"), "progress", data, 100, 1024, ""); err != nil {
				continue // refused: better still
			}
			evs, _, err := store.Read(ctx, "t", hub.ID{}, 100)
			if err != nil || len(evs) != 0 {
				t.Errorf("after storing data %q, Read = %d events, %v; want none handed out", data, len(evs), err)
			}
		}
	})
}

func TestPublisherValidates(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		pub := b.publisher(PublisherConfig{MaxEventBytes: 64})
		cases := []struct {
			topic, typ, data string
			want             error
		}{
			{"", "", `{}`, hub.ErrBadTopic},
			{"a b", "", `{}`, hub.ErrBadTopic},
			{"{a}", "", `{}`, hub.ErrBadTopic},
			{"t", "BAD", `{}`, hub.ErrBadType},
			{"t", "a\r\n", `{}`, hub.ErrBadType},
			{"t", "", `{`, ErrInvalid},
			{"t", "", ``, ErrInvalid},
			{"t", "", `nan`, ErrInvalid},
			{"t", "", `"` + strings.Repeat("x", 63) + `"`, ErrTooLarge},
		}
		for _, c := range cases {
			id, err := pub.Publish(ctx, c.topic, c.typ, []byte(c.data))
			if !errors.Is(err, c.want) || id != "" {
				t.Errorf("Publish(%q, %q, %q) = %q, %v; want an error wrapping %v", c.topic, c.typ, c.data, id, err, c.want)
			}
		}
		b.leftNothing(t)
	})
}

func TestPublishBatchOrderAndErrors(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		pub := b.publisher(PublisherConfig{})
		msgs := []Message{
			{Topic: "a", Data: []byte(`{"n":1}`)},
			{Topic: "b", Type: "log", Data: []byte(`{"n":2}`)},
			{Topic: "a", Type: "BAD", Data: []byte(`{}`)},
			{Topic: "a", Data: []byte(`{"n":3}`)},
			{Topic: "a b", Data: []byte(`{}`)},
			{Topic: "a", Data: []byte(`{"n":4`)},
		}
		ids, errs := pub.PublishBatch(ctx, msgs)
		for i, wantErr := range []error{nil, nil, hub.ErrBadType, nil, hub.ErrBadTopic, ErrInvalid} {
			if wantErr == nil && (errs[i] != nil || ids[i] == "") || wantErr != nil && (!errors.Is(errs[i], wantErr) || ids[i] != "") {
				t.Errorf("PublishBatch message %d: id %q, err %v; want err %v", i, ids[i], errs[i], wantErr)
			}
		}
		if got, want := b.streamIDs(t, "a"), []string{ids[0], ids[3]}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("stream a = %v, want %v in the order given", got, want)
		}
		if got := b.streamIDs(t, "b"); len(got) != 1 || got[0] != ids[1] {
			t.Errorf("stream b = %v, want [%s]", got, ids[1])
		}
	})
}

// TestPublishBatchAfterScriptFlush: a script cache emptied (as by a Redis restart) answers NOSCRIPT; the batch loads
// the script and stores every event exactly once.
func TestPublishBatchAfterScriptFlush(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		pub := b.publisher(PublisherConfig{})
		b.publish(t, "t", "", `{"n":0}`) // the script is cached now
		if err := b.rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatalf("SCRIPT FLUSH: %v", err)
		}
		ids := publishBatch(t, ctx, pub, messages("t", `{"batch":%d}`, 5))
		got := b.streamIDs(t, "t")
		if len(got) != 6 || fmt.Sprint(got[1:]) != fmt.Sprint(ids) {
			t.Errorf("stream after SCRIPT FLUSH and a batch of 5 = %v, want the first event then %v, each once", got, ids)
		}
		if ok, _ := b.rdb.ScriptExists(ctx, publishScript.Hash()).Result(); len(ok) != 1 || !ok[0] {
			t.Errorf("SCRIPT EXISTS after the batch = %v, want the script loaded", ok)
		}
	})
}

func TestPublishFailsClearlyWhenRedisIsDown(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	pub := NewPublisher(c, PublisherConfig{})
	if _, err := pub.Publish(ctxFor(t), "t", "", []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "publish to t") {
		t.Errorf("Publish with Redis down = %v, want an error naming the topic", err)
	}
	_, errs := pub.PublishBatch(ctxFor(t), []Message{{Topic: "t", Data: []byte(`{}`)}})
	if errs[0] == nil {
		t.Errorf("PublishBatch with Redis down: no error")
	}
}
