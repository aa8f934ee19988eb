package chaos

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/hub"
)

// TestCheck runs the verdict on small histories of ids 1..10, where a reset names the oldest event it skips to.
func TestCheck(t *testing.T) {
	id := func(n uint64) hub.ID { return hub.ID{Ms: n} }
	ev := func(ns ...uint64) []Got {
		var out []Got
		for _, n := range ns {
			out = append(out, Got{ID: id(n)})
		}
		return out
	}
	reset := func(oldest uint64) []Got { return []Got{{ID: id(oldest), Reset: true, Reason: "history-truncated"}} }
	cat := func(parts ...[]Got) []Got {
		var out []Got
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	var truth []hub.ID
	for n := uint64(1); n <= 10; n++ {
		truth = append(truth, id(n))
	}
	for _, c := range []struct {
		name  string
		after uint64
		got   []Got
		want  Tally
	}{
		{"everything once", 0, ev(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), Tally{Expected: 10, Delivered: 10}},
		{"silent skip", 0, ev(1, 2, 3, 8, 9, 10), Tally{Expected: 10, Delivered: 6, Lost: 4}},
		{"reset to the next event received excuses the skip", 0, cat(ev(1, 2, 3), reset(8), ev(8, 9, 10)),
			Tally{Expected: 10, Delivered: 6, Excused: 4, Resets: 1}},
		{"reset does not excuse ids at or after its oldest", 0, cat(ev(1, 2, 3), reset(4), ev(8, 9, 10)),
			Tally{Expected: 10, Delivered: 6, Lost: 4, Resets: 1}},
		{"reset excuses below its oldest only", 0, cat(ev(1, 2, 3), reset(6), ev(8, 9, 10)),
			Tally{Expected: 10, Delivered: 6, Lost: 2, Excused: 2, Resets: 1}},
		{"reset without an oldest excuses the skip up to the next event", 0, cat(ev(1, 2, 3), []Got{{Reset: true}}, ev(8, 9, 10)),
			Tally{Expected: 10, Delivered: 6, Excused: 4, Resets: 1}},
		{"last reset excuses below its oldest", 0, cat(ev(1, 2, 3), reset(6)),
			Tally{Expected: 10, Delivered: 3, Lost: 5, Excused: 2, Resets: 1}},
		{"a reset long before the gap excuses nothing", 0, cat(reset(1), ev(1, 2, 3, 8, 9, 10)),
			Tally{Expected: 10, Delivered: 6, Lost: 4, Resets: 1}},
		{"from a position", 5, ev(6, 7, 8, 9, 10), Tally{Expected: 5, Delivered: 5}},
		{"duplicate, reordered, unknown", 0, cat(ev(1, 2, 3, 3, 5, 4, 6, 7, 8, 9, 10, 11)),
			Tally{Expected: 10, Delivered: 11, Duplicated: 1, Reordered: 1, Unknown: 1}},
	} {
		if got := Check(truth, id(c.after), c.got); got != c.want {
			t.Errorf("%s: Check(1..10, after %d, %v) =\n  %v\nwant\n  %v", c.name, c.after, c.got, got, c.want)
		}
	}
}

// A scenario that never compared delivery with the streams (no Fill) shows "-" in the delivery columns, not zeros
// that read as "nothing lost".
func TestReportLeavesUncheckedDeliveryBlank(t *testing.T) {
	var r Report
	r.Add(Row{Scenario: "09 churn", Published: 300, Note: "cycles"})
	r.Add(Row{Scenario: "01 checked", Published: 10}.Fill(Tally{Delivered: 10}))
	var b strings.Builder
	r.Markdown(&b)
	for _, want := range []string{"| 09 churn | 300 | - | - | - | - | - | 0 | - | cycles |", "| 01 checked | 10 | 10 | 0 | 0 | 0 | 0 | 0 | - |  |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("Report.Markdown =\n%s\nwant a line %q", b.String(), want)
		}
	}
}

// The client counts what the hub never sends instead of dropping it, and the fleet's verdict is then not clean.
func TestClientCountsMalformedFrames(t *testing.T) {
	body := "retry: 200\n\n" +
		"id: 1-0\nevent: progress\ndata: {}\n\n" + // good
		"id: 2-0\ndata: {}\n\n" + // an id without event:
		"data: {}\n\n" + // data without event:
		"id: 3-x\nevent: progress\ndata: {}\n\n" + // an id that does not parse
		"event: reset\ndata: {nope\n\n" + // a reset that is not JSON
		":heartbeat\n\n" +
		"event: progress\ndata: {\"ephemeral\":true}\n\n" // no id: ephemeral, fine
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	c := NewClient(ClientConfig{URLs: []string{srv.URL}, Topics: []string{"t"}, MaxConnects: 1})
	c.Run(context.Background())
	defer c.Stop()
	if err := poll(5*time.Second, func() (bool, string) {
		st := c.Stats()
		return st.Connects == 1 && !st.Connected, fmt.Sprintf("%+v", st)
	}); err != nil {
		t.Fatalf("the stream did not end: %v", err)
	}
	if got := c.Stats().Malformed; got != 4 {
		t.Errorf("Malformed = %d, want 4 (id without event, data without event, bad id, bad reset)", got)
	}
	tally, bad := (&Fleet{Clients: []*Client{c}}).Check(map[string][]hub.ID{"t": {{Ms: 1}}}, hub.ID{})
	if tally.Clean() || tally.Malformed != 4 || len(bad) == 0 {
		t.Errorf("Fleet.Check = %v, %q; want not clean, with 4 malformed frames named", tally, bad)
	}
}
