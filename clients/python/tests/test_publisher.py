"""Publisher.publish against a real redis-server: what it stores and delivers, what it refuses before sending."""
import datetime
import json
import time

import pytest
import redis

import syncverse_hub
from syncverse_hub import EventTooLarge, InvalidEvent, Publisher
from syncverse_hub import publisher as publisher_module


def keys_of(rdb, prefix):
    return sorted(k.decode() for k in rdb.scan_iter(match=prefix + ":*"))


def entries(rdb, prefix, topic):
    """The topic's stream as (id, {field: value}) with text fields."""
    return [(i.decode(), {k.decode(): v.decode() for k, v in f.items()})
            for i, f in rdb.xrange(f"{prefix}:{{{topic}}}:events")]


def test_publish_stores_and_delivers_the_envelope(rdb, prefix):
    pub = Publisher(rdb, prefix=prefix)
    live = rdb.pubsub()
    live.subscribe(f"{prefix}:{{t.1}}:live")
    assert live.get_message(timeout=5)["type"] == "subscribe"

    first = pub.publish("t.1", "progress", {"workflow": "wf-1", "progress": 0.5, "title": "é ✓"})
    second = pub.publish("t.1", "log.line", "plain text")
    assert first.duplicate is False and first.retries == 0
    assert first.id < second.id or first.id.split("-")[0] < second.id.split("-")[0]

    assert entries(rdb, prefix, "t.1") == [
        (first.id, {"p": "0-0", "t": "progress", "d": '{"workflow":"wf-1","progress":0.5,"title":"é ✓"}'}),
        (second.id, {"p": first.id, "t": "log.line", "d": '"plain text"'}),
    ]
    got = []
    while len(got) < 2:
        m = live.get_message(timeout=5)
        assert m is not None, f"live channel: got {got}, want 2 envelopes"
        got.append(json.loads(m["data"]))
    live.close()
    assert got == [
        {"id": first.id, "prev": "0-0", "type": "progress", "data": {"workflow": "wf-1", "progress": 0.5, "title": "é ✓"}},
        {"id": second.id, "prev": first.id, "type": "log.line", "data": "plain text"},
    ]
    # The script keeps the latest progress event per workflow in the state hash, for the console's snapshot.
    state = rdb.hgetall(f"{prefix}:{{t.1}}:state")
    assert json.loads(state[b"wf:wf-1"])["id"] == first.id
    assert state[b"_cursor"].decode() == second.id


@pytest.mark.parametrize("given", [None, ""])
def test_no_type_means_progress(rdb, prefix, given):
    res = Publisher(rdb, prefix=prefix).publish("t", given, {"workflow": "wf-1"})
    assert entries(rdb, prefix, "t") == [(res.id, {"p": "0-0", "t": "progress", "d": '{"workflow":"wf-1"}'})]


def test_bytes_data_is_sent_as_given(rdb, prefix):
    res = Publisher(rdb, prefix=prefix).publish("t", "x", b' {"a": [1, 2]} ')
    assert entries(rdb, prefix, "t") == [(res.id, {"p": "0-0", "t": "x", "d": ' {"a": [1, 2]} '})]


def test_idempotency_key_answers_the_first_id(rdb, prefix):
    pub = Publisher(rdb, prefix=prefix, idempotency_ttl=60)
    first = pub.publish("t", "progress", {"workflow": "wf-1", "step": "a"}, idempotency_key="wf-1/a")
    again = pub.publish("t", "progress", {"workflow": "wf-1", "step": "a"}, idempotency_key="wf-1/a")
    other = pub.publish("t", "progress", {"workflow": "wf-1", "step": "b"}, idempotency_key="wf-1/b")
    assert first == syncverse_hub.PublishResult(first.id, False, 0)
    assert again == syncverse_hub.PublishResult(first.id, True, 0), "the same key again: the first id, duplicate"
    assert other.id != first.id and not other.duplicate
    assert [i for i, _ in entries(rdb, prefix, "t")] == [first.id, other.id]
    record = f"{prefix}:{{t}}:idem::wf-1/a"
    assert rdb.get(record).decode().split(" ")[0] == first.id
    assert 55_000 < rdb.pttl(record) <= 60_000


