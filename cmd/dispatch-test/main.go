// Command dispatch-test verifies the lease (package internal/dispatch): one workflow per entity at a time, through
// crashes, pauses and Sentinel failovers. Its Redis is HUB_REDIS_URL or --redis-url (empty: an embedded one).
package main

import "github.com/syncverse/hub/internal/dispatch"

func main() { dispatch.Tool.Main() }
