"""Batches: one pipeline of script calls, validated whole before anything is sent."""
import pytest

from syncverse_hub import BatchError, Event, InvalidEvent, Publisher, PublishResult
from syncverse_hub import publisher as publisher_module

from test_publisher import entries, keys_of


def test_publish_batch_one_pipeline_in_order(recording, prefix):
    pub = Publisher(recording, prefix=prefix)
    seen = pub.publish("b", "x", 0, idempotency_key="k0")
    recording.sent.clear()
    results = pub.publish_batch([
        ("a", "progress", {"workflow": "wf-1", "progress": 0.1}),
        Event("b", "x", 1),
        ("a", None, {"workflow": "wf-1", "progress": 0.2}, "wf-1/2"),
        Event("b", "x", 0, idempotency_key="k0"),  # seen before: the first id, nothing stored
        ("a", "progress", {"workflow": "wf-1", "progress": 0.3}),
    ])
    assert recording.sent == ["PIPELINE"], f"sent {recording.sent}, want one pipeline and nothing else"
    assert [type(r) for r in results] == [PublishResult] * 5
    assert results[3] == PublishResult(seen.id, True, 0)
    a = entries(recording, prefix, "a")
    assert [i for i, _ in a] == [results[0].id, results[2].id, results[4].id]
    assert [f["p"] for _, f in a] == ["0-0", results[0].id, results[2].id], "prev chains the topic's events"
    assert [f["d"] for _, f in a] == ['{"workflow":"wf-1","progress":0.%d}' % n for n in (1, 2, 3)]
    assert [i for i, _ in entries(recording, prefix, "b")] == [seen.id, results[1].id]


def test_invalid_event_in_a_batch_sends_none(recording, prefix):
    pub = Publisher(recording, prefix=prefix)
    with pytest.raises(InvalidEvent, match="invalid topic: character ' '"):
        pub.publish_batch([("a", "x", 1), ("a b", "x", 2), ("a", "x", 3)])
    with pytest.raises(InvalidEvent, match="data cannot be encoded"):
        pub.publish_batch([("a", "x", 1), ("a", "x", {1j})])
    assert recording.sent == [] and keys_of(recording, prefix) == []


def test_batch_context_manager(rdb, prefix):
    pub = Publisher(rdb, prefix=prefix)
    with pub.batch() as b:
        assert b.progress("a", "wf-1", step="plan", progress=0, status="queued") == 0
        assert b.publish("a", "lock", {"key": "k", "holder": "me", "fence": 1, "state": "acquired", "ttl_ms": 500}) == 1
        assert len(b) == 2 and b.results is None
        assert keys_of(rdb, prefix) == [], "nothing is sent before the block ends"
    assert [r.id for r in b.results] == [i for i, _ in entries(rdb, prefix, "a")]
    assert [f["t"] for _, f in entries(rdb, prefix, "a")] == ["progress", "lock"]
    with pytest.raises(RuntimeError, match="already sent"):
        b.publish("a", "x", 1)
    with pytest.raises(RuntimeError, match="already sent"):
        b.send()

    with pytest.raises(KeyError):
        with pub.batch() as dropped:
            dropped.publish("c", "x", 1)
            raise KeyError("the caller's own failure")
    assert dropped.results is None and rdb.exists(f"{prefix}:{{c}}:events") == 0, "a failed block sends nothing"
    assert pub.publish_batch([]) == []


def test_batch_reports_which_events_failed(rdb, prefix, monkeypatch):
    # With the client's check off, the script refuses the reserved type: that event fails, the others are stored.
    monkeypatch.setattr(publisher_module, "check_type", lambda t: None)
    pub = Publisher(rdb, prefix=prefix)
    with pytest.raises(BatchError, match="1 of 3 events not published; first, event 1: .*reserved event type") as e:
        pub.publish_batch([("a", "x", 1), ("a", "reset", {}), ("a", "x", 3)])
    ok1, failed, ok3 = e.value.results
    assert isinstance(failed, InvalidEvent)
    assert [i for i, _ in entries(rdb, prefix, "a")] == [ok1.id, ok3.id]