def test_idempotency_keys_are_each_publishers_own(rdb, prefix):
    b = Publisher(rdb, prefix=prefix, publisher="agent-b")
    a = Publisher(rdb, prefix=prefix, publisher="agent-a")
    colon = Publisher(rdb, prefix=prefix, publisher="agent:a")
    first = b.publish("t", "progress", {"status": "running"}, idempotency_key="wf-7/deploy")
    mine = a.publish("t", "progress", {"status": "succeeded"}, idempotency_key="wf-7/deploy")
    assert not mine.duplicate and mine.id != first.id, "another publisher's key of the same name is another key"
    assert not colon.publish("t", "progress", {}, idempotency_key="k").duplicate
    assert rdb.exists(f"{prefix}:{{t}}:idem:agent%3Aa:k")
    with pytest.raises(syncverse_hub.IdempotencyConflict, match="reused with other content"):
        a.publish("t", "progress", {"status": "failed"}, idempotency_key="wf-7/deploy")
    assert a.publish("t", "progress", {"status": "succeeded"}, idempotency_key="wf-7/deploy") == mine._replace(duplicate=True)
    assert len(entries(rdb, prefix, "t")) == 3


def test_idempotency_ttl_ceiling(rdb, prefix):
    with pytest.raises(ValueError, match="at most 86400 s"):
        Publisher(rdb, prefix=prefix, idempotency_ttl=86401)


def test_decoded_responses_client(redis_server, prefix):
    client = redis_server.client(decode_responses=True)
    pub = Publisher(client, prefix=prefix)
    res = pub.publish("t", "progress", {"workflow": "wf-1"}, idempotency_key="k")
    assert isinstance(res.id, str) and res == pub.publish("t", "progress", {"workflow": "wf-1"}, idempotency_key="k")._replace(duplicate=False)
    client.close()


@pytest.mark.parametrize("reserved", ["reset", "auth-expired", "presence", "health"])
def test_reserved_types_refused_before_sending(recording, prefix, reserved):
    pub = Publisher(recording, prefix=prefix)
    with pytest.raises(ValueError, match=f"'{reserved}' is the hub's own \\(reserved: reset, auth-expired, presence, health\\)"):
        pub.publish("t", reserved, {"workflow": "wf-1"})
    with pytest.raises(InvalidEvent, match="reserved"):
        pub.publish_batch([("t", "progress", {}), ("t", reserved, {})])
    with pytest.raises(InvalidEvent, match="reserved"):
        with pub.batch() as b:
            b.publish("t", reserved, {})
    assert recording.sent == [], "a refused event must send nothing"
    assert keys_of(recording, prefix) == []


DEEP = "[" * 1001 + "]" * 1001


def nested(depth):
    v = []
    for _ in range(depth - 1):
        v = [v]
    return v


REFUSED = [
    ("empty topic", dict(topic=""), "invalid topic"),
    ("topic with a space", dict(topic="a b"), "character ' ' at 1"),
    ("topic with a brace", dict(topic="{a}"), "character '{' at 0"),
    ("topic with a star", dict(topic="a*"), "character '\\*' at 1"),
    ("topic too long", dict(topic="t" * 129), "129 characters, at most 128"),
    ("upper-case type", dict(type="Progress"), "character 'P' at 0"),
    ("type too long", dict(type="t" * 65), "65 characters, at most 64"),
    ("NaN", dict(data={"progress": float("nan")}), "cannot be encoded as JSON"),
    ("not encodable", dict(data={"when": object()}), "cannot be encoded as JSON"),
    ("lone surrogate", dict(data={"s": "\ud800"}), "lone UTF-16 surrogate"),
    ("bytes not JSON", dict(data=b"{nope"), "not one valid JSON value"),
    ("bytes of two values", dict(data=b"1 2"), "not one valid JSON value"),
    ("bytes NaN", dict(data=b"NaN"), "not one valid JSON value"),
    ("bytes not UTF-8", dict(data=b'"\xff"'), "not one valid JSON value"),
    ("bytes lone surrogate escape", dict(data=b'"\\ud800"'), "lone UTF-16 surrogate \\\\ud800"),
    ("bytes lone low surrogate", dict(data=b'"x\\udc00"'), "lone UTF-16 surrogate \\\\udc00"),
    ("bytes nested too deep", dict(data=DEEP.encode()), "nests deeper than 1000"),
    ("nested 1001 deep", dict(data=nested(1001)), "nests"),
    ("nested 500 deep", dict(data=json.loads("[" * 500 + "]" * 500)), None),  # accepted
    ("bytes nested 500 deep", dict(data=("[" * 500 + "]" * 500).encode()), None),
    ("key with a space", dict(idempotency_key="a b"), "character ' ' at 1"),
    ("empty key", dict(idempotency_key=""), "1 to 255 characters"),
    ("key too long", dict(idempotency_key="k" * 256), "1 to 255 characters"),
]


