package rig

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Skipper is what Missing needs of a test: a *testing.T or B, or a rig's owner outside a test (TB).
type Skipper interface {
	Helper()
	Skip(args ...any)
	Fatalf(format string, args ...any)
}

// Skip is one test skipped for want of a tool, as Missing records it.
type Skip struct {
	Tool    string `json:"tool"`
	Test    string `json:"test"`
	Why     string `json:"why"`
	Install string `json:"install"`
}

// SkipDir is where Missing records its skips, shared by every package's test binary of one machine (and user):
// $HUB_TEST_SKIPS when set, else hub-test-skips under the system's temporary directory. `go run
// ./internal/rig/skipped` prints what is there and empties it.
func SkipDir() string {
	if d := os.Getenv("HUB_TEST_SKIPS"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "hub-test-skips")
}

// Missing ends a test that cannot run without tool: under CI (CI set, where .ci/run installs every tool it needs)
// it fails it; elsewhere it records the skip under SkipDir, so the summary at the end of a run says what was not
// tested, why and how to install what it needs, then skips it. why says what is left unchecked.
func Missing(t Skipper, tool, why, install string) {
	t.Helper()
	msg := fmt.Sprintf("%s is not installed (%s): %s", tool, install, why)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s; CI must provide it (.ci/run)", msg)
		return
	}
	skip(t, Skip{Tool: tool, Why: why, Install: install}, msg)
}

// Require returns tool's path, or ends the test through Missing when it is not on PATH.
func Require(t Skipper, tool, why, install string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		Missing(t, tool, why, install)
	}
	return p
}

// Optional returns tool's path, or records the skip and skips the test when it is not on PATH, under CI too: for
// what CI does not provide either (kubectl, root for network namespaces). Such a skip is in the summary all the same.
func Optional(t Skipper, tool, why, install string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		skip(t, Skip{Tool: tool, Why: why, Install: install}, fmt.Sprintf("%s is not installed (%s): %s", tool, install, why))
	}
	return p
}

// Unavailable records and skips like Optional, for what is not a program on PATH (root, a terminal).
func Unavailable(t Skipper, what, why, howTo string) {
	t.Helper()
	skip(t, Skip{Tool: what, Why: why, Install: howTo}, fmt.Sprintf("%s: %s (%s)", what, why, howTo))
}

func skip(t Skipper, s Skip, msg string) {
	t.Helper()
	if n, ok := t.(interface{ Name() string }); ok {
		s.Test = n.Name()
	}
	if err := record(s); err != nil {
		fmt.Fprintf(os.Stderr, "rig: record the skip of %s: %v\n", s.Test, err)
	}
	t.Skip(msg)
}

// record writes one skip as a file of its own, so test binaries running at once never share a write.
func record(s Skip) error {
	dir := SkipDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "skip-*.json")
	if err != nil {
		return err
	}
	if err := json.NewEncoder(f).Encode(s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Skipped reads the skips recorded in dir, sorted by tool and test; with clear it removes them, so the next run's
// summary starts empty. A file that does not decode is ignored.
func Skipped(dir string, clear bool) ([]Skip, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "skip-*.json"))
	if err != nil {
		return nil, err
	}
	var out []Skip
	for _, p := range paths {
		b, err := os.ReadFile(p)
		var s Skip
		if err == nil && json.Unmarshal(b, &s) == nil {
			out = append(out, s)
		}
		if clear {
			os.Remove(p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Tool != out[j].Tool {
			return out[i].Tool < out[j].Tool
		}
		return out[i].Test < out[j].Test
	})
	return out, nil
}

// Summary is the skips as a reader wants them: per tool, how to install it, and the tests that did not run.
func Summary(skips []Skip) string {
	if len(skips) == 0 {
		return "No test was skipped for a missing tool.\n"
	}
	var b strings.Builder
	if len(skips) == 1 {
		b.WriteString("1 test was skipped for a missing tool:\n")
	} else {
		fmt.Fprintf(&b, "%d tests were skipped for a missing tool:\n", len(skips))
	}
	for i := 0; i < len(skips); {
		j := i
		for j < len(skips) && skips[j].Tool == skips[i].Tool {
			j++
		}
		fmt.Fprintf(&b, "\n%s: install with %s\n", skips[i].Tool, skips[i].Install)
		for _, s := range skips[i:j] {
			name := s.Test
			if name == "" {
				name = "(a test)"
			}
			fmt.Fprintf(&b, "  %s: %s\n", name, s.Why)
		}
		i = j
	}
	return b.String()
}
