package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
)

// In a terminal, hub watch draws a table of the topic's workflows with progress bars, redraws it in place as
// events come, and after a restart whose history was trimmed meanwhile it handles the hub's reset by reloading
// the snapshot: a workflow whose only event was trimmed appears. Cancelling it (Ctrl-C) ends it cleanly.
func TestWatchTableInPTY(t *testing.T) {
	h := hubtest.Start(t, rig.StartRedis(t), "HUB_SSE_RETRY=300ms")
	const topic = "watch.tty"
	h.Publish(topic, "progress", `{"workflow":"wf-a","title":"Reindex search","step":"shard 2","progress":0.4,"status":"running","eta_s":120}`)
	h.Publish(topic, "progress", `{"workflow":"wf-b","title":"Nightly build","step":"tests","progress":0.8,"status":"failed"}`)
	term := newPTY(t, 110, 30)
	w := hubtest.StartCmd(t, term.TTY, nil, "watch", "--topic", topic, "--history", "2", "--url", h.URL)

	lines := term.waitFrame(t, 10*time.Second, "both workflows from the snapshot", func(l []string) bool {
		return hasBar(tableRow(l, "Reindex search"), 40) && hasBar(tableRow(l, "Nightly build"), 80)
	})
	if !strings.Contains(lines[0], "live") || !strings.Contains(lines[0], "1 failed") || !strings.Contains(lines[1], "PROGRESS") {
		t.Errorf("status line and headings = %q, %q; want live, 1 failed, the PROGRESS column", lines[0], lines[1])
	}
	if !strings.Contains(lines[2], "Nightly build") || !strings.Contains(tableRow(lines, "Reindex search"), "shard 2") {
		t.Errorf("rows = %q; want the failed workflow first and the running one with its step", lines[2:4])
	}
	if !strings.Contains(strings.Join(lines, "\n"), "progress wf-a shard 2 · 40% · running") {
		t.Errorf("--history 2 did not fill the latest events:\n%s", strings.Join(lines, "\n"))
	}
	if raw, _ := term.lastFrame(); !strings.Contains(raw, "\x1b[1m\x1b[31mfailed") {
		t.Errorf("the failed status is not drawn in bold red: %q", raw)
	}

	h.Publish(topic, "progress", `{"workflow":"wf-a","step":"shard 3","progress":0.6}`)
	term.waitFrame(t, 5*time.Second, "the live event", func(l []string) bool {
		return hasBar(tableRow(l, "Reindex search"), 60) && strings.Contains(tableRow(l, "Reindex search"), "shard 3")
	})
	if !regexp.MustCompile(`\r\x1b\[\d+A`).MatchString(term.out.String()) {
		t.Error("the table was not redrawn in place (no cursor-up sequence)")
	}

	// While the watch is away, a workflow publishes once and the history is trimmed past it: only the snapshot has it.
	if err := h.Stop(); err != nil {
		t.Fatalf("stop hub: %v", err)
	}
	h.Publish(topic, "progress", `{"workflow":"wf-c","title":"Only in the snapshot","progress":0.3,"status":"running"}`)
	for i := 4; i <= 9; i++ {
		h.Publish(topic, "progress", fmt.Sprintf(`{"workflow":"wf-a","title":"Reindex search","step":"shard %d","progress":0.%d}`, i, i))
	}
	if err := h.RDB.XTrimMaxLen(context.Background(), h.StreamKey(topic), 3).Err(); err != nil {
		t.Fatalf("XTRIM %s MAXLEN 3: %v", h.StreamKey(topic), err)
	}
	h.Start(h.Addr)
	lines = term.waitFrame(t, 20*time.Second, "the reloaded snapshot after the reset", func(l []string) bool {
		return hasBar(tableRow(l, "Only in the snapshot"), 30) && strings.Contains(tableRow(l, "Reindex search"), "shard 9") &&
			hasBar(tableRow(l, "Reindex search"), 90) &&
			strings.Contains(l[0], "live") && strings.Contains(l[0], "1 resets")
	})
	if !strings.Contains(strings.Join(lines, "\n"), "reset history-truncated") {
		t.Errorf("the latest events do not tell of the reset:\n%s", strings.Join(lines, "\n"))
	}

	if err := w.Stop(t); err != nil {
		t.Errorf("hub watch after its context ended = %v, want nil (exit 0)", err)
	}
	rig.Eventually(t, 5*time.Second, "the cursor given back at the end", func() bool {
		return strings.HasSuffix(term.out.String(), "\x1b[?25h")
	})
}

