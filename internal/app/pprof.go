//go:build pprof

package app

import (
	"net/http"
	_ "net/http/pprof" // the profiling build's /debug/pprof/ handlers, on their own listener
	"os"
)

// A profiling build (go build -tags pprof) serves net/http/pprof on PPROF_ADDR (e.g. 127.0.0.1:6060) for the
// life of the process; the product binary has no such listener.
func init() {
	if addr := os.Getenv("PPROF_ADDR"); addr != "" {
		go func() { _ = http.ListenAndServe(addr, nil) }()
	}
}
