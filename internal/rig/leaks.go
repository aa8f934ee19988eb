package rig

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// MainNoLeaks is a TestMain that fails the package when a test leaves a goroutine behind: whatever a test starts
// must be gone when it returns. Idle client connections are closed first; they are the client's, not a leak.
func MainNoLeaks(m *testing.M) {
	code := m.Run()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