@pytest.mark.parametrize("change,want", [(c, w) for _, c, w in REFUSED], ids=[n for n, _, _ in REFUSED])
def test_invalid_events_refused_before_sending(recording, prefix, change, want):
    event = dict(topic="t", type="progress", data={"workflow": "wf-1"}, idempotency_key=None)
    event.update(change)
    pub = Publisher(recording, prefix=prefix)
    if want is None:
        assert pub.publish(**event).id
        return
    with pytest.raises(InvalidEvent, match=want) as e:
        pub.publish(**event)
    assert isinstance(e.value, ValueError)
    assert recording.sent == [] and keys_of(recording, prefix) == []


def test_data_size_limit(recording, prefix):
    pub = Publisher(recording, prefix=prefix, max_event_bytes=100)
    fits = "x" * 98  # the JSON string is 100 bytes with its quotes
    assert pub.publish("t", "log", fits).id
    with pytest.raises(EventTooLarge, match="data is 101 bytes, at most 100"):
        pub.publish("t", "log", fits + "y")
    with pytest.raises(EventTooLarge, match="data is 101 bytes, at most 100"):
        pub.publish("t", "log", fits[:-1] + "é")  # 100 characters, 101 bytes in UTF-8: the limit counts bytes
    assert recording.sent.count("EVALSHA") == 1
    with pytest.raises(EventTooLarge, match="at most 65536"):
        Publisher(recording, prefix=prefix).publish("t", "log", "x" * 65535)


def test_script_refusals_are_clear_errors(rdb, prefix, monkeypatch):
    # With the client's own check switched off, the script's refusal still comes back as InvalidEvent.
    monkeypatch.setattr(publisher_module, "check_type", lambda t: None)
    with pytest.raises(InvalidEvent, match="publish to t: the publish script refused it: reserved event type"):
        Publisher(rdb, prefix=prefix).publish("t", "health", {"workflow": "wf-1"})
    assert keys_of(rdb, prefix) == []


def test_evalsha_and_reload_after_script_flush(rdb, prefix, redis_server):
    pub = Publisher(rdb, prefix=prefix)
    before = rdb.info("commandstats")
    a = pub.publish("t", "x", 1)
    rdb.script_flush()  # as after a Redis restart: the next EVALSHA answers NOSCRIPT, and the script is loaded again
    b = pub.publish("t", "x", 2)
    rdb.script_flush()
    c, d = pub.publish_batch([("t", "x", 3), ("t", "x", 4)])
    after = rdb.info("commandstats")
    assert [i for i, _ in entries(rdb, prefix, "t")] == [a.id, b.id, c.id, d.id], "each event stored once, in order"
    calls = {k: after.get(f"cmdstat_{k}", {}).get("calls", 0) - before.get(f"cmdstat_{k}", {}).get("calls", 0)
             for k in ("evalsha", "eval")}
    assert calls["eval"] == 0 and calls["evalsha"] >= 4, f"commands run: {calls}"


class FlakyScript:
    """The registered script, failing its first `fails` calls with a connection error as a failover would."""

    def __init__(self, script, fails):
        self.script, self.fails, self.calls = script, fails, 0

    def __call__(self, **kwargs):
        self.calls += 1
        if self.calls <= self.fails:
            raise redis.exceptions.ConnectionError("Connection closed by server.")
        return self.script(**kwargs)


def test_retry_only_with_a_key(rdb, prefix):
    pub = Publisher(rdb, prefix=prefix)
    pub._script = FlakyScript(pub._script, fails=2)
    res = pub.publish("t", "x", 1, idempotency_key="k1")
    assert res.retries == 2 and not res.duplicate and pub._script.calls == 3
    pub._script = FlakyScript(pub._script.script, fails=1)
    with pytest.raises(redis.exceptions.ConnectionError):
        pub.publish("t", "x", 2)  # no key: it might have been stored, so it is not sent again
    assert pub._script.calls == 1
    budget = Publisher(rdb, prefix=prefix, retry_budget=0.05)
    budget._script = FlakyScript(budget._script, fails=1000)
    with pytest.raises(redis.exceptions.ConnectionError):
        budget.publish("t", "x", 3, idempotency_key="k3")
    assert 1 < budget._script.calls < 10
    assert [i for i, _ in entries(rdb, prefix, "t")] == [res.id]


def test_max_len_and_prefix_reach_the_script(rdb, prefix):
    pub = Publisher(rdb, prefix=prefix, max_len=5)
    ids = [pub.publish("t", "x", i).id for i in range(300)]
    n = rdb.xlen(f"{prefix}:{{t}}:events")
    assert n < 300, f"XLEN after 300 publishes with max_len=5 = {n}, want MAXLEN ~ 5 to trim"
    assert rdb.xrevrange(f"{prefix}:{{t}}:events", count=1)[0][0].decode() == ids[-1]


