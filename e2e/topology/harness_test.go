//go:build slow

package topology

import "github.com/syncverse/hub/e2e/hubtest"

// The tests' names for the shared harness (package hubtest).
var (
	startHub    = hubtest.Start
	data        = hubtest.EventData
	startHubOn  = hubtest.StartOn
	runDeployed = hubtest.RunDeployed
	needTool    = hubtest.NeedTool
	freeBusPort = hubtest.FreeBusPort
)
