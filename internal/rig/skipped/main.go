// Command skipped prints which tests the last runs skipped for a missing tool, why, and how to install it, then
// forgets them: `go test ...; go run ./internal/rig/skipped`. rig.Missing records the skips.
package main

import (
	"fmt"
	"os"

	"github.com/syncverse/hub/internal/rig"
)

func main() {
	skips, err := rig.Skipped(rig.SkipDir(), true)
	if err != nil {
		fmt.Fprintln(os.Stderr, "skipped:", err)
		os.Exit(1)
	}
	fmt.Print(rig.Summary(skips))
}
