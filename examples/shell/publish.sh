#!/bin/sh
# An agent in shell: reports one workflow's progress to the SyncVerse hub with redis-cli and the hub's publish
# script (docs/publishing.md, "Any Redis client: the publish script"), which stores the event in the topic's stream and publishes it live.
#
#   HUB_REDIS_URL=redis://127.0.0.1:6379/0 ./publish.sh project.42 wf-sh-1
#
# Environment: HUB_REDIS_URL (default redis://127.0.0.1:6380/0, the embedded Redis of hub --demo), HUB_REDIS_PREFIX (default hub), AGENT_STEP_DELAY
# seconds between steps (default 1). On Redis Cluster add -c to redis-cli: one topic's keys share a hash tag.
set -eu

if [ $# -ne 2 ]; then
  echo "usage: publish.sh TOPIC WORKFLOW" >&2
  exit 2
fi
topic=$1
workflow=$2
url=${HUB_REDIS_URL:-redis://127.0.0.1:6380/0}
prefix=${HUB_REDIS_PREFIX:-hub}
delay=${AGENT_STEP_DELAY:-1}
# The name this agent's idempotency keys are kept under; in the record's key its % is written %25 and its : %3A.
publisher=${AGENT_PUBLISHER:-shell}
who=$(printf '%s' "$publisher" | sed 's/%/%25/g; s/:/%3A/g')

# The hub's publish script, read from the hub's own file.
script=$(cat "$(dirname "$0")/../../pubsub/publish.lua")

# publish TYPE DATA: prints the event id; fails on an error reply (redis-cli itself exits 0 on those). Each event
# gets a fresh idempotency key (kept 10 minutes), so sending it again after a connection error or a failover reply
# cannot store it twice.
publish() {
  key=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  for attempt in 1 2 3; do
    out=$(redis-cli -u "$url" EVAL "$script" 3 "$prefix:{$topic}:events" "$prefix:{$topic}:state" \
      "$prefix:{$topic}:idem:$who:$key" "$prefix:{$topic}:live" "$1" "$2" 10000 65536 '' 600000 "$publisher" 2>&1) || true
    id=$(printf '%s\n' "$out" | head -n 1)
    case $id in
      ERR*) break ;; # refused: sending it again cannot help
      *[0-9]-[0-9]*) echo "$id"; return 0 ;;
    esac
    sleep "$attempt"
  done
  echo "publish.sh: $out" >&2
  return 1
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
