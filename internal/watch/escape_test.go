package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/creack/pty"
)

// hostile is event data a publisher may send: a C1 CSI that clears the screen, a C1 OSC that sets the window title,
// DEL, and a right-to-left override that makes "exe.txt" read as "txt.exe".
const hostile = "{\"msg\":\"\u009b2J\u009d0;owned\\u0007 x\u007f \u202etxt.exe\u202c \u2066iso\u2069\"}"

var hiddenRunes = []rune{0x9b, 0x9d, 0x7f, 0x202e, 0x202c, 0x2066, 0x2069}

func showsHidden(s string) []rune {
	var found []rune
	for _, r := range hiddenRunes {
		if strings.ContainsRune(s, r) {
			found = append(found, r)
		}
	}
	return found
}

// On a terminal, `hub history --json` writes the hub's JSON with the characters a terminal acts on or reorders by
// escaped as \uXXXX; it still decodes to the same data. Piped, it passes the hub's bytes through unchanged.
func TestHistoryJSONOnATerminalEscapesHiddenCharacters(t *testing.T) {
	page := `{"events":[{"id":"1-0","type":"log","data":` + hostile + `}],"next":"1-0","more":false}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, page)
	}))
	t.Cleanup(srv.Close)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	var shown bytes.Buffer
	read := make(chan struct{})
	go func() { _, _ = io.Copy(&shown, ptmx); close(read) }()
	getenv := func(k string) string { return map[string]string{"TERM": "xterm"}[k] }
	err = History(context.Background(), flag.NewFlagSet("history", flag.ContinueOnError),
		[]string{"--url", srv.URL, "--topic", "t", "--json"}, Env{Stdout: tty, Stderr: io.Discard, Getenv: getenv})
	tty.Close()
	<-read
	if err != nil {
		t.Fatalf("hub history --json: %v", err)
	}
	out := strings.TrimSpace(strings.ReplaceAll(shown.String(), "\r\n", "\n"))
	if found := showsHidden(out); len(found) > 0 {
		t.Errorf("hub history --json on a terminal printed the raw characters %U: %q", found, out)
	}
	var got struct {
		Events []struct{ Data json.RawMessage }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Events) != 1 {
		t.Fatalf("the escaped output %q does not decode: %v", out, err)
	}
	var a, b any
	_ = json.Unmarshal(got.Events[0].Data, &a)
	_ = json.Unmarshal([]byte(hostile), &b)
	if aj, bj := mustJSON(t, a), mustJSON(t, b); aj != bj {
		t.Errorf("escaped data decodes to %s, want %s", aj, bj)
	}

	var piped bytes.Buffer
	if err := History(context.Background(), flag.NewFlagSet("history", flag.ContinueOnError),
		[]string{"--url", srv.URL, "--topic", "t", "--json"}, Env{Stdout: &piped, Stderr: io.Discard, Getenv: getenv}); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(piped.String()) != page {
		t.Errorf("piped, hub history --json = %q, want the hub's bytes %q", piped.String(), page)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The watch sinks: JSON on a terminal escapes the hidden characters, the line and table text replaces them (the
// bidi overrides too, which are not control characters).
func TestWatchSinksHideTerminalCharacters(t *testing.T) {
	e := ev("proj", 1, "log", hostile)
	var out bytes.Buffer
	(&JSON{W: &out, Notes: io.Discard, Terminal: true}).Event(e)
	if found := showsHidden(out.String()); len(found) > 0 || !json.Valid(bytes.TrimSpace(out.Bytes())) {
		t.Errorf("JSON sink on a terminal wrote %U raw (valid JSON: %v): %q", found, json.Valid(bytes.TrimSpace(out.Bytes())), out.String())
	}
	out.Reset()
	(&Lines{W: &out}).Event(e)
	if found := showsHidden(out.String()); len(found) > 0 {
		t.Errorf("Lines wrote %U raw: %q", found, out.String())
	}
	if s := compact([]byte(hostile)); len(showsHidden(s)) > 0 {
		t.Errorf("compact (the table's data cell) kept %U: %q", showsHidden(s), s)
	}
}

// escapeJSONForTerminal keeps any JSON text valid and equal in value, and leaves nothing hidden behind.
func FuzzEscapeJSONForTerminal(f *testing.F) {
	f.Add([]byte(hostile))
	f.Add([]byte(`{"a":"plain"}`))
	f.Add([]byte("\"\xff\u009b\""))
	f.Fuzz(func(t *testing.T, b []byte) {
		out := escapeJSONForTerminal(b)
		for _, r := range string(out) {
			if hiddenOnTerminal(r) {
				t.Fatalf("escapeJSONForTerminal(%q) = %q keeps %U", b, out, r)
			}
		}
		if !json.Valid(b) || !utf8.Valid(b) {
			return
		}
		var x, y any
		if json.Unmarshal(b, &x) != nil || json.Unmarshal(out, &y) != nil {
			t.Fatalf("escapeJSONForTerminal(%q) = %q, no longer JSON", b, out)
		}
		if mustJSON(t, x) != mustJSON(t, y) {
			t.Fatalf("escapeJSONForTerminal(%q) = %q changes the value", b, out)
		}
	})
}
