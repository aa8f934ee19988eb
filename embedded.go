package main

import (
	"fmt"

	"github.com/alicebob/miniredis/v2"
)

// startEmbedded runs the embedded Redis-compatible server (miniredis) on addr, so the hub runs on a machine without
// Redis and agents or redis-cli can still publish to it.
func startEmbedded(addr string) (string, func(), error) {
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr(addr); err != nil {
		return "", nil, fmt.Errorf("start the embedded Redis on %s (set redis.url to use a real one): %w", addr, err)
	}
	return m.Addr(), m.Close, nil
}
