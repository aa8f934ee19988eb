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
import uuid

import redis

# The hub's publish script, read from the hub's own file so it can never drift from what the hub runs.
PUBLISH_SCRIPT_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "pubsub", "publish.lua")

MAX_LEN = 10000           # history.max_len
MAX_EVENT_BYTES = 65536   # limits.max_event_bytes
IDEMPOTENCY_TTL_MS = 600000  # history.idempotency_ttl


class Hub:
    def __init__(self, client, prefix="hub"):
        self.prefix = prefix
        with open(PUBLISH_SCRIPT_FILE, encoding="utf-8") as f:
            self.script = client.register_script(f.read())

    def publish(self, topic, data, event_type="progress", idempotency_key=None):
        """Publish one event and return its id.

        Every event gets an idempotency key (a fresh one unless given), so a retry after an error cannot store it
        twice: the script answers the first event's id for a key it has seen in the last 10 minutes.
        """
        key = idempotency_key or str(uuid.uuid4())
        keys = [f"{self.prefix}:{{{topic}}}:events", f"{self.prefix}:{{{topic}}}:state",
                f"{self.prefix}:{{{topic}}}:idem:{key}"]
        args = [f"{self.prefix}:{{{topic}}}:live", event_type, json.dumps(data, separators=(",", ":")),
                MAX_LEN, MAX_EVENT_BYTES, "", IDEMPOTENCY_TTL_MS]
        for attempt in range(5):
            try:
                event_id, _duplicate = self.script(keys=keys, args=args)
                return event_id.decode() if isinstance(event_id, bytes) else event_id
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, redis.exceptions.ReadOnlyError):
                if attempt == 4:
                    raise
                time.sleep(0.1 * 2 ** attempt)


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
