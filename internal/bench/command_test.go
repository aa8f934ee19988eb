package bench

import (
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/syncverse/hub/internal/cli"
)

// --detach picks the engine of a hub the bench starts; for a running hub it would be silently ignored, so it is
// refused with a reason instead.
func TestDetachFlag(t *testing.T) {
	o, err := parse(flag.NewFlagSet("hub bench", flag.ContinueOnError), []string{"--hub-bin", "/bin/hub", "--detach=false"}, &strings.Builder{})
	if err != nil || o.detach {
		t.Fatalf("parse(--hub-bin /bin/hub --detach=false) = detach %v, %v; want false, nil", o != nil && o.detach, err)
	}
	if o, err := parse(flag.NewFlagSet("hub bench", flag.ContinueOnError), []string{"--hub-bin", "/bin/hub"}, &strings.Builder{}); err != nil || !o.detach {
		t.Fatalf("parse(--hub-bin /bin/hub) = %+v, %v; want detach true by default", o, err)
	}
	var out strings.Builder
	_, err = parse(flag.NewFlagSet("hub bench", flag.ContinueOnError), []string{"--url", "http://127.0.0.1:1", "--redis-url", "redis://127.0.0.1:2", "--detach=false"}, &out)
	if !errors.Is(err, cli.ErrUsage) || !strings.Contains(out.String(), "--detach applies to a hub started with --hub-bin") {
		t.Fatalf("parse(--url ... --detach=false) = %v, printed %q; want cli.ErrUsage naming --hub-bin", err, out.String())
	}
}
