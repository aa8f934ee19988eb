package main

import (
	"os"
	"strings"
	"testing"

	"github.com/syncverse/hub/pubsub"
)

// The README prints the publish script for agents in other languages: it must be the script the hub runs.
func TestREADMEShowsThePublishScript(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "```lua\n"+pubsub.PublishScript+"```") {
		t.Errorf("README.md does not contain pubsub.PublishScript verbatim in a lua block; update it")
	}
}
