package app

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/syncverse/hub/internal/cli"
	"github.com/syncverse/hub/internal/config"
)

// version and revision are what the release build stamps into main (-ldflags "-X main.version=v1.2.3
// -X main.revision=<sha>"), handed over by Stamp; without them the module version or VCS revision recorded by the Go
// toolchain is used.
var version, revision string

// Stamp sets the version and revision the release build stamped into package main; empty ones are left to the
// toolchain's build information. main calls it before Run.
func Stamp(v, r string) { version, revision = v, r }

// buildRevision is the commit the binary was built from, "unknown" when neither the build nor the toolchain says.
func buildRevision() string {
	if revision != "" {
		return revision
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "devel-" + rev
}

// registerBuildInfo exposes the running build as hub_build_info{version,revision,goversion} 1, so dashboards can
// tell replicas of different releases apart during a rollout.
func registerBuildInfo(reg prometheus.Registerer) {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hub_build_info", Help: "Always 1; the labels name the running build.",
	}, []string{"version", "revision", "goversion"})
	g.WithLabelValues(buildVersion(), buildRevision(), runtime.Version()).Set(1)
	reg.MustRegister(g)
}

// versionCommand is `hub version` and `hub --version`.
func versionCommand(_ context.Context, c cli.Env, fs *flag.FlagSet, args []string) error {
	if err := config.Parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "hub %s %s %s/%s revision %s\n", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH, buildRevision())
	return nil
}
