package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A shell example in the docs, as a reader copies it.
type shellBlock struct {
	file   string // from the repository's root
	line   int    // of the opening fence
	marker string // the comment on the line before the fence: <!-- run by TestX --> or <!-- not run here: why -->
	text   string
}

// docPages are the pages a reader follows: the README, the docs, the benchmark and contributing guides.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md", "CONTRIBUTING.md", "BENCHMARKS.md"}, pages...)
}

// shellBlocks returns every ```sh block of page.
func shellBlocks(t *testing.T, page string) []shellBlock {
	t.Helper()
	lines := strings.Split(doc(t, page), "\n")
	var out []shellBlock
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			continue
		}
		lang, start := strings.TrimPrefix(lines[i], "```"), i
		for i++; i < len(lines) && lines[i] != "```"; i++ {
		}
		if lang != "sh" && lang != "bash" && lang != "shell" {
			continue
		}
		b := shellBlock{file: page, line: start + 1, text: strings.Join(lines[start+1:min(i, len(lines))], "\n") + "\n"}
		if start > 0 {
			b.marker = strings.TrimSpace(lines[start-1])
		}
		out = append(out, b)
	}
	return out
}

// markedBlocks are the shell blocks of page marked as run by test, in order; it fails when there is none.
func markedBlocks(t *testing.T, page, test string) []string {
	t.Helper()
	var found []string
	for _, b := range shellBlocks(t, page) {
		if b.marker == "<!-- run by "+test+" -->" {
			found = append(found, b.text)
		}
	}
	if len(found) == 0 {
		t.Fatalf("%s has no shell block marked <!-- run by %s -->", page, test)
	}
	return found
}

var blockMarker = regexp.MustCompile(`^<!-- (?:run by (Test\w+)|not run here: (.+)) -->$`)

// Every shell example of the docs is either run by a named test, which reads it from that page, or says why it
// cannot run here. A new example without either fails this test, and so does a marker naming a test that does not
// exist or does not read the page.
func TestDocsShellExamplesAreAccountedFor(t *testing.T) {
	tests := testSources(t)
	n := 0
	for _, page := range docPages(t) {
		for _, b := range shellBlocks(t, page) {
			n++
			m := blockMarker.FindStringSubmatch(b.marker)
			switch {
			case m == nil:
				t.Errorf("%s:%d: a shell example with neither <!-- run by TestX --> nor <!-- not run here: why --> on the line before it", b.file, b.line)
			case m[1] != "":
				src, ok := tests[m[1]]
				if !ok {
					t.Errorf("%s:%d: marked as run by %s, which is no test of this repository", b.file, b.line, m[1])
				} else if !strings.Contains(src, `"`+b.file+`"`) {
					t.Errorf("%s:%d: marked as run by %s, whose file never names %q", b.file, b.line, m[1], b.file)
				}
			case len(strings.TrimSpace(m[2])) < 10:
				t.Errorf("%s:%d: %q is not a reason", b.file, b.line, m[2])
			}
		}
	}
	if n < 10 {
		t.Errorf("found %d shell examples in the docs, fewer than the pages hold: the reader is broken", n)
	}
}

// testSources maps each test function of the module to the source of the file that defines it.
func testSources(t *testing.T) map[string]string {
	t.Helper()
	def := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	out := map[string]string{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range def.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The docs' index links every page of docs/, so a new page is never an orphan.
func TestDocsIndexListsEveryPage(t *testing.T) {
	index := doc(t, "docs/README.md")
	for _, page := range docPages(t) {
		name, ok := strings.CutPrefix(page, "docs/")
		if !ok || name == "README.md" {
			continue
		}
		if !strings.Contains(index, "]("+name+")") {
			t.Errorf("docs/README.md does not link %s", page)
		}
	}
}
