//go:build !linux

package server

import (
	"context"
	"net"
	"time"
)

// Listen opens the hub's listener; TCP_USER_TIMEOUT is Linux's, so elsewhere a vanished client is noticed when a
// write fails or misses its deadline.
func Listen(ctx context.Context, addr string, _ time.Duration) (net.Listener, error) {
	var lc net.ListenConfig
	return lc.Listen(ctx, "tcp", addr)
}
