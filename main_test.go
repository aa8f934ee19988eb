package main

import (
	"testing"

	"github.com/syncverse/hub/internal/testutil"
)

// TestMain checks that no test leaves a goroutine behind: run() must return only when everything it started is gone.
func TestMain(m *testing.M) { testutil.MainNoLeaks(m) }
