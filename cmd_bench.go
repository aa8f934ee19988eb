package main

import (
	"context"
	"errors"
	"io"

	"github.com/syncverse/hub/bench"
)

// benchCommand runs the load generator (package bench); see BENCHMARKS.md for the scenarios it measures.
func benchCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := bench.Command(ctx, args, stdout, stderr)
	if errors.Is(err, bench.ErrUsage) {
		return errUsage
	}
	return err
}
