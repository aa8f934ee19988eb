package docs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// markdownFiles are the repository's Markdown files, from its root (node_modules and dot directories left out).
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found %d Markdown files, fewer than the repository holds: the walk is broken", len(files))
	}
	return files
}

var (
	fence      = regexp.MustCompile("^\\s*(```|~~~)")
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refLink    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+.*)?$`)
	heading    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	htmlAnchor = regexp.MustCompile(`<a\s[^>]*(?:name|id)="([^"]+)"`)
)

// proseLines are a Markdown file's lines outside fenced code blocks, numbered from 1, with code spans blanked.
func proseLines(text string) map[int]string {
	out := map[int]string{}
	inFence := false
	for i, line := range strings.Split(text, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if !inFence {
			out[i+1] = codeSpan.ReplaceAllString(line, "``")
		}
	}
	return out
}

// slug is GitHub's anchor for a heading's text: the rendered words in lower case, punctuation dropped but hyphens
// and underscores, each space a hyphen.
func slug(text string) string {
	text = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(text, "$1") // links: their text
	text = regexp.MustCompile(`<[^>]+>`).ReplaceAllString(text, "")                   // inline HTML
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the fragments a Markdown file answers to: its headings' slugs (a repeated one gets -1, -2, ... as on
// GitHub) and the names and ids of its HTML anchors.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range proseLines(text) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
	}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		m := heading.FindStringSubmatch(line)
		if inFence || m == nil {
			continue
		}
		s := slug(strings.ReplaceAll(m[1], "`", ""))
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// links are the targets of a Markdown file's links (inline, images and references), by line.
func links(text string) map[int][]string {
	out := map[int][]string{}
	for n, line := range proseLines(text) {
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out[n] = append(out[n], m[1])
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			out[n] = append(out[n], m[1])
		}
	}
	return out
}

// Every relative link of the repository's Markdown resolves: to a file or directory that exists, and where it names
// a #section, to a heading (or an HTML anchor) of the target.
func TestDocsLinksResolve(t *testing.T) {
	checked := 0
	for _, file := range markdownFiles(t) {
		for line, targets := range links(doc(t, file)) {
			for _, target := range targets {
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				if err := checkLink(file, target); err != "" {
					t.Errorf("%s:%d: link %s: %s", file, line, target, err)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked %d relative links, fewer than the docs hold: the reader is broken", checked)
	}
}

// checkLink says what is wrong with the relative link target of file, or "".
func checkLink(file, target string) string {
	path, fragment, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
		if strings.HasPrefix(path, "/") {
			dest = filepath.FromSlash(strings.TrimPrefix(path, "/"))
		}
		if _, err := os.Stat(dest); err != nil {
			return "no such file " + filepath.ToSlash(dest)
		}
	}
	if fragment == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	b, err := os.ReadFile(dest)
	if err != nil {
		return err.Error()
	}
	if !anchors(string(b))[fragment] {
		return "no heading #" + fragment + " in " + filepath.ToSlash(dest)
	}
	return ""
}

// GitHub's slugs and the links' reading, on the cases the docs use.
func TestDocsLinkReading(t *testing.T) {
	for text, want := range map[string]string{
		"Which way imports go":                "which-way-imports-go",
		"`hub watch`: follow a topic":         "hub-watch-follow-a-topic",
		"Metrics, alerts, logs":               "metrics-alerts-logs",
		"HubStalled / HubRedisDown (page)":    "hubstalled--hubredisdown-page",
		"[The console](console.md) and you":   "the-console-and-you",
		"Limits — and what 429 means":         "limits--and-what-429-means",
		"auth.hmac_secret":                    "authhmac_secret",
		"Schritt 1: Überblick":                "schritt-1-überblick",
		"What a `retry:` <em>line</em> means": "what-a-retry-line-means",
	} {
		if got := slug(strings.ReplaceAll(text, "`", "")); got != want {
			t.Errorf("slug(%q) = %q, want %q", text, got, want)
		}
	}
	a := anchors("# A\n\n## Setup\n\n```sh\n# not a heading\n```\n\n## Setup\n<a name=\"old-name\"></a>\n")
	for _, want := range []string{"a", "setup", "setup-1", "old-name"} {
		if !a[want] {
			t.Errorf("anchors lack %q: %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Errorf("a comment in a code block became an anchor: %v", a)
	}
	got := links("See [x](a.md#b), ![img](p.png \"title\") and `[no](code.md)`.\n```\n[no](fenced.md)\n```\n[ref]: ref.md\n")
	want := map[int][]string{1: {"a.md#b", "p.png"}, 5: {"ref.md"}}
	if len(got) != len(want) || strings.Join(got[1], " ") != "a.md#b p.png" || strings.Join(got[5], " ") != "ref.md" {
		t.Errorf("links = %v, want %v", got, want)
	}
}

// The repository cites no document that is not in it: the design notes and style guide some pages once pointed to
// were never committed.
func TestNoCitationOfAbsentDocuments(t *testing.T) {
	absent := []string{"DESIGN" + ".md", "STYLE" + ".md"}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, name := range absent {
			if _, err := os.Stat(name); err != nil && strings.Contains(string(b), name) {
				t.Errorf("%s cites %s, which is not in the repository", path, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
