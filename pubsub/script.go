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
// The state hash keeps the latest envelope per workflow ("wf:<id>", not counting the hub's health events) and per
// lock ("lock:<key>") and, in "_cursor", the id of the event it reflects, so a snapshot and its cursor are always
// consistent; the latest health event per workflow is in "verdict:<id>". For the hub's verdicts on workflow health it also keeps each workflow's first event id
// ("wfstart:<id>"), its latest lock event ("wflock:<id>"), the highest fence per lock key ("fence:<key>") and the
// latest lock event whose fence was lower than that ("fencelow:<key>").
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
local fields = {'_cursor', id}
if type(obj) == 'table' then
  if typ == 'lock' and type(obj.key) == 'string' then
    table.insert(fields, 'lock:' .. obj.key)
    table.insert(fields, env)
    if type(obj.workflow) == 'string' then
      table.insert(fields, 'wflock:' .. obj.workflow)
      table.insert(fields, env)
    end
    if type(obj.fence) == 'number' then
      local top = tonumber(redis.call('HGET', KEYS[2], 'fence:' .. obj.key))
      if top and obj.fence < top then
        table.insert(fields, 'fencelow:' .. obj.key)
        table.insert(fields, env)
      elseif not top or obj.fence > top then
        table.insert(fields, 'fence:' .. obj.key)
        table.insert(fields, string.format('%.0f', obj.fence))
      end
    end
  elseif typ == 'health' and type(obj.workflow) == 'string' then
    table.insert(fields, 'verdict:' .. obj.workflow)
    table.insert(fields, env)
  elseif type(obj.workflow) == 'string' then
    table.insert(fields, 'wf:' .. obj.workflow)
    table.insert(fields, env)
    redis.call('HSETNX', KEYS[2], 'wfstart:' .. obj.workflow, id)
  end
end
redis.call('HSET', KEYS[2], unpack(fields))
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
