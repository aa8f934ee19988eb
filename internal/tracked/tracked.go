// Package tracked holds the repository's rules for what may be committed: no executables other than scripts, no
// large files. Build outputs (the hub binary, an example agent built in place) are rebuilt from source, never tracked.
// .ci/tracked-files runs TestTrackedFiles, which applies Check to the module's git index.
package tracked

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// MaxBytes is the size above which a tracked file is refused.
const MaxBytes = 2 << 20

// Problem is one tracked file that breaks a rule.
type Problem struct {
	Path   string
	Reason string
}

func (p Problem) String() string { return p.Path + ": " + p.Reason }

// Check lists the files git tracks under root and returns those that break a rule: an ELF or Mach-O binary, a file
// with the exec bit that is not a "#!" script, a file over MaxBytes.
func Check(root string) ([]Problem, error) {
	cmd := exec.Command("git", "ls-files", "-s", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w", root, err)
	}
	var problems []Problem
	for entry := range bytes.SplitSeq(out, []byte{0}) {
		// "<mode> <object> <stage>\t<path>"
		meta, path, ok := strings.Cut(string(entry), "\t")
		if !ok {
			continue
		}
		mode := strings.Fields(meta)[0]
		if mode == "120000" || mode == "160000" { // symlinks and submodules hold no content here
			continue
		}
		p, err := checkFile(filepath.Join(root, path), mode == "100755")
		if err != nil {
			return nil, err
		}
		if p != "" {
			problems = append(problems, Problem{Path: path, Reason: p})
		}
	}
	return problems, nil
}

// checkFile judges one file as it is in the working tree (a file deleted but still in the index is skipped).
func checkFile(path string, executable bool) (string, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	head := make([]byte, 4)
	n, err := io.ReadFull(bufio.NewReader(f), head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return "", err
	}
	head = head[:n]
	switch {
	case IsBinary(head):
		return "an executable binary (ELF or Mach-O); build it, do not commit it", nil
	case executable && !bytes.HasPrefix(head, []byte("#!")):
		return "has the exec bit but is not a script starting with #!", nil
	case info.Size() > MaxBytes:
		return fmt.Sprintf("%d bytes, over the %d-byte limit for tracked files", info.Size(), MaxBytes), nil
	}
	return "", nil
}

// IsBinary tells an ELF or Mach-O (32/64-bit, either byte order, or universal) file by its first four bytes.
func IsBinary(head []byte) bool {
	if len(head) < 4 {
		return false
	}
	switch string(head[:4]) {
	case "\x7fELF",
		"\xfe\xed\xfa\xce", "\xce\xfa\xed\xfe", // Mach-O 32-bit
		"\xfe\xed\xfa\xcf", "\xcf\xfa\xed\xfe", // Mach-O 64-bit
		"\xca\xfe\xba\xbe": // Mach-O universal
		return true
	}
	return false
}
