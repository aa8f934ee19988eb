"""The progress helper fills the fields the console reads and refuses what it would misread."""
import json

import pytest

from syncverse_hub import Publisher, progress

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
    (dict(workflow=""), "workflow must be a non-empty string"),
    (dict(workflow=7), "workflow must be a non-empty string"),
    (dict(progress=40), "from 0 to 1 \\(a fraction: 0.4 for 40%\\), got 40"),
    (dict(progress=-0.1), "from 0 to 1"),
    (dict(progress=True), "from 0 to 1"),
    (dict(progress=float("nan")), "from 0 to 1"),
    (dict(progress="0.5"), "from 0 to 1"),
    (dict(status="runing"), "status must be one of queued, running, succeeded, failed, cancelled, got 'runing'"),
    (dict(eta_s=-1), "eta_s must be a number of seconds"),
    (dict(step=3), "step must be a string"),
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
    with pytest.raises(ValueError, match="status"):
        pub.progress("p", "wf-1", status="done")
