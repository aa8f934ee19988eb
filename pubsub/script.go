package pubsub

import (
	"strings"

	"github.com/redis/go-redis/v9"
)

// PublishScript appends an event to a topic's stream and publishes its envelope, atomically. It is the only way
// events are published; any language with a Redis client can run it (EVALSHA, or EVAL).
//
//	KEYS[1]  the topic's stream   <prefix>:{<topic>}:events
//	KEYS[2]  the topic's state    <prefix>:{<topic>}:state
//	ARGV[1]  the topic's channel  <prefix>:{<topic>}:live
//	ARGV[2]  type                 1-64 of [a-z0-9._-]
//	ARGV[3]  data                 one JSON value
//	ARGV[4]  history.max_len      trim with MAXLEN ~
//	ARGV[5]  max event bytes      refuse larger data
//	ARGV[6]  min id or ""         trim by age with MINID ~ (history.max_age)
//
// It returns the new entry's id. The envelope's prev is the id of the entry before it, so a reader that sees a prev
// other than the last id it knows has missed something and reads the gap back from the stream.
// The state hash keeps the latest envelope per workflow ("wf:<id>") and per lock ("lock:<key>") and, in "_cursor",
// the id of the event it reflects, so a snapshot and its cursor are always consistent.
const PublishScript = `local typ, data = ARGV[2], ARGV[3]
if #typ == 0 or #typ > 64 or string.find(typ, '[^a-z0-9._-]') then
  return redis.error_reply('ERR invalid event type')
end
if #data > tonumber(ARGV[5]) then
  return redis.error_reply('ERR event too large')
end
local ok, obj, decodeErr = pcall(cjson.decode, data)
if not ok or decodeErr then
  return redis.error_reply('ERR data is not valid JSON')
end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local prev = '0-0'
if last[1] then prev = last[1][1] end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[4], '*', 'p', prev, 't', typ, 'd', data)
if ARGV[6] ~= '' then
  redis.call('XTRIM', KEYS[1], 'MINID', '~', ARGV[6])
end
local env = '{"id":"' .. id .. '","prev":"' .. prev .. '","type":"' .. typ .. '","data":' .. data .. '}'
redis.call('PUBLISH', ARGV[1], env)
local field
if type(obj) == 'table' then
  if typ == 'lock' and type(obj.key) == 'string' then
    field = 'lock:' .. obj.key
  elseif type(obj.workflow) == 'string' then
    field = 'wf:' .. obj.workflow
  end
end
if field then
  redis.call('HSET', KEYS[2], field, env, '_cursor', id)
else
  redis.call('HSET', KEYS[2], '_cursor', id)
end
return id
`

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
