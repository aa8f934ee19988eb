package deploy_test

import (
	"context"
	"debug/elf"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/rig"
)

// No Docker engine runs where the tests do, so these check what can be checked without one: the Dockerfile's
// build command works on exactly the context Docker would send, its COPY sources exist, and the image's
// configuration and health check fit the hub.

// dockerfile returns the Dockerfile's instructions, continuation lines joined and comments dropped.
func dockerfile(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var cur strings.Builder
	for line := range strings.SplitSeq(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if cont, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(cont + " ")
			continue
		}
		cur.WriteString(line)
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	return out
}

// dockerBuildCommand finds the RUN … go build … instruction and returns its environment and go arguments, with
// ${VERSION} replaced by version, ${REVISION} by imageRevision and the target platform by this machine's.
func dockerBuildCommand(t testing.TB, version string) (env, args []string) {
	t.Helper()
	for _, ins := range dockerfile(t) {
		cmd, ok := strings.CutPrefix(ins, "RUN ")
		if !ok || !strings.Contains(cmd, "go build") {
			continue
		}
		cmd = strings.NewReplacer("${VERSION}", version, "${REVISION}", imageRevision,
			"${TARGETOS}", runtime.GOOS, "${TARGETARCH}", runtime.GOARCH).Replace(cmd)
		words := hubtest.ShellWords(cmd)
		for strings.HasPrefix(words[0], "--mount=") { // RUN's own flags: the build caches
			words = words[1:]
		}
		for i, w := range words {
			if w == "go" {
				return words[:i], words[i+1:]
			}
			if !strings.Contains(w, "=") {
				t.Fatalf("Dockerfile build command %q: %q is neither VAR=value nor go", cmd, w)
			}
		}
	}
	t.Fatal("Dockerfile has no RUN … go build …")
	return nil, nil
}

