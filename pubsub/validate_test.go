package pubsub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/rig"
)

func nested(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }

// TestPublishRefusesReservedTypes: reset, auth-expired, presence and health are the hub's own; the Publisher refuses them as a
// bad type and so does the script, whose reply reads as the same validation error. (Before: both stored them.)
func TestPublishRefusesReservedTypes(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		pub := b.publisher(PublisherConfig{})
		for _, typ := range ReservedTypes {
			if id, err := pub.Publish(ctx, "t", typ, []byte(`{}`)); !errors.Is(err, hub.ErrBadType) || !strings.Contains(fmt.Sprint(err), "the hub's own") {
				t.Errorf("Publish(type %s) = %q, %v; want an error wrapping hub.ErrBadType from the Publisher's own check", typ, id, err)
			}
			_, err := b.script(ctx, "t", b.keys.Channel("t"), typ, `{}`, 100, 1024, "")
			if !errors.Is(refusal(err), hub.ErrBadType) || !strings.Contains(fmt.Sprint(err), "reserved event type") {
				t.Errorf("script(type %s) = %v; want the error reply 'reserved event type'", typ, err)
			}
		}
		b.leftNothing(t)
	})
}

// TestPublishRefusesJSONTheScriptRefuses: JSON that encoding/json accepts but Redis's cjson does not (nesting deeper
// than 1000, a lone UTF-16 surrogate) is refused by the Publisher as invalid, not sent to fail as an outage;
// what cjson accepts at the edge of those rules is stored. (Before: the Publisher sent it and reported the script's
// error as a failure, which POST /publish answered 503.)
func TestPublishRefusesJSONTheScriptRefuses(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		pub := b.publisher(PublisherConfig{MaxEventBytes: 1 << 20})
		deepObject := strings.Repeat(`{"a":`, 1001) + "1" + strings.Repeat("}", 1001)
		for _, data := range []string{nested(1001), deepObject, `"\ud800"`, `"\udc00"`, `"\ud800\u0041"`, `"\ud800\ud800"`, `{"k":["\uDBFF"]}`} {
			if !json.Valid([]byte(data)) {
				t.Fatalf("test data %.40q is not valid for encoding/json", data)
			}
			id, err := pub.Publish(ctx, "t", "", []byte(data))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(fmt.Sprint(err), "surrogate") && !strings.Contains(fmt.Sprint(err), "nests") {
				t.Errorf("Publish(%.40q) = %q, %v; want an error wrapping ErrInvalid, from the Publisher's own check", data, id, err)
			}
			if b.real {
				_, err := b.script(ctx, "t", b.keys.Channel("t"), "progress", data, 100, 1<<20, "")
				if !errors.Is(refusal(err), ErrInvalid) {
					t.Errorf("script(%.40q) = %v; want the refusal 'data is not valid JSON' (cjson agrees)", data, err)
				}
			}
		}
		for _, data := range []string{nested(1000), `"\ud800\udc00"`, `"\uDBFF\uDFFF x \\ud800"`, `"\\\"\ud83d\ude00"`} {
			if id, err := pub.Publish(ctx, "t", "", []byte(data)); err != nil {
				t.Errorf("Publish(%.40q) = %q, %v; want it stored", data, id, err)
			}
		}
	})
}

// TestScriptRefusalsAreValidationErrors: each validation reply of the script, as a real server sends it, reads as
// the validation error a publisher answers 400 or 413 for; other errors do not.
func TestScriptRefusalsAreValidationErrors(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		cases := []struct {
			typ, data string
			want      error
		}{
			{"BAD", `{}`, hub.ErrBadType},
			{"reset", `{}`, hub.ErrBadType},
			{"progress", `"` + strings.Repeat("x", 100) + `"`, ErrTooLarge},
			{"progress", `{`, ErrInvalid},
		}
		for _, c := range cases {
			_, err := b.script(ctx, "t", b.keys.Channel("t"), c.typ, c.data, 100, 64, "")
			if got := refusal(err); !errors.Is(got, c.want) {
				t.Errorf("refusal(script(%q, %.20q) = %v) = %v; want an error wrapping %v", c.typ, c.data, err, got, c.want)
			}
		}
		err := b.rdb.Do(ctx, "XADD", b.keys.Stream("t"), "0-0", "a", "b").Err() // an error reply that is no refusal
		if err == nil || refusal(err) != nil {
			t.Errorf("refusal(%v) = %v; want nil", err, refusal(err))
		}
	})
}

// TestStoredControlEventsAreNeverDelivered: a reset or auth-expired that reached the stream or the channel some
// other way than a publisher is dropped and counted, live and on replay, and the topic goes on after it.
func TestStoredControlEventsAreNeverDelivered(t *testing.T) {
	forBackends(t, func(t *testing.T, ctx context.Context, b *backend) {
		s, a := followFirst(t, b, SubscriberConfig{})
		aID := mustID(t, a)
		live := fmt.Sprintf("%d-%d", aID.Ms, aID.Seq+1) // chained to a: delivered at once unless refused
		b.rdb.Publish(ctx, b.keys.Channel("t"), fmt.Sprintf(`{"id":%q,"prev":%q,"type":"reset","data":{}}`, live, a))
		r := b.xadd(t, "t", "p", a, "t", "reset", "d", `{"topic":"t","reason":"history-lost"}`)
		x := b.xadd(t, "t", "p", r, "t", "auth-expired", "d", `{}`)
		b.rdb.Publish(ctx, b.keys.Channel("t"), fmt.Sprintf(`{"id":%q,"prev":%q,"type":"auth-expired","data":{}}`, x, r))
		c := b.publish(t, "t", "", `{"n":"c"}`)
		rig.Eventually(t, within, "the event after the forged ones", func() bool { return slices.Contains(describe(s.rec.got()), c) })
		if got := describe(s.rec.got()); !slices.Equal(got, []string{a, c}) {
			t.Errorf("delivered %q, want %q (stored control events dropped)", got, []string{a, c})
		}
		if v := metricOf(t, s.reg, "hub_events_dropped_total", "reason="+dropReserved); v < 2 {
			t.Errorf("hub_events_dropped_total{reason=%s} = %v, want ≥ 2", dropReserved, v)
		}
		evs, _, err := b.store().Read(ctx, "t", hub.ID{}, 100)
		if err != nil || !slices.Equal(idsOf(evs), []string{a, c}) {
			t.Errorf("Read(t) = %q, %v; want %q", idsOf(evs), err, []string{a, c})
		}
	})
}

func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{}`, `"\ud800"`, `"\ud800\udc00"`, `"\\ud800"`, `"\\\ud800"`, nested(3), `[{"a":"\udfff"}]`, `"\u00e9"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := checkJSON(data)
		if err == nil && !json.Valid(data) {
			t.Fatalf("checkJSON(%q) accepted what json.Valid refuses", data)
		}
		if json.Valid(data) && err != nil && !strings.Contains(err.Error(), "surrogate") && !strings.Contains(err.Error(), "nests") {
			t.Fatalf("checkJSON(%q) = %v for valid JSON, want only the cjson rules", data, err)
		}
	})
}
