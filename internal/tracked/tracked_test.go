package tracked

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrackedFiles holds the module's own git index to the rules: .ci/tracked-files runs it first in CI.
func TestTrackedFiles(t *testing.T) {
	root := moduleRoot(t)
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Skipf("%s is not a git checkout (%v)", root, err)
	}
	problems, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("tracked file refused: %s", p)
	}
}

// TestCheckRefusesBuildOutputs commits each kind of refused file to a scratch repository and expects exactly those
// to be reported, with scripts, plain files and a file just under the limit let through.
func TestCheckRefusesBuildOutputs(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	write := func(name string, data []byte, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), data, mode); err != nil {
			t.Fatal(err)
		}
	}
	write("elf", append([]byte("\x7fELF"), make([]byte, 100)...), 0o644)            // a binary without the exec bit
	write("macho", append([]byte("\xcf\xfa\xed\xfe"), make([]byte, 100)...), 0o755) // a Mach-O 64-bit binary
	write("noshebang", []byte("echo hi\n"), 0o755)
	write("big.json", make([]byte, MaxBytes+1), 0o644)
	write("script.sh", []byte("#!/bin/sh\necho hi\n"), 0o755)
	write("plain.txt", []byte("hello\n"), 0o644)
	write("under.json", make([]byte, MaxBytes), 0o644)
	git(t, dir, "add", ".")
	problems, err := Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range problems {
		got[p.Path] = p.Reason
	}
	for _, want := range []string{"elf", "macho", "noshebang", "big.json"} {
		if got[want] == "" {
			t.Errorf("%s not refused; problems: %v", want, problems)
		}
		delete(got, want)
	}
	if len(got) > 0 {
		t.Errorf("refused files that pass the rules: %v", got)
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// moduleRoot is the directory of go.mod, two levels above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}
