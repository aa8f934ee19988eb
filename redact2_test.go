package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestServeStartLogHidesSentinelPassword(t *testing.T) {
	const secret = "s3nt1nel-Pa55"
	env := map[string]string{"HUB_REDIS_URL": "redis+sentinel://:" + secret + "@" + freePort(t) + "/mymaster?sentinel_password=" + secret, "HUB_SHUTDOWN_TIMEOUT": "5s"}
	ctx, cancel := context.WithCancel(context.Background())
	out, logs := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0"}, func(k string) string { return env[k] }, strings.NewReader(""), out, logs) }()
	waitFor(t, 10*time.Second, "hub started", func() bool { return strings.Contains(logs.String(), "hub started") })
	cancel()
	<-done
	if strings.Contains(logs.String(), secret) {
		t.Errorf("logs show the password:\n%s", logs)
	}
}
