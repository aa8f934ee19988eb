#!/usr/bin/env python3
"""An agent that reports one workflow's progress to the SyncVerse hub through Redis, with the hub's Python package.

The package (clients/python, `pip install ./clients/python`) runs the hub's own publish script, pubsub/publish.lua,
which it ships: each event is appended to the topic's stream and published live, atomically.

    pip install ./clients/python
    HUB_REDIS_URL=redis://127.0.0.1:6379/0 python3 examples/python/agent.py project.42 wf-py-1

(or, from a checkout without installing: PYTHONPATH=clients/python/src python3 examples/python/agent.py ...)

Environment: HUB_REDIS_URL (default redis://127.0.0.1:6380/0, the embedded Redis of hub --demo), HUB_REDIS_PREFIX (default hub),
AGENT_STEP_DELAY seconds between steps (default 0.5). On Redis Cluster use redis.cluster.RedisCluster.from_url:
the keys and the channel of one topic share a hash tag, so the script runs on one shard.
"""
import os
import sys
import time
import uuid

import redis

import syncverse_hub


def main():
    if len(sys.argv) != 3:
        print("usage: agent.py TOPIC WORKFLOW", file=sys.stderr)
        return 2
    topic, workflow = sys.argv[1], sys.argv[2]
    client = redis.Redis.from_url(os.environ.get("HUB_REDIS_URL", "redis://127.0.0.1:6380/0"))
    hub = syncverse_hub.Publisher(client, prefix=os.environ.get("HUB_REDIS_PREFIX", "hub"))
    delay = float(os.environ.get("AGENT_STEP_DELAY", "0.5"))

    # Every event has an idempotency key, so the package may retry it after a connection error or a failover
    # without storing it twice. The run id keeps a second run of the same workflow from being taken for a retry.
    run = uuid.uuid4().hex[:8]
    fields = {"title": "schema migration", "agent": "python"}
    hub.progress(topic, workflow, status="queued", progress=0, idempotency_key=f"{workflow}/{run}/queued", **fields)
    steps = ["plan", "generate", "compile", "test"]
    for i, step in enumerate(steps):
        time.sleep(delay)
        hub.progress(topic, workflow, status="running", step=step, progress=round((i + 1) / (len(steps) + 1), 2),
                     idempotency_key=f"{workflow}/{run}/{step}", **fields)
    last = hub.progress(topic, workflow, status="succeeded", progress=1, idempotency_key=f"{workflow}/{run}/done",
                        **fields)
    print(last.id)
    return 0


if __name__ == "__main__":
    sys.exit(main())
