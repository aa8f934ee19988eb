package pubsub

import (
	_ "embed" // the publish script is pubsub/publish.lua, so other languages can run the same file
	"strings"

	"github.com/redis/go-redis/v9"
)

// PublishScript appends an event to a topic's stream and publishes its envelope, atomically. It is the only way
// events are published; any language with a Redis client can run it (EVALSHA, or EVAL). It is the file
// pubsub/publish.lua.
//
//	KEYS[1]  the topic's stream   <prefix>:{<topic>}:events
//	KEYS[2]  the topic's state    <prefix>:{<topic>}:state
//	KEYS[3]  optional: the idempotency record <prefix>:{<topic>}:idem:<publisher>:<key>, key 1-255 of visible
//	         ASCII, publisher as ARGV[8] with "%" written "%25" and ":" written "%3A"
//	ARGV[1]  the topic's channel  <prefix>:{<topic>}:live
//	ARGV[2]  type                 1-64 of [a-z0-9._-], not reset, auth-expired, presence or health (the hub's own)
//	ARGV[3]  data                 one JSON value
//	ARGV[4]  history.max_len      trim with MAXLEN ~ (absent or "": 10000, DefaultMaxLen)
//	ARGV[5]  max event bytes      refuse larger data (absent or "": 65536, DefaultMaxEventBytes)
//	ARGV[6]  min id or ""         trim by age with MINID ~ (history.max_age; absent or "": not by age)
//	ARGV[7]  with KEYS[3]: how long the record is kept, in ms, 1 to 86400000 (history.idempotency_ttl)
//	ARGV[8]  with KEYS[3]: the publisher whose key it is (the hub's HTTP API gives the token's subject), 0-1024 bytes
//	ARGV[9]  optional: the publisher's W3C traceparent (ARGV[7] and ARGV[8] are then given, unread without KEYS[3]);
//	         a valid one (55 bytes of lowercase hex, version not ff, ids not all zero, version 00 with flags 00 to
//	         03) is stored in the entry as "tp" and in the envelope as "trace" before "data"; anything else is ignored
//
// Without KEYS[3] it returns the new entry's id. With it, it returns {id, 0} for a new event and {first id, 1} for a
// key it has recorded with the same type and data (the record holds "<id> <sha1 of type\ndata>"): the event is then
// neither stored nor published again. The same key with another type or data is refused ("ERR idempotency key
// reused with other content") and nothing is stored. Keys are per publisher: another publisher's record is another
// key, so no publisher learns of or suppresses another's events. The record lives in the topic's slot
// and is written by the same script as the event, so a failover keeps both or neither.
// The envelope's prev is the id of the entry before it, so a reader that sees a prev other than the last id it knows
// has missed something and reads the gap back from the stream.
// The state hash keeps the latest progress envelope per workflow ("wf:<id>"; an event of another type that names a
// workflow, a log line, leaves it as it is) and per lock ("lock:<key>") and, in "_cursor", the id of the event it
// reflects, so a snapshot and its cursor are always consistent; the latest health event per workflow is in
// "verdict:<id>". For the hub's verdicts on workflow health it also keeps each workflow's first progress event id
// ("wfstart:<id>"), its latest lock event ("wflock:<id>"), the highest fence per lock key ("fence:<key>") and the
// latest lock event whose fence was lower than that ("fencelow:<key>").
// Its refusals are error replies starting "ERR " followed by one of scriptRefusals' texts.
// The hash is trimmed with the stream: each call walks on a few fields (HSCAN from the cursor kept in "_trim") and
// deletes an envelope whose event the stream no longer holds, a workflow's other fields (its start and the
// verdict marks) once none of its envelopes is left, and a lock key's fence once its envelopes are gone. So a
// workflow whose events all left the history leaves the state, and the hash never outgrows what the stream
// explains by more than a few calls' worth.
//
//go:embed publish.lua
var PublishScript string

var (
	publishScript        = redis.NewScript(PublishScript)
	shardedPublishScript = redis.NewScript(PublishScriptFor(true))
)

// PublishScriptFor returns the publish script for a hub with or without redis.sharded_pubsub. Sharded, it is
// PublishScript with SPUBLISH in place of PUBLISH: the channel shares its topic's hash tag, so the shard that stores
// the event also delivers it, and no other shard hears of it.
func PublishScriptFor(sharded bool) string {
	if !sharded {
		return PublishScript
	}
	return strings.Replace(PublishScript, "redis.call('PUBLISH',", "redis.call('SPUBLISH',", 1)
}
