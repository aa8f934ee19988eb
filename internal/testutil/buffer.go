package testutil

import "github.com/syncverse/hub/internal/rig"

// SyncBuffer is rig.SyncBuffer, under the name the tests use.
type SyncBuffer = rig.SyncBuffer
