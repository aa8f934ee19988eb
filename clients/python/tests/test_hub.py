"""End to end: events published by the package reach a browser's SSE stream from the real hub."""
import http.client
import json
import urllib.parse

from syncverse_hub import Publisher


class SSE:
    """A line-reading SSE client over http.client, as a browser's EventSource reads the stream."""

    def __init__(self, url, topic, last_event_id=None):
        u = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        self.conn.request("GET", "/events?" + urllib.parse.urlencode({"topic": topic}), headers=headers)
        self.resp = self.conn.getresponse()

    def frame(self):
        """The next frame's fields (comments such as :heartbeat are skipped); data lines are joined by \\n."""
        fields = {}
        while True:
            line = self.resp.readline()
            assert line, f"stream ended; frame so far {fields}"
            line = line.decode().rstrip("\r\n")
            if line == "":
                if fields:
                    return fields
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            fields[name] = fields[name] + "\n" + value if name == "data" and name in fields else value

    def event(self):
        """The next frame that is an event (not a bare retry hint)."""
        while True:
            f = self.frame()
            if "data" in f:
                return f

    def close(self):
        self.conn.close()


def test_hub_delivers_published_events_over_sse(hub, redis_server):
    client = redis_server.client()
    pub = Publisher(client, prefix=hub.prefix)
    topic = "py.e2e"
    stored = [
        (pub.progress(topic, "wf-py", step="compile", progress=0.4, status="running", agent="python"), "progress",
         {"workflow": "wf-py", "step": "compile", "progress": 0.4, "status": "running", "agent": "python"}),
        (pub.publish(topic, "lock", {"key": "db", "holder": "py", "fence": 3, "state": "acquired", "ttl_ms": 5000},
                     idempotency_key="lock/1"), "lock",
         {"key": "db", "holder": "py", "fence": 3, "state": "acquired", "ttl_ms": 5000}),
    ]
    assert pub.publish(topic, "lock", {"key": "db", "holder": "py", "fence": 3, "state": "acquired", "ttl_ms": 5000},
                       idempotency_key="lock/1").duplicate

    stream = SSE(hub.url, topic, last_event_id="0-0")
    try:
        assert stream.resp.status == 200, stream.resp.read(2000)
        assert stream.resp.getheader("Content-Type") == "text/event-stream"
        assert stream.resp.getheader("Cache-Control") == "no-cache"
        assert "retry" in stream.frame(), "the stream opens with a retry hint"
        for res, typ, data in stored:  # replayed from the stream, the duplicate not among them
            f = stream.event()
            assert (f.get("id"), f.get("event"), json.loads(f["data"])) == (res.id, typ, data)
        live = pub.publish(topic, "log", "multi\nline")  # delivered live now that the stream is open
        f = stream.event()
        assert (f.get("id"), f.get("event"), json.loads(f["data"])) == (live.id, "log", "multi\nline")
    finally:
        stream.close()
        client.close()
