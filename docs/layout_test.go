package docs_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const layoutPage = "docs/layout.md"

// moduleImports is `go list` of the module, non-test imports: each package (by its path in the module, "main" for
// the root) with the module's packages it imports.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	mod, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	module := strings.TrimSpace(string(mod))
	rel := func(path string) (string, bool) {
		if path == module {
			return "main", true
		}
		p, ok := strings.CutPrefix(path, module+"/")
		return p, ok
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, _ := rel(fields[0])
		pkgs[pkg] = []string{}
		for _, imp := range fields[1:] {
			if p, ok := rel(imp); ok {
				pkgs[pkg] = append(pkgs[pkg], p)
			}
		}
	}
	return pkgs
}

// diagramComment is a line's trailing remark: two spaces or more, then words in parentheses.
var diagramComment = regexp.MustCompile(`\s{2,}\([^()]*\)\s*$`)

// parseDiagram reads the import diagram of docs/layout.md: each line holds statements separated by ";", a statement
// is groups joined by "──►" (each group imports every package of the next one), a group is packages separated by
// commas, and "dir/{a, b}" stands for dir/a and dir/b. It returns the arrows as "from ──► to", with the line of each.
func parseDiagram(text string) (map[string]int, error) {
	arrows := map[string]int{}
	for i, line := range strings.Split(text, "\n") {
		line = diagramComment.ReplaceAllString(line, "")
		if strings.TrimSpace(line) == "" {
			continue
		}
		for _, stmt := range strings.Split(line, ";") {
			parts := strings.Split(stmt, "──►")
			if len(parts) < 2 {
				return nil, fmt.Errorf("line %d: %q has no arrow", i+1, strings.TrimSpace(stmt))
			}
			var groups [][]string
			for _, p := range parts {
				g, err := diagramGroup(p)
				if err != nil {
					return nil, fmt.Errorf("line %d: %v", i+1, err)
				}
				groups = append(groups, g)
			}
			for j := 1; j < len(groups); j++ {
				for _, from := range groups[j-1] {
					for _, to := range groups[j] {
						arrows[from+" ──► "+to] = i + 1
					}
				}
			}
		}
	}
	return arrows, nil
}

// diagramGroup expands "a, dir/{b, c}, d" into its packages.
func diagramGroup(s string) ([]string, error) {
	var out []string
	for s = strings.TrimSpace(s); s != ""; {
		item := s
		if open := strings.Index(s, "{"); open >= 0 && open < strings.IndexAny(s+",", ",") {
			end := strings.Index(s, "}")
			if end < 0 {
				return nil, fmt.Errorf("%q: no closing brace", s)
			}
			item, s = s[:end+1], s[end+1:]
		} else if comma := strings.Index(s, ","); comma >= 0 {
			item, s = s[:comma], s[comma:]
		} else {
			s = ""
		}
		s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), ","))
		item = strings.TrimSpace(item)
		if prefix, rest, ok := strings.Cut(item, "{"); ok {
			for _, name := range strings.Split(strings.TrimSuffix(rest, "}"), ",") {
				out = append(out, prefix+strings.TrimSpace(name))
			}
			continue
		}
		if item == "" || strings.ContainsAny(item, " {}") {
			return nil, fmt.Errorf("%q is not a package", item)
		}
		out = append(out, item)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("an arrow without packages on one side")
	}
	return out, nil
}

// fencedAfter is the first ```text block after the heading of page.
func fencedAfter(t *testing.T, page, heading string) string {
	t.Helper()
	text := doc(t, page)
	_, after, ok := strings.Cut(text, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no heading %q", page, heading)
	}
	_, after, ok = strings.Cut(after, "```text\n")
	block, _, closed := strings.Cut(after, "\n```")
	if !ok || !closed {
		t.Fatalf("%s: no ```text block under %q", page, heading)
	}
	return block
}

// The diagram in docs/layout.md is the module's imports: every arrow it draws is an import (go list, tests left
// out), and every import of one of the module's packages by another is an arrow.
func TestLayoutDiagramIsTheImports(t *testing.T) {
	arrows, err := parseDiagram(fencedAfter(t, layoutPage, "## Which way imports go"))
	if err != nil {
		t.Fatalf("%s: the import diagram: %v", layoutPage, err)
	}
	pkgs := moduleImports(t)
	for arrow, line := range arrows {
		from, to, _ := strings.Cut(arrow, " ──► ")
		switch imports, ok := pkgs[from]; {
		case !ok:
			t.Errorf("%s: diagram line %d: %s is no package of the module", layoutPage, line, from)
		case !slices.Contains(imports, to):
			t.Errorf("%s: diagram line %d: %s, but %s does not import %s", layoutPage, line, arrow, from, to)
		}
	}
	for from, imports := range pkgs {
		for _, to := range imports {
			if _, ok := arrows[from+" ──► "+to]; !ok {
				t.Errorf("%s: the import diagram lacks %s ──► %s", layoutPage, from, to)
			}
		}
	}
}

// goFree says whether dir is a directory of the repository that holds no Go file (clients/python/, examples/).
func goFree(dir string) bool {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return false
	}
	gofiles, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	return len(gofiles) == 0
}

// The table of docs/layout.md has a row for every package of the module, and names no package that is not there.
func TestLayoutTableListsEveryPackage(t *testing.T) {
	pkgs := moduleImports(t)
	named := map[string]bool{}
	cell := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(doc(t, layoutPage), "\n") {
		first, _, ok := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		if !strings.HasPrefix(line, "| ") || !ok {
			continue
		}
		for _, m := range cell.FindAllStringSubmatch(first, -1) {
			name := strings.TrimSuffix(m[1], "/")
			if _, ok := pkgs[name]; !ok && !goFree(name) {
				t.Errorf("%s: the table names %s, which is neither a package of the module nor a directory without Go", layoutPage, m[1])
			}
			named[name] = true
		}
	}
	for pkg := range pkgs {
		if !named[pkg] {
			t.Errorf("%s: the table has no row for %s/", layoutPage, pkg)
		}
	}
}

// The diagram's notation: groups, braces, chains, statements and remarks.
func TestLayoutDiagramNotation(t *testing.T) {
	got, err := parseDiagram("a, dir/{b, c} ──► d ──► e/{f}, g;   h ──► i      (a remark, with a comma)\n\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a ──► d", "dir/b ──► d", "dir/c ──► d", "d ──► e/f", "d ──► g", "h ──► i"}
	for _, w := range want {
		if _, ok := got[w]; !ok {
			t.Errorf("parse lacks %s: %v", w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("parse = %v, want the %d arrows %v", got, len(want), want)
	}
	for _, bad := range []string{"a b", "a ──► ", "dir/{a, b ──► c", "a ──► b c"} {
		if _, err := parseDiagram(bad); err == nil {
			t.Errorf("parseDiagram(%q) = nil error, want one", bad)
		}
	}
}
