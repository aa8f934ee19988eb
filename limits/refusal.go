package limits

import (
	"net/http"
	"strconv"
	"time"
)

// Reasons label hub_http_rejected_total.
const (
	ReasonConnLimit   = "conn_limit"   // the hub holds limits.max_connections streams
	ReasonConnPerIP   = "conn_per_ip"  // this address holds limits.max_connections_per_ip streams
	ReasonPublishRate = "publish_rate" // over limits.publish_rate
	ReasonOrigin      = "origin"       // a browser request from an origin not in cors.allowed_origins
	ReasonConnRate    = "conn_rate"    // over limits.connection_rate: new connections or streams from one address
	// ReasonNonStreamPerIP: this address holds limits.max_nonstream_connections_per_ip connections without a stream.
	ReasonNonStreamPerIP = "nonstream_per_ip"
	ReasonReadTimeout    = "read_timeout" // a request body not received within limits.request_read_timeout
	ReasonGetBody        = "get_body"     // a GET or HEAD request with a body
	ReasonHost           = "host"         // anonymous mode, a Host that is neither loopback nor in auth.allowed_hosts
)

// Reasons lists every reason, so a metric can show each at zero.
var Reasons = []string{ReasonConnLimit, ReasonConnPerIP, ReasonPublishRate, ReasonOrigin, ReasonConnRate,
	ReasonNonStreamPerIP, ReasonReadTimeout, ReasonGetBody, ReasonHost}

// Refusal is a request turned away by a limit.
type Refusal struct {
	Code       int
	Reason     string
	Msg        string
	RetryAfter time.Duration // 0: no hint
}

func (r *Refusal) Error() string { return r.Msg }

// Status is the HTTP status to answer with.
func (r *Refusal) Status() int { return r.Code }

// SetHeaders adds Retry-After, in whole seconds rounded up, since a client that retries early is refused again.
func (r *Refusal) SetHeaders(h http.Header) {
	if r.RetryAfter > 0 {
		h.Set("Retry-After", strconv.FormatInt(int64((r.RetryAfter+time.Second-1)/time.Second), 10))
	}
}
