package docs_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
)

// The examples docs/events.md marks as run by this test run as written, against a hub of the test's own (on its own
// port and Redis), and print what the page shows after each: a strict hub's 400 and hub publish's refusal.
func TestDocsEventsExamples(t *testing.T) {
	const page = "docs/events.md"
	lines := strings.Split(doc(t, page), "\n")
	rs := rig.StartRedis(t)
	var h *hubtest.Hub
	ran := 0
	for _, b := range shellBlocks(t, page) {
		if b.marker != "<!-- run by TestDocsEventsExamples -->" {
			continue
		}
		var got strings.Builder
		for _, line := range strings.Split(strings.TrimSpace(b.text), "\n") {
			env, words := map[string]string{}, hubtest.ShellWords(line)
			for len(words) > 0 && strings.HasPrefix(words[0], "HUB_") {
				k, v, _ := strings.Cut(words[0], "=")
				env[k], words = v, words[1:]
			}
			switch {
			case strings.Join(words, " ") == "hub serve &":
				h = hubtest.Start(t, rs, "HUB_EVENTS_VALIDATION="+env["HUB_EVENTS_VALIDATION"])
			case len(words) > 2 && words[0] == "hub" && words[1] == "publish":
				env["HUB_REDIS_URL"], env["HUB_REDIS_PREFIX"] = rs.URL(), rig.Prefix(t)
				_, stdout, stderr := hubtest.CLI(t, env, words[1:]...)
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
func docCurl(t *testing.T, h *hubtest.Hub, words []string) string {
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