def test_sharded_publishes_with_spublish(redis_server, rdb, prefix):
    channel = f"{prefix}:{{t}}:live"
    conn = redis_server.client().connection_pool.get_connection("SSUBSCRIBE")
    try:
        conn.send_command("SSUBSCRIBE", channel)
        assert conn.read_response()[0] == b"ssubscribe"
        res = Publisher(rdb, prefix=prefix, sharded=True).publish("t", "x", {"a": 1})
        kind, ch, env = conn.read_response()
        assert (kind, ch) == (b"smessage", channel.encode())
        assert json.loads(env) == {"id": res.id, "prev": "0-0", "type": "x", "data": {"a": 1}}
    finally:
        conn.disconnect()


def test_max_age_trims_by_minid(rdb, prefix):
    pub = Publisher(rdb, prefix=prefix, max_age=datetime.timedelta(milliseconds=10))
    for i in range(150):
        pub.publish("t", "x", i)
    time.sleep(0.05)  # the first 150 are now older than max_age
    last = [pub.publish("t", "x", i) for i in range(150)][-1]
    n = rdb.xlen(f"{prefix}:{{t}}:events")
    assert n <= 200, f"XLEN after 300 publishes, 150 of them past max_age = {n}, want MINID ~ to trim a node of them"
    assert rdb.xrevrange(f"{prefix}:{{t}}:events", count=1)[0][0].decode() == last.id
    assert Publisher(rdb, prefix=prefix)._call("t", "x", 1, None)[1][5] == "", "no max_age: no MINID"


TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def test_traceparent_is_stored_and_delivered(rdb, prefix):
    pub = Publisher(rdb, prefix=prefix, publisher="agent-1")
    live = rdb.pubsub()
    live.subscribe(f"{prefix}:{{tr}}:live")
    assert live.get_message(timeout=5)["type"] == "subscribe"
    plain = pub.publish("tr", "progress", {"workflow": "wf-1"}, traceparent=TRACEPARENT)
    keyed = pub.progress("tr", "wf-1", idempotency_key="k-1", traceparent=TRACEPARENT)
    with pub.batch() as b:
        b.publish("tr", "log", "x", traceparent=TRACEPARENT)
    untraced = pub.publish("tr", "log", "y")
    stored = dict(entries(rdb, prefix, "tr"))
    for r in (plain, keyed, b.results[0]):
        assert stored[r.id]["tp"] == TRACEPARENT
    assert "tp" not in stored[untraced.id]
    envs = []
    while len(envs) < 4:
        m = live.get_message(timeout=5)
        assert m is not None, f"live channel: got {envs}, want 4 envelopes"
        if m["type"] == "message":
            envs.append(json.loads(m["data"]))
    live.close()
    assert [e.get("trace") for e in envs] == [TRACEPARENT, TRACEPARENT, TRACEPARENT, None]
    # The trace goes before data, where the hub's fast envelope reader looks for it.
    assert rdb.hget(f"{prefix}:{{tr}}:state", "wf:wf-1").decode().startswith(
        '{"id":"' + keyed.id + '","prev":"' + plain.id + '","type":"progress","trace":"' + TRACEPARENT + '","data":')


@pytest.mark.parametrize("bad", [
    "garbage", TRACEPARENT.upper(), TRACEPARENT + "-x", "ff" + TRACEPARENT[2:],
    "00-00000000000000000000000000000000-00f067aa0ba902b7-01", TRACEPARENT[:-2] + "04", 42,
])
def test_invalid_traceparent_is_ignored_with_a_warning(rdb, prefix, bad):
    pub = Publisher(rdb, prefix=prefix)
    with pytest.warns(syncverse_hub.TraceParentIgnored):
        res = pub.publish("bad.tp", "progress", {"workflow": "wf-1"}, traceparent=bad)
    assert "tp" not in dict(entries(rdb, prefix, "bad.tp"))[res.id]


def test_script_ignores_an_invalid_traceparent_it_is_given(rdb, prefix):
    """A publisher in another language that sends a bad traceparent still publishes its event, without one."""
    pub = Publisher(rdb, prefix=prefix)
    keys, args, _ = pub._call("raw", "progress", {"n": 1}, None)
    for bad in ("nope", TRACEPARENT.upper(), "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"):
        rid = pub._script(keys=keys, args=args + [0, "", bad]).decode()
        assert "tp" not in dict(entries(rdb, prefix, "raw"))[rid]
