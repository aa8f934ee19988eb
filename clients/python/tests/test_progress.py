"""The progress helper fills the fields the console reads and refuses what it would misread."""
import json

import pytest

from syncverse_hub import InvalidEvent, Publisher, progress

from test_publisher import entries


def test_progress_fields():
    assert progress("wf-1") == {"workflow": "wf-1"}
    full = progress("wf-1", title="schema migration", step="compile", progress=0.4, status="running",
                    message="3 of 7", agent="python", eta_s=12.5, attempt=2)
    assert full == {"workflow": "wf-1", "title": "schema migration", "step": "compile", "progress": 0.4,
                    "status": "running", "message": "3 of 7", "agent": "python", "eta_s": 12.5, "attempt": 2}
    assert progress("wf-1", progress=1, status="succeeded", eta_s=0) == {
        "workflow": "wf-1", "progress": 1, "status": "succeeded", "eta_s": 0}


@pytest.mark.parametrize("args,want", [
    (dict(workflow=""), "workflow: empty \\(at least 1 character\\)"),
    (dict(workflow=7), "workflow: 7 is a number, not a string"),
    (dict(progress=40), "invalid progress data: progress: 40 is not between 0 and 1 \\(a fraction: 0.4 for 40%\\)"),
    (dict(progress=-0.1), "progress: -0.1 is not between 0 and 1"),
    (dict(progress=True), "progress: true is a boolean, not a number"),
    (dict(progress=float("nan")), "progress: nan is not a finite number"),
    (dict(progress="0.5"), 'progress: "0.5" is a string, not a number'),
    (dict(status="runing"), 'status: "runing" is not one of queued, running, succeeded, failed, cancelled'),
    (dict(eta_s=-1), "eta_s: -1 is less than 0"),
    (dict(step=3), "step: 3 is a number, not a string"),
])
def test_progress_refuses(args, want):
    args = {"workflow": "wf-1", **args}
    with pytest.raises(ValueError, match=want):
        progress(args.pop("workflow"), **args)


def test_publisher_progress(rdb, prefix):
    pub = Publisher(rdb, prefix=prefix)
    res = pub.progress("p", "wf-1", step="test", progress=0.8, status="running", idempotency_key="wf-1/test")
    assert pub.progress("p", "wf-1", step="test", progress=0.8, status="running", idempotency_key="wf-1/test").duplicate
    [(i, f)] = entries(rdb, prefix, "p")
    assert (i, f["t"]) == (res.id, "progress")
    assert json.loads(f["d"]) == {"workflow": "wf-1", "step": "test", "progress": 0.8, "status": "running"}
    res = pub.progress("p", "wf-1", status="done")  # validation="warn", the default: published, with a warning
    assert res.warnings == ('status: "done" is not one of queued, running, succeeded, failed, cancelled',)


def test_publisher_validation_modes(rdb, prefix, caplog):
    """validation=warn publishes data its schema refuses and returns the problems, as the hub's POST /publish
    answers them; strict refuses it and publishes nothing; off neither checks nor warns."""
    bad = {"workflow": "wf-1", "progress": 40}
    want = ("progress: 40 is not between 0 and 1",)

    res = Publisher(rdb, prefix=prefix).publish("warn", "progress", bad)
    assert res.id and res.warnings == want
    assert "progress: 40 is not between 0 and 1 (validation: warn, published all the same)" in caplog.text
    assert Publisher(rdb, prefix=prefix).publish("warn", None, {"workflow": "wf-1", "progress": 0.4}).warnings == ()
    assert Publisher(rdb, prefix=prefix).publish("warn", "build-log", {"progress": 40}).warnings == ()
    with Publisher(rdb, prefix=prefix).batch() as b:
        b.progress("warn", "wf-1", progress=40)
    assert b.results[0].warnings == want
    assert len(entries(rdb, prefix, "warn")) == 4

    with pytest.raises(InvalidEvent, match="publish to strict: progress data does not match docs/schemas/progress.json: "
                                           "progress: 40 is not between 0 and 1"):
        Publisher(rdb, prefix=prefix, validation="strict").progress("strict", "wf-1", progress=40)
    assert entries(rdb, prefix, "strict") == []

    caplog.clear()
    assert Publisher(rdb, prefix=prefix, validation="off").publish("off", "progress", bad).warnings == ()
    assert caplog.text == ""
    with pytest.raises(ValueError, match="validation must be one of off, warn, strict, got 'loud'"):
        Publisher(rdb, prefix=prefix, validation="loud")