// The hub's own stalled verdict (a health event) marks the row stalled, in bold yellow, until the workflow moves.
func TestWatchStalledVerdictInPTY(t *testing.T) {
	h := hubtest.Start(t, rig.StartRedis(t), "HUB_WORKFLOWS_STALL_AFTER=1s", "HUB_WORKFLOWS_SWEEP=100ms")
	const topic = "watch.stall"
	term := newPTY(t, 100, 20)
	hubtest.StartCmd(t, term.TTY, nil, "watch", "--topic", topic, "--url", h.URL)
	term.waitFrame(t, 10*time.Second, "the empty table", func(l []string) bool { return strings.Contains(l[0], "live") })
	h.Publish(topic, "progress", `{"workflow":"wf-q","title":"Quiet job","step":"waiting for disk","progress":0.2,"status":"running"}`)
	lines := term.waitFrame(t, 15*time.Second, "the hub's stalled verdict", func(l []string) bool {
		return strings.Contains(tableRow(l, "Quiet job"), " stalled ") && strings.Contains(l[0], "1 stalled")
	})
	if raw, _ := term.lastFrame(); !strings.Contains(raw, "\x1b[1m\x1b[33mstalled") {
		t.Errorf("the stalled status is not drawn in bold yellow: %q", raw)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "health wf-q hub verdict: stalled") {
		t.Errorf("the latest events do not show the verdict:\n%s", strings.Join(lines, "\n"))
	}
	h.Publish(topic, "progress", `{"workflow":"wf-q","title":"Quiet job","step":"writing","progress":0.3,"status":"running"}`)
	term.waitFrame(t, 10*time.Second, "the workflow moving again", func(l []string) bool {
		return strings.Contains(tableRow(l, "Quiet job"), " running ") && strings.Contains(tableRow(l, "Quiet job"), "writing")
	})
}

// NO_COLOR turns every colour off; the table is still drawn in place.
func TestWatchNoColor(t *testing.T) {
	h := hubtest.Start(t, rig.StartRedis(t))
	h.Publish("watch.nc", "progress", `{"workflow":"wf-1","progress":0.5,"status":"failed"}`)
	term := newPTY(t, 80, 20)
	hubtest.StartCmd(t, term.TTY, []string{"NO_COLOR=1"}, "watch", "--topic", "watch.nc", "--url", h.URL)
	term.waitFrame(t, 10*time.Second, "the failed workflow", func(l []string) bool { return hasBar(tableRow(l, "wf-1"), 50) })
	if raw, _ := term.lastFrame(); regexp.MustCompile(`\x1b\[[0-9;]*m`).MatchString(raw) {
		t.Errorf("with NO_COLOR the frame still has colour sequences: %q", raw)
	}
}

