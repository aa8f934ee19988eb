package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/syncverse/hub/internal/redistest"
)

// hub publish holds data to docs/schemas as POST /publish does: strict refuses a typo with exit 1 naming the
// field and stores nothing; warn says so on stderr and publishes; off says nothing. A type without a schema and
// good data pass every mode.
func TestCLIPublishValidation(t *testing.T) {
	rs := redistest.Start(t)
	prefix := redistest.Prefix(t)
	stream := prefix + ":{t}:events"
	xlen := func() int64 {
		t.Helper()
		n, err := rs.Client().XLen(context.Background(), stream).Result()
		if err != nil {
			t.Fatalf("XLEN %s: %v", stream, err)
		}
		return n
	}
	publish := func(mode, typ, data string) (int, string, string) {
		env := map[string]string{"HUB_REDIS_URL": rs.URL(), "HUB_REDIS_PREFIX": prefix, "HUB_EVENTS_VALIDATION": mode}
		return hubCLI(t, env, "publish", "--topic", "t", "--type", typ, "--data", data)
	}
	const typo = `{"workflow":"wf-1","progress":40}`
	code, stdout, stderr := publish("strict", "progress", typo)
	if want := "hub: progress data does not match docs/schemas/progress.json: progress: 40 is not between 0 and 1\n"; code != 1 || stdout != "" || stderr != want {
		t.Errorf("strict: hub publish %s: exit %d, stdout %q, stderr %q; want 1, nothing, %q", typo, code, stdout, stderr, want)
	}
	code, _, stderr = publish("strict", "lock", `{"key":"db","holder":"a","fence":1,"state":"taken","ttl_ms":5}`)
	if code != 1 || !strings.Contains(stderr, `state: "taken" is not one of acquired, renewed, released, lost, expired`) {
		t.Errorf("strict: hub publish of a lock in state taken: exit %d, stderr %q; want 1 naming state", code, stderr)
	}
	if n := xlen(); n != 0 {
		t.Fatalf("strict: after two refused publishes XLEN = %d, want 0", n)
	}
	for _, c := range []struct{ mode, typ, data, stderr string }{
		{"warn", "progress", typo, "hub publish: warning: progress data does not match docs/schemas/progress.json: progress: 40 is not between 0 and 1 (events.validation: warn, published all the same)\n"},
		{"off", "progress", typo, ""},
		{"strict", "build-log", typo, ""},
		{"strict", "progress", `{"workflow":"wf-1","progress":0.4,"status":"running"}`, ""},
	} {
		code, stdout, stderr := publish(c.mode, c.typ, c.data)
		if code != 0 || !strings.HasSuffix(stdout, "\n") || stderr != c.stderr {
			t.Errorf("%s: hub publish --type %s %s: exit %d, stdout %q, stderr %q; want 0, an id, %q", c.mode, c.typ, c.data, code, stdout, stderr, c.stderr)
		}
	}
	if n := xlen(); n != 4 {
		t.Errorf("after four accepted publishes XLEN = %d, want 4", n)
	}
}

// serve does not start with an events.validation that is no mode, and says which there are.
func TestCLIServeRefusesAnUnknownValidationMode(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		args []string
	}{
		{map[string]string{"HUB_EVENTS_VALIDATION": "maybe"}, []string{"serve"}},
		{nil, []string{"serve", "--config", writeFile(t, "config.yaml", "events:\n  validation: maybe\n")}},
	} {
		code, stdout, stderr := hubCLI(t, c.env, c.args...)
		if want := "hub: events.validation: \"maybe\" is not off, warn or strict\n"; code != 1 || stdout != "" || stderr != want {
			t.Errorf("hub %v with %v: exit %d, stdout %q, stderr %q; want 1, nothing, %q", c.args, c.env, code, stdout, stderr, want)
		}
	}
}

// The examples docs/events.md marks as run by this test run as written, against a hub of the test's own (on its own
// port and Redis), and print what the page shows after each: a strict hub's 400 and hub publish's refusal.
func TestDocsEventsExamples(t *testing.T) {
	const page = "docs/events.md"
	lines := strings.Split(doc(t, page), "\n")
	rs := redistest.Start(t)
	var h *testHub
	ran := 0
	for _, b := range shellBlocks(t, page) {
		if b.marker != "<!-- run by TestDocsEventsExamples -->" {
			continue
		}
		var got strings.Builder
		for _, line := range strings.Split(strings.TrimSpace(b.text), "\n") {
			env, words := map[string]string{}, shellWords(line)
			for len(words) > 0 && strings.HasPrefix(words[0], "HUB_") {
				k, v, _ := strings.Cut(words[0], "=")
				env[k], words = v, words[1:]
			}
			switch {
			case strings.Join(words, " ") == "hub serve &":
				h = startHub(t, rs, "HUB_EVENTS_VALIDATION="+env["HUB_EVENTS_VALIDATION"])
			case len(words) > 2 && words[0] == "hub" && words[1] == "publish":
				env["HUB_REDIS_URL"], env["HUB_REDIS_PREFIX"] = rs.URL(), redistest.Prefix(t)
				_, stdout, stderr := hubCLI(t, env, words[1:]...)
				got.WriteString(stdout + stderr)
			case len(words) > 0 && words[0] == "curl" && h != nil:
				got.WriteString(docCurl(t, h, words))
			default:
				t.Fatalf("%s:%d: %q is not a line this test can run", page, b.line, line)
			}
		}
		if want := blockAfter(t, page, lines, b.line); strings.TrimSpace(got.String()) != want {
			t.Errorf("%s:%d: the example printed\n%s\nthe page shows\n%s", page, b.line, got.String(), want)
		}
		ran++
	}
	if ran != 2 {
		t.Errorf("%s: ran %d examples, want the 2 it marks as run by this test", page, ran)
	}
}

// docCurl sends what a curl line of the docs asks (-H, -d, a localhost:8080 URL) to the test's hub, and returns the
// answer's body.
func docCurl(t *testing.T, h *testHub, words []string) string {
	t.Helper()
	var url, body string
	hdr := http.Header{}
	for i := 1; i < len(words); i++ {
		switch w := words[i]; {
		case w == "-s":
		case w == "-H" && i+1 < len(words):
			k, v, _ := strings.Cut(words[i+1], ": ")
			hdr.Set(k, v)
			i++
		case w == "-d" && i+1 < len(words):
			body = words[i+1]
			i++
		case strings.HasPrefix(w, "localhost:8080/"):
			url = h.URL + strings.TrimPrefix(w, "localhost:8080")
		default:
			t.Fatalf("curl %v: %q is not an argument this test knows", words[1:], w)
		}
	}
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = hdr
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// blockAfter is the fenced block that follows the shell block fenced at line (1-based), trimmed.
func blockAfter(t *testing.T, page string, lines []string, line int) string {
	t.Helper()
	i := line
	for i < len(lines) && lines[i] != "```" {
		i++
	}
	for i++; i < len(lines) && strings.TrimSpace(lines[i]) == ""; i++ {
	}
	if i >= len(lines) || !strings.HasPrefix(lines[i], "```") {
		t.Fatalf("%s:%d: no output block after the example", page, line)
	}
	start := i + 1
	for i = start; i < len(lines) && lines[i] != "```"; i++ {
	}
	return strings.TrimSpace(strings.Join(lines[start:i], "\n"))
}
