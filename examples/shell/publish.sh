#!/bin/sh
# An agent in shell: reports one workflow's progress to the SyncVerse hub with redis-cli and the hub's publish
# script (README, "Any Redis client"), which stores the event in the topic's stream and publishes it live.
#
#   HUB_REDIS_URL=redis://127.0.0.1:6379/0 ./publish.sh project.42 wf-sh-1
#
# Environment: HUB_REDIS_URL (default redis://127.0.0.1:6379/0), HUB_REDIS_PREFIX (default hub), AGENT_STEP_DELAY
# seconds between steps (default 1). On Redis Cluster add -c to redis-cli: one topic's keys share a hash tag.
set -eu

if [ $# -ne 2 ]; then
  echo "usage: publish.sh TOPIC WORKFLOW" >&2
  exit 2
fi
topic=$1
workflow=$2
url=${HUB_REDIS_URL:-redis://127.0.0.1:6379/0}
prefix=${HUB_REDIS_PREFIX:-hub}
delay=${AGENT_STEP_DELAY:-1}

# Verbatim pubsub.PublishScript; the hub's tests check that it still is.
script=$(cat <<'LUA'
local typ, data = ARGV[2], ARGV[3]
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
LUA
)

# publish TYPE DATA: prints the event id; fails on an error reply (redis-cli itself exits 0 on those).
publish() {
  out=$(redis-cli -u "$url" EVAL "$script" 2 "$prefix:{$topic}:events" "$prefix:{$topic}:state" \
    "$prefix:{$topic}:live" "$1" "$2" 10000 65536 '')
  case $out in
    *-*[0-9]) echo "$out" ;;
    *) echo "publish.sh: $out" >&2; return 1 ;;
  esac
}

base="\"workflow\":\"$workflow\",\"title\":\"cms deploy\",\"agent\":\"shell\""
publish progress "{$base,\"status\":\"queued\",\"progress\":0}" >/dev/null
n=0
for step in fetch build upload; do
  sleep "$delay"
  n=$((n + 1))
  publish progress "{$base,\"status\":\"running\",\"step\":\"$step\",\"progress\":0.$((n * 2))}" >/dev/null
done
publish progress "{$base,\"status\":\"succeeded\",\"progress\":1}"