// Off a terminal hub watch prints one line per event: the --history ones first, then live ones, and across a hub
// restart it resumes from the last event it printed, so an event published meanwhile is printed exactly once.
func TestWatchPlainLines(t *testing.T) {
	h := hubtest.Start(t, rig.StartRedis(t), "HUB_SSE_RETRY=300ms")
	const topic = "watch.plain"
	h.Publish(topic, "progress", `{"workflow":"wf-0","step":"old","progress":0.1}`)
	h.Publish(topic, "progress", `{"workflow":"wf-1","step":"compile","progress":0.4,"status":"running"}`)
	h.Publish(topic, "log", `{"workflow":"wf-1","message":"compiled 12 packages"}`)
	var out rig.SyncBuffer
	w := hubtest.StartCmd(t, &out, nil, "watch", "--topic", topic, "--history", "2", "--url", h.URL)
	wantLine := regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{3} ` + regexp.QuoteMeta(topic) + ` `)
	waitLines := func(n int) []string {
		t.Helper()
		rig.Eventually(t, 10*time.Second, fmt.Sprintf("%d lines from hub watch", n), func() bool { return len(out.Lines()) >= n })
		return out.Lines()
	}
	lines := waitLines(2)
	want := []string{"progress wf-1 compile · 40% · running", "log wf-1 compiled 12 packages"}
	for i, l := range lines[:2] {
		if !wantLine.MatchString(l) || !strings.HasSuffix(l, want[i]) {
			t.Errorf("line %d = %q, want <time> %s %s", i, l, topic, want[i])
		}
	}
	h.Publish(topic, "progress", `{"workflow":"wf-1","step":"link","progress":0.9,"status":"failed"}`)
	if l := waitLines(3)[2]; !strings.HasSuffix(l, "progress wf-1 link · 90% · failed") || strings.Contains(l, "\x1b") {
		t.Errorf("live line = %q, want the failed event without colour (not a terminal)", l)
	}

	if err := h.Stop(); err != nil {
		t.Fatalf("stop hub: %v", err)
	}
	h.Publish(topic, "progress", `{"workflow":"wf-2","step":"while away"}`)
	h.Start(h.Addr)
	h.Publish(topic, "progress", `{"workflow":"wf-2","step":"after the restart"}`)
	lines = waitLines(5)
	if !strings.HasSuffix(lines[3], "wf-2 while away") || !strings.HasSuffix(lines[4], "wf-2 after the restart") {
		t.Errorf("lines after the restart = %q, want the event published meanwhile, then the live one", lines[3:])
	}
	if err := w.Stop(t); err != nil {
		t.Errorf("hub watch = %v, want nil", err)
	}
	if n := len(out.Lines()); n != 5 {
		t.Errorf("hub watch printed %d lines, want 5 (each event once):\n%s", n, out.String())
	}
	if notes := w.Stderr(); !strings.Contains(notes, "hub watch: ") || !strings.Contains(notes, "live again") {
		t.Errorf("stderr = %q, want the reconnect told and the recovery", notes)
	}
}

// --json passes each event through as one JSON line with its topic and id, even on a terminal.
func TestWatchJSON(t *testing.T) {
	h := hubtest.Start(t, rig.StartRedis(t))
	ids := []string{h.Publish("watch.json", "progress", `{"workflow":"w","progress":0.5}`)}
	term := newPTY(t, 80, 20)
	w := hubtest.StartCmd(t, term.TTY, nil, "watch", "--topic", "watch.json", "--topic", "watch.json2", "--history", "1", "--json", "--url", h.URL)
	// The replayed event says the stream is open; the next two are live.
	rig.Eventually(t, 10*time.Second, "the replayed event as JSON", func() bool { return strings.Contains(term.out.String(), ids[0]) })
	ids = append(ids, h.Publish("watch.json2", "log", `{"message":"two"}`), h.Publish("watch.json", "progress", `"three"`))
	// Two streams can hand out the same id in one millisecond: wait for the third event by its topic and id.
	third := `"topic":"watch.json","id":"` + ids[2] + `"`
	rig.Eventually(t, 10*time.Second, "three events as JSON lines", func() bool { return strings.Contains(term.out.String(), third) })
	if err := w.Stop(t); err != nil {
		t.Errorf("hub watch --json = %v, want nil", err)
	}
	got := jsonLines(t, "hub watch --json", strings.ReplaceAll(term.out.String(), "\r", ""))
	wants := []struct{ topic, id, typ, data string }{
		{"watch.json", ids[0], "progress", `{"progress":0.5,"workflow":"w"}`},
		{"watch.json2", ids[1], "log", `{"message":"two"}`},
		{"watch.json", ids[2], "progress", `"three"`},
	}
	if len(got) != len(wants) {
		t.Fatalf("hub watch --json printed %d lines, want %d:\n%s", len(got), len(wants), term.out.String())
	}
	for i, want := range wants {
		data, _ := json.Marshal(got[i]["data"])
		if got[i]["topic"] != want.topic || got[i]["id"] != want.id || got[i]["type"] != want.typ || string(data) != want.data {
			t.Errorf("JSON line %d = %v, want topic %s id %s type %s data %s", i, got[i], want.topic, want.id, want.typ, want.data)
		}
	}
}

// hub topics and hub history: JSON when stdout is no terminal, a table on one.
func TestTopicsAndHistory(t *testing.T) {
	h := hubtest.Start(t, rig.StartRedis(t))
	var ids []string
	for i := range 3 {
		ids = append(ids, h.Publish("hist.a", "progress", fmt.Sprintf(`{"workflow":"wf-%d","step":"s%d","progress":0.%d}`, i, i, i+1)))
	}
	h.Publish("hist.b", "log", `{"message":"hello"}`)
	runTo := func(stdout io.Writer, args ...string) {
		t.Helper()
		if stderr, err := hubtest.RunCmd(t, stdout, nil, args...); err != nil {
			t.Fatalf("hub %v = %v; stderr %s", args, err, stderr)
		}
	}
	var out rig.SyncBuffer
	runTo(&out, "topics", "--url", h.URL)
	var list struct {
		Topics []struct {
			Name   string `json:"name"`
			Length int    `json:"length"`
			LastID string `json:"last_id"`
		} `json:"topics"`
	}
	if err := json.Unmarshal([]byte(out.String()), &list); err != nil || len(list.Topics) != 2 {
		t.Fatalf("hub topics (not a terminal) = %q, %v; want JSON with two topics", out.String(), err)
	}
	for _, tp := range list.Topics {
		if tp.Name == "hist.a" && (tp.Length != 3 || tp.LastID != ids[2]) {
			t.Errorf("hist.a listed as %+v, want length 3, last id %s", tp, ids[2])
		}
	}

	term := newPTY(t, 100, 20)
	runTo(term.TTY, "topics", "--url", h.URL)
	rowA := regexp.MustCompile(`hist\.a\s+3\s+` + ids[2] + `\s+\S+ ago`)
	// The terminal gets the table in pieces: wait for both rows, in whatever order they arrive.
	rig.Eventually(t, 5*time.Second, "the topics table", func() bool {
		text := term.out.String()
		return strings.Contains(text, "hist.b") && rowA.MatchString(text)
	})
	text := term.out.String()
	if !regexp.MustCompile(`TOPIC\s+EVENTS\s+LAST ID\s+LAST ACTIVITY`).MatchString(text) || !rowA.MatchString(text) {
		t.Errorf("hub topics on a terminal =\n%s\nwant a table with hist.a, 3 events, its last id and age", text)
	}

	out = rig.SyncBuffer{}
	runTo(&out, "history", "--topic", "hist.a", "--limit", "2", "--url", h.URL)
	var page struct {
		Events []struct{ ID, Type string } `json:"events"`
		More   bool                        `json:"more"`
		Next   string                      `json:"next"`
	}
	if err := json.Unmarshal([]byte(out.String()), &page); err != nil || len(page.Events) != 2 || page.Events[0].ID != ids[0] ||
		!page.More || page.Next != ids[1] {
		t.Fatalf("hub history --limit 2 (not a terminal) = %q, %v; want the first two events, more, next %s", out.String(), err, ids[1])
	}

	term = newPTY(t, 120, 20)
	runTo(term.TTY, "history", "--topic", "hist.a", "--after", ids[0], "--url", h.URL)
	rig.Eventually(t, 5*time.Second, "the history table", func() bool { return strings.Contains(term.out.String(), ids[2]) })
	text = term.out.String()
	if !regexp.MustCompile(`ID\s+TIME\s+TYPE\s+WORKFLOW\s+SUMMARY`).MatchString(text) ||
		!regexp.MustCompile(ids[1]+`\s+\d{4}-\d\d-\d\d \S+\s+progress\s+wf-1\s+s1 · 20%`).MatchString(text) || strings.Contains(text, ids[0]) {
		t.Errorf("hub history --after on a terminal =\n%s\nwant the events after %s as a table", text, ids[0])
	}
}

// With auth on, the watch commands send the token from --token-file or from the variable --token-env names; without
// one the hub's refusal ends them at once with its message.
func TestWatchToken(t *testing.T) {
	const secret = "watch-test-secret-0123456789abcdef"
	h := hubtest.Start(t, rig.StartRedis(t), "HUB_AUTH_HMAC_SECRET="+secret)
	tok, err := auth.Sign([]byte(secret), auth.Grant{Subscribe: []string{"sec.*"}}, auth.Claims{Subject: "watch", TTL: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.Publish("sec.one", "progress", `{"workflow":"w","step":"kept"}`)

	if _, err := hubtest.RunCmd(t, io.Discard, nil, "topics", "--url", h.URL); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("hub topics without a token = %v, want the 401", err)
	}
	if _, err := hubtest.RunCmd(t, io.Discard, nil, "watch", "--topic", "sec.one", "--url", h.URL); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("hub watch without a token = %v, want the 401 at once", err)
	}

	var out rig.SyncBuffer
	w := hubtest.StartCmd(t, &out, nil, "watch", "--topic", "sec.one", "--history", "1", "--token-file", file, "--url", h.URL)
	rig.Eventually(t, 10*time.Second, "the event through --token-file", func() bool { return strings.Contains(out.String(), "w kept") })
	if err := w.Stop(t); err != nil {
		t.Errorf("hub watch --token-file = %v", err)
	}

	out = rig.SyncBuffer{}
	stderr, err := hubtest.RunCmd(t, &out, []string{"MY_HUB_TOKEN=" + tok}, "history", "--topic", "sec.one", "--token-env", "MY_HUB_TOKEN", "--url", h.URL)
	if err != nil || !strings.Contains(out.String(), `"step":"kept"`) {
		t.Errorf("hub history --token-env = %v (stderr %s), printed %q", err, stderr, out.String())
	}
}
