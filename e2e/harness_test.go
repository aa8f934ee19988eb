package e2e

import "github.com/syncverse/hub/e2e/hubtest"

// The tests' names for the shared harness (package hubtest).
type (
	testHub    = hubtest.Hub
	syncBuffer = hubtest.SyncBuffer
)

var (
	newTestHub  = hubtest.New
	startHub    = hubtest.Start
	data        = hubtest.EventData
	startHubOn  = hubtest.StartOn
	runDeployed = hubtest.RunDeployed
	needTool    = hubtest.NeedTool
	run         = hubtest.Run
	readFile    = hubtest.ReadFile
	shellWords  = hubtest.ShellWords
	freeBusPort = hubtest.FreeBusPort
	startCmd    = hubtest.StartCmd
	runCmd      = hubtest.RunCmd
	tokenExpiry = hubtest.TokenExpiry
	hubCLI      = hubtest.CLI
)
