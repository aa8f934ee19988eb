package rig

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// fakeT stands in for a test, to see whether Missing skips or fails.
type fakeT struct{ skipped, failed string }

func (f *fakeT) Helper()                        {}
func (f *fakeT) Name() string                   { return "TestNeedsIt/sub" }
func (f *fakeT) Skip(args ...any)               { f.skipped = fmt.Sprint(args...) }
func (f *fakeT) Fatalf(format string, a ...any) { f.failed = fmt.Sprintf(format, a...) }

// A skip for a missing tool is recorded where the summary finds it, with the test, the reason and the install
// command; the summary groups by tool, and reading it with clear empties the record.
func TestMissingRecordsTheSkipForTheSummary(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HUB_TEST_SKIPS", dir)
	t.Setenv("CI", "")
	var a, b fakeT
	Missing(&a, "nginx", "the proxy's buffering is not checked", "apt-get install -y nginx")
	Missing(&b, "kubectl", "the kustomize build is not checked", "see kubernetes.io/docs/tasks/tools")
	if a.failed != "" || !strings.Contains(a.skipped, "nginx is not installed (apt-get install -y nginx)") {
		t.Errorf("Missing without CI: skipped %q, failed %q; want a skip naming the tool and its install", a.skipped, a.failed)
	}
	skips, err := Skipped(dir, true)
	if err != nil || len(skips) != 2 || skips[0].Tool != "kubectl" || skips[1] != (Skip{Tool: "nginx", Test: "TestNeedsIt/sub",
		Why: "the proxy's buffering is not checked", Install: "apt-get install -y nginx"}) {
		t.Fatalf("Skipped = %+v, %v; want kubectl's then nginx's, in full", skips, err)
	}
	sum := Summary(skips)
	for _, want := range []string{"2 tests were skipped", "nginx: install with apt-get install -y nginx\n  TestNeedsIt/sub: the proxy's buffering is not checked"} {
		if !strings.Contains(sum, want) {
			t.Errorf("Summary = %q, want it to contain %q", sum, want)
		}
	}
	if again, _ := Skipped(dir, false); len(again) != 0 {
		t.Errorf("after a clearing read, Skipped = %+v, want nothing", again)
	}
	if got := Summary(nil); got != "No test was skipped for a missing tool.\n" {
		t.Errorf("Summary(nil) = %q", got)
	}
}

// Under CI a required tool that is missing fails the test and records nothing: .ci/run installs it.
func TestMissingFailsUnderCI(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HUB_TEST_SKIPS", dir)
	t.Setenv("CI", "true")
	var f fakeT
	if p := Require(&f, "no-such-tool-for-the-hub", "nothing", "nowhere"); p != "" || f.skipped != "" ||
		!strings.Contains(f.failed, "CI must provide it") {
		t.Errorf("Require under CI = %q: skipped %q, failed %q; want a failure", p, f.skipped, f.failed)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("under CI %d skips were recorded, want none", len(entries))
	}
	// What CI does not provide either is skipped there too, and still summed up.
	var o fakeT
	Optional(&o, "no-such-tool-for-the-hub", "nothing", "nowhere")
	if o.failed != "" || o.skipped == "" {
		t.Errorf("Optional under CI: skipped %q, failed %q; want a skip", o.skipped, o.failed)
	}
	if skips, _ := Skipped(dir, true); len(skips) != 1 || skips[0].Tool != "no-such-tool-for-the-hub" {
		t.Errorf("after Optional, Skipped = %+v, want its skip", skips)
	}
}
