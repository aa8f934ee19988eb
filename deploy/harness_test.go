package deploy_test

import "github.com/syncverse/hub/e2e/hubtest"

// The deploy files' tests check them against the hub itself, run through the end-to-end harness (package hubtest).
var (
	run         = hubtest.Run
	startHub    = hubtest.Start
	freeBusPort = hubtest.FreeBusPort
	readFile    = hubtest.ReadFile
	shellWords  = hubtest.ShellWords
)
