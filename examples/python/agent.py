#!/usr/bin/env python3
"""An agent that reports one workflow's progress to the SyncVerse hub through Redis, with redis-py.

Publishing is the hub's publish script (README, "Any Redis client"): it appends the event to the topic's stream
and publishes it live, atomically. redis-py's Script runs it with EVALSHA and loads it on NOSCRIPT.

    HUB_REDIS_URL=redis://127.0.0.1:6379/0 python3 agent.py project.42 wf-py-1

Environment: HUB_REDIS_URL (default redis://127.0.0.1:6379/0), HUB_REDIS_PREFIX (default hub),
AGENT_STEP_DELAY seconds between steps (default 0.5). On Redis Cluster use redis.cluster.RedisCluster.from_url:
the keys and the channel of one topic share a hash tag, so the script runs on one shard.
"""
import json
import os
import sys
import time

import redis

# Verbatim pubsub.PublishScript; the hub's tests check that it still is.
PUBLISH_SCRIPT = r"""local typ, data = ARGV[2], ARGV[3]
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
"""

MAX_LEN = 10000           # history.max_len
MAX_EVENT_BYTES = 65536   # limits.max_event_bytes


class Hub:
    def __init__(self, client, prefix="hub"):
        self.prefix = prefix
        self.script = client.register_script(PUBLISH_SCRIPT)

    def publish(self, topic, data, event_type="progress"):
        """Publish one event and return its id. At least once: after an error it may have been stored."""
        keys = [f"{self.prefix}:{{{topic}}}:events", f"{self.prefix}:{{{topic}}}:state"]
        args = [f"{self.prefix}:{{{topic}}}:live", event_type, json.dumps(data, separators=(",", ":")),
                MAX_LEN, MAX_EVENT_BYTES, ""]
        event_id = self.script(keys=keys, args=args)
        return event_id.decode() if isinstance(event_id, bytes) else event_id


def main():
    if len(sys.argv) != 3:
        print("usage: agent.py TOPIC WORKFLOW", file=sys.stderr)
        return 2
    topic, workflow = sys.argv[1], sys.argv[2]
    client = redis.Redis.from_url(os.environ.get("HUB_REDIS_URL", "redis://127.0.0.1:6379/0"))
    hub = Hub(client, os.environ.get("HUB_REDIS_PREFIX", "hub"))
    delay = float(os.environ.get("AGENT_STEP_DELAY", "0.5"))

    base = {"workflow": workflow, "title": "schema migration", "agent": "python"}
    hub.publish(topic, {**base, "status": "queued", "progress": 0})
    for i, step in enumerate(["plan", "generate", "compile", "test"]):
        time.sleep(delay)
        hub.publish(topic, {**base, "status": "running", "step": step, "progress": round((i + 1) / 5, 2)})
    event_id = hub.publish(topic, {**base, "status": "succeeded", "progress": 1})
    print(event_id)
    return 0


if __name__ == "__main__":
    sys.exit(main())