// imageBinary builds the hub as the Dockerfile does, from the files .dockerignore lets into the context.
func imageBinary(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	ctxDir := filepath.Join(dir, "src")
	if err := copyContext(".", ctxDir); err != nil {
		t.Fatalf("copy the build context: %v", err)
	}
	env, args := dockerBuildCommand(t, "v0.0.0-imagetest")
	if testing.Short() {
		t.Skip("building with the Dockerfile's flags (-trimpath: a cache of its own) is slow; skipped in -short")
	}
	bin := filepath.Join(dir, "hub")
	for i, a := range args {
		if a == "-o" && i+1 < len(args) {
			args[i+1] = bin
		}
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = ctxDir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s (the Dockerfile's build, in the context .dockerignore leaves): %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

// imageRevision stands for the commit a release build passes as REVISION.
const imageRevision = "0123456789abcdef0123456789abcdef01234567"

func TestDockerfileBuildsAStaticStampedBinary(t *testing.T) {
	env, args := dockerBuildCommand(t, "v0.0.0-imagetest")
	joined := strings.Join(append(env, args...), " ")
	for _, want := range []string{"CGO_ENABLED=0", "GOOS=" + runtime.GOOS, "GOARCH=" + runtime.GOARCH, "-trimpath",
		"-X main.version=v0.0.0-imagetest", "-X main.revision=" + imageRevision} {
		if !strings.Contains(joined, want) {
			t.Errorf("Dockerfile build command %q lacks %q", joined, want)
		}
	}
	bin := imageBinary(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("binary is dynamically linked (%v); the distroless/static image has no libc", p.Type)
		}
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "hub v0.0.0-imagetest ") || !strings.HasSuffix(string(out), " revision "+imageRevision+"\n") {
		t.Errorf("hub version = %q, %v; want it to start with %q and end with the revision %s", out, err, "hub v0.0.0-imagetest ", imageRevision)
	}
}

func TestDockerfileImageSettings(t *testing.T) {
	ins := strings.Join(dockerfile(t), "\n")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^FROM \S*distroless/static\S*:nonroot$`),
		// The compiler runs natively and cross-compiles for the target; the caches survive between builds.
		regexp.MustCompile(`(?m)^FROM --platform=\$BUILDPLATFORM golang:\S+ AS build$`),
		regexp.MustCompile(`(?m)^ARG TARGETOS$`),
		regexp.MustCompile(`(?m)^ARG TARGETARCH$`),
		regexp.MustCompile(`(?m)^RUN --mount=type=cache,target=/go/pkg/mod go mod download$`),
		regexp.MustCompile(`(?m)^RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build `),
		regexp.MustCompile(`(?m)^LABEL .*org\.opencontainers\.image\.source="https://github\.com/syncverse/hub"`),
		regexp.MustCompile(`(?m)^LABEL .*org\.opencontainers\.image\.revision="\$\{REVISION\}"`),
		regexp.MustCompile(`(?m)^LABEL .*org\.opencontainers\.image\.version="\$\{VERSION\}"`),
		regexp.MustCompile(`(?m)^LABEL .*org\.opencontainers\.image\.licenses="Apache-2\.0"`),
		regexp.MustCompile(`(?m)^USER nonroot`),
		regexp.MustCompile(`(?m)^EXPOSE 8080$`),
		regexp.MustCompile(`(?m)^ENV .*HUB_LISTEN=0\.0\.0\.0:8080`),
		regexp.MustCompile(`(?m)^HEALTHCHECK .*CMD \["/usr/local/bin/hub", "healthcheck"\]$`),
		regexp.MustCompile(`(?m)^ENTRYPOINT \["/usr/local/bin/hub"\]$`),
	} {
		if !want.MatchString(ins) {
			t.Errorf("Dockerfile has no instruction matching %s", want)
		}
	}
}

// Every file a COPY names (outside a copy from a build stage) is in the build context.
func TestDockerfileCopiesExist(t *testing.T) {
	ignore := dockerignore(t)
	n := 0
	for _, ins := range dockerfile(t) {
		words := strings.Fields(ins)
		if words[0] != "COPY" && words[0] != "ADD" {
			continue
		}
		var srcs []string
		for _, w := range words[1 : len(words)-1] {
			if strings.HasPrefix(w, "--from=") {
				srcs = nil
				break
			}
			if !strings.HasPrefix(w, "--") {
				srcs = append(srcs, w)
			}
		}
		for _, s := range srcs {
			n++
			if _, err := os.Stat(s); err != nil {
				t.Errorf("Dockerfile %q: %v", ins, err)
			} else if s != "." && ignored(ignore, path.Clean(s)) {
				t.Errorf("Dockerfile %q: %s is excluded by .dockerignore", ins, s)
			}
		}
	}
	if n == 0 {
		t.Error("Dockerfile copies nothing from the context")
	}
}

// hub healthcheck, the image's HEALTHCHECK, exits 0 against a serving hub, also when it derives the address from
// a listen on every interface, and non-zero against a closed port.
func TestHealthcheckExitCodes(t *testing.T) {
	bin := imageBinary(t)
	h := hubtest.Start(t, rig.StartRedis(t))
	check := func(env []string, args ...string) error {
		cmd := exec.Command(bin, append([]string{"healthcheck"}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Logf("hub healthcheck %s: %s", strings.Join(args, " "), strings.TrimSpace(string(out)))
		}
		return err
	}
	if err := check(nil, "--url", h.URL+"/healthz"); err != nil {
		t.Errorf("hub healthcheck --url %s/healthz = %v, want exit 0", h.URL, err)
	}
	_, port, _ := strings.Cut(h.Addr, ":")
	if err := check([]string{"HUB_LISTEN=0.0.0.0:" + port}); err != nil {
		t.Errorf("HUB_LISTEN=0.0.0.0:%s hub healthcheck = %v, want exit 0", port, err)
	}
	closed := closedAddr(t)
	err := check(nil, "--url", "http://"+closed+"/healthz", "--timeout", "1s")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("hub healthcheck against closed %s = %v, want exit status 1", closed, err)
	}
	if err := hubtest.Run(context.Background(), []string{"healthcheck", "--url", h.URL + "/healthz"}, func(string) string { return "" },
		strings.NewReader(""), io.Discard, io.Discard, nil); err != nil {
		t.Errorf("run(healthcheck) = %v, want nil", err)
	}
}

func closedAddr(t testing.TB) string {
	port := hubtest.FreeBusPort(t) // free a moment ago, and nothing listens there now
	return "127.0.0.1:" + strconv.Itoa(port)
}

func dockerignore(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	return ignorePatterns(b)
}

// ignorePatterns are the patterns of a .dockerignore, in order; a leading ! (an exception) is kept.
func ignorePatterns(b []byte) []string {
	var pats []string
	for l := range strings.SplitSeq(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			neg := strings.HasPrefix(l, "!")
			l = path.Clean(strings.TrimPrefix(strings.TrimPrefix(l, "!"), "/"))
			if neg {
				l = "!" + l
			}
			pats = append(pats, l)
		}
	}
	return pats
}

// ignored reports whether .dockerignore excludes rel (slash-separated), as Docker reads it: a pattern excludes
// the path when it matches the path or one of its parent directories, "**" matches any number of directories,
// and the last pattern that matches decides, so a later !pattern lets a path back in.
func ignored(pats []string, rel string) bool {
	parts := strings.Split(rel, "/")
	out := false
	for _, p := range pats {
		neg := strings.HasPrefix(p, "!")
		pat := strings.Split(strings.TrimPrefix(p, "!"), "/")
		for i := 1; i <= len(parts); i++ {
			if globMatch(pat, parts[:i]) {
				out = !neg
				break
			}
		}
	}
	return out
}

// reopened reports whether an exception lets something inside the excluded directory dir back in.
func reopened(pats []string, dir string) bool {
	for _, p := range pats {
		if strings.HasPrefix(p, "!") && strings.HasPrefix(strings.TrimPrefix(p, "!"), dir+"/") {
			return true
		}
	}
	return false
}

func globMatch(pat, name []string) bool {
	if len(pat) == 0 {
		return len(name) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(name); i++ {
			if globMatch(pat[1:], name[i:]) {
				return true
			}
		}
		return false
	}
	if len(name) == 0 {
		return false
	}
	ok, _ := path.Match(pat[0], name[0])
	return ok && globMatch(pat[1:], name[1:])
}

// copyContext copies the build context Docker would send: the repository minus what .dockerignore excludes.
func copyContext(src, dst string) error {
	b, err := os.ReadFile(filepath.Join(src, ".dockerignore"))
	if err != nil {
		return err
	}
	pats := ignorePatterns(b)
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "." {
			return os.MkdirAll(dst, 0o755)
		}
		if ignored(pats, filepath.ToSlash(rel)) {
			if d.IsDir() && !reopened(pats, filepath.ToSlash(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
