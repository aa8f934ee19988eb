package docs_test

import (
	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/app"
)

// The tests' names for the shared harness (package hubtest).
type (
	testHub    = hubtest.Hub
	syncBuffer = hubtest.SyncBuffer
)

var (
	startHub   = hubtest.Start
	data       = hubtest.EventData
	run        = hubtest.Run
	readFile   = hubtest.ReadFile
	needTool   = hubtest.NeedTool
	hubCLI     = hubtest.CLI
	startCmd   = hubtest.StartCmd
	runCmd     = hubtest.RunCmd
	shellWords = hubtest.ShellWords

	// compileEventSchemas compiles the schemas the binary embeds from docs/schemas.
	compileEventSchemas = app.CompileEventSchemas
)
