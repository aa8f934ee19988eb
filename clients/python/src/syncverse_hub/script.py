"""The hub's publish script, shipped inside the package.

publish.lua beside this file is a byte-for-byte copy of the hub's pubsub/publish.lua, kept as package data. A copy,
not a file read at build time: pip builds a package from an sdist or from a copy of clients/python where
../../pubsub does not exist, so reading it at build would need a custom build hook and would break every install
that is not from a checkout. Drift is what a copy risks, so tests/test_script.py (pytest) and the hub's Go test
TestPythonClientShipsThePublishScript compare the two files byte for byte, and the wheel test checks that the copy is
what a built wheel carries.
"""
from importlib import resources

# The script's KEYS and ARGV (pubsub/script.go documents them):
#   KEYS[1] <prefix>:{<topic>}:events   KEYS[2] <prefix>:{<topic>}:state
#   KEYS[3] optional <prefix>:{<topic>}:idem:<publisher, % as %25 and : as %3A>:<key>
#   ARGV[1] <prefix>:{<topic>}:live     ARGV[2] type    ARGV[3] data (one JSON value)
#   ARGV[4] history.max_len             ARGV[5] max event bytes
#   ARGV[6] min id for MINID trimming or ""           ARGV[7] with KEYS[3]: the key's TTL in ms (at most 24 h)
#   ARGV[8] with KEYS[3]: the publisher
#   ARGV[9] optional: a W3C traceparent, stored as "tp" and in the envelope as "trace" (ARGV[7..8] given, unread,
#           without KEYS[3]); an invalid one is ignored by the script
# It answers the new id, or {id, 0|1} with KEYS[3] (1: the key seen before with the same type and data, nothing
# stored or delivered); the key seen before with other type or data is the error "idempotency key reused with other
# content".


def publish_script(sharded=False):
    """Return the publish script's text; sharded, with SPUBLISH in place of PUBLISH (redis.sharded_pubsub)."""
    text = resources.files(__package__).joinpath("publish.lua").read_text(encoding="utf-8")
    if sharded:
        text = text.replace("redis.call('PUBLISH',", "redis.call('SPUBLISH',", 1)
    return text
