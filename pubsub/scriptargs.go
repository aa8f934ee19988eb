package pubsub

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ScriptArg is one position of the publish script's KEYS or ARGV: its name ("KEYS[1]"), what goes there, and whether
// a call may leave it out.
type ScriptArg struct {
	Name, Value string
	Optional    bool
}

// PublishScriptArgs is the publish script's call, in order: what `hub script` prints and what its test holds
// publish.lua to (every KEYS[n] and ARGV[n] the script reads is here, and nothing else).
var PublishScriptArgs = []ScriptArg{
	{Name: "KEYS[1]", Value: "the topic's stream: <prefix>:{<topic>}:events"},
	{Name: "KEYS[2]", Value: "the topic's state: <prefix>:{<topic>}:state"},
	{Name: "KEYS[3]", Value: "the idempotency record: <prefix>:{<topic>}:idem:<publisher>:<key> (key: 1-255 visible ASCII)", Optional: true},
	{Name: "ARGV[1]", Value: "the topic's channel: <prefix>:{<topic>}:live"},
	{Name: "ARGV[2]", Value: "the event type: 1-64 of [a-z0-9._-]; not reset, auth-expired, presence or health"},
	{Name: "ARGV[3]", Value: "the data: one JSON value"},
	{Name: "ARGV[4]", Value: `history.max_len: the stream is trimmed with MAXLEN ~ (absent or "": 10000)`, Optional: true},
	{Name: "ARGV[5]", Value: `limits.max_event_bytes: larger data is refused (absent or "": 65536)`, Optional: true},
	{Name: "ARGV[6]", Value: `the MINID for history.max_age (absent or "": no trimming by age)`, Optional: true},
	{Name: "ARGV[7]", Value: "with KEYS[3]: how long the record is kept, in ms (1-86400000; history.idempotency_ttl)", Optional: true},
	{Name: "ARGV[8]", Value: "with KEYS[3]: the publisher whose key it is, 0-1024 bytes (\"%\" written \"%25\", \":\" \"%3A\" in KEYS[3])", Optional: true},
	{Name: "ARGV[9]", Value: `the publisher's W3C traceparent, stored and delivered with the event; an invalid one is ignored (with no key, send ARGV[7] and ARGV[8] as 0 and "")`, Optional: true},
}

// ScriptSHA is the SHA1 EVALSHA names script by.
func ScriptSHA(script string) string {
	sum := sha1.Sum([]byte(script))
	return hex.EncodeToString(sum[:])
}

// ScriptLayout is PublishScriptArgs as lines: the position, what goes there, and "(optional)".
func ScriptLayout() string {
	var b strings.Builder
	for _, a := range PublishScriptArgs {
		opt := ""
		if a.Optional {
			opt = " (optional)"
		}
		fmt.Fprintf(&b, "  %-8s %s%s\n", a.Name, a.Value, opt)
	}
	return b.String()
}

// LoadScript loads script into rdb with SCRIPT LOAD, on every master of a cluster, and returns its SHA1.
func LoadScript(ctx context.Context, rdb redis.UniversalClient, script string) (string, error) {
	load := func(ctx context.Context, c *redis.Client) error {
		sha, err := c.ScriptLoad(ctx, script).Result()
		if err == nil && sha != ScriptSHA(script) {
			err = fmt.Errorf("SCRIPT LOAD on %s answered %s, want %s", c.Options().Addr, sha, ScriptSHA(script))
		}
		return err
	}
	var err error
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, load)
	case *redis.Client:
		err = load(ctx, c)
	default:
		err = rdb.ScriptLoad(ctx, script).Err()
	}
	if err != nil {
		return "", fmt.Errorf("SCRIPT LOAD: %w", err)
	}
	return ScriptSHA(script), nil
}
