package chaos

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

var (
	hubBin string // the hub binary, built once by TestMain
	report Report
	// soak makes every scenario longer and larger; see doc.go.
	soak = os.Getenv("HUB_CHAOS_SOAK") != ""
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		return m.Run() // every scenario skips itself
	}
	dir, err := os.MkdirTemp("", "chaos-hub-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	hubBin = filepath.Join(dir, "hub")
	redis.SetLogger(quiet{}) // the faults make go-redis log every refused dial; the scenarios count them instead
	// Built without -race whatever the test run uses: the hub under test is the binary operators run.
	build := exec.Command("go", "build", "-o", hubBin, ".")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "chaos: go build the hub: %v\n%s", err, out)
		return 1
	}
	code := m.Run()
	if report.Len() > 0 {
		var b bytes.Buffer
		report.Markdown(&b)
		fmt.Print("\nChaos scenarios (HUB_CHAOS_SOAK=" + os.Getenv("HUB_CHAOS_SOAK") + ")\n\n" + b.String())
		if p := os.Getenv("HUB_CHAOS_REPORT"); p != "" {
			if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "chaos: write report:", err)
			}
		}
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "chaos: goroutines outlived the tests:", err)
			return 1
		}
	}
	return code
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
