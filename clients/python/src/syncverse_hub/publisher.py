"""Publisher: events to the hub through Redis, with the hub's publish script (the Python side of pubsub.Publisher)."""
import datetime
import json
import logging
import random
import time
from typing import Any, NamedTuple, Optional

import redis

from .progress import build as progress_data
from .schema import check_validation, problems
from .script import publish_script
from .validate import (DEFAULT_MAX_EVENT_BYTES, DEFAULT_TYPE, MAX_IDEMPOTENCY_TTL, MAX_PUBLISHER_LEN, EventTooLarge,
                       IdempotencyConflict, InvalidEvent, check_key, check_topic, check_traceparent, check_type,
                       encode_data)

DEFAULT_PREFIX = "hub"             # redis.prefix
DEFAULT_MAX_LEN = 10000            # history.max_len
DEFAULT_IDEMPOTENCY_TTL = 600.0    # history.idempotency_ttl, seconds
DEFAULT_RETRY_BUDGET = 5.0         # redis.publish_retry, seconds
DEFAULT_VALIDATION = "warn"        # events.validation

log = logging.getLogger("syncverse_hub")

# The script's refusals (error replies "ERR <text>") and the error each is raised as, as pubsub's scriptRefusals.
_REFUSALS = (
    ("invalid event type", InvalidEvent),
    ("reserved event type", InvalidEvent),
    ("event too large", EventTooLarge),
    ("data is not valid JSON", InvalidEvent),
    ("invalid idempotency key", InvalidEvent),
    ("invalid idempotency ttl", InvalidEvent),
    ("idempotency key reused with other content", IdempotencyConflict),
)

# Errors after which a publish with an idempotency key is sent again: the connection failed, or the server is in a
# failover ("not here, not now"). The key makes sure an attempt that was stored before it failed is not stored twice.
_RETRYABLE = tuple(getattr(redis.exceptions, n) for n in (
    "ConnectionError", "TimeoutError", "ReadOnlyError", "BusyLoadingError", "ClusterDownError", "TryAgainError",
    "MasterDownError") if hasattr(redis.exceptions, n))


class PublishResult(NamedTuple):
    """The answer to a publish, as pubsub.Result."""
    id: str                  # the event's stream id, <ms>-<seq>
    duplicate: bool = False  # the key had been seen: id is the first event's; nothing was stored or delivered now
    retries: int = 0         # attempts after the first
    warnings: tuple = ()     # validation="warn": what docs/schemas says of the data; the event was published anyway


class Event(NamedTuple):
    """One event of a batch."""
    topic: str
    type: Optional[str]
    data: Any
    idempotency_key: Optional[str] = None
    traceparent: Optional[str] = None


class BatchError(Exception):
    """Some events of a batch were not published. results[i] is a PublishResult, or the exception that says why
    event i failed; the failed ones may be sent again (safely so for those with an idempotency key)."""

    def __init__(self, results):
        self.results = results
        failed = [(i, r) for i, r in enumerate(results) if isinstance(r, Exception)]
        super().__init__(f"{len(failed)} of {len(results)} events not published; first, event {failed[0][0]}: "
                         f"{failed[0][1]}")


def _seconds(v):
    return v.total_seconds() if isinstance(v, datetime.timedelta) else float(v)


class Publisher:
    """Publishes events with the hub's publish script; safe to share between threads, as the redis client is.

    client is a redis.Redis (or another redis-py client with register_script). The other settings are the hub's of
    the same name and must match the hub's configuration: prefix (redis.prefix), max_len (history.max_len), max_age
    (history.max_age, seconds or a timedelta; None keeps old events), max_event_bytes (limits.max_event_bytes),
    idempotency_ttl (history.idempotency_ttl, at most 24 h), sharded (redis.sharded_pubsub). retry_budget is how
    long a publish with an idempotency key is retried after a connection error or a failover reply (negative: never);
    one without a key is never retried, since it might be stored twice. publisher is the name this publisher's
    idempotency keys are kept under (as the hub keeps a token subject's): another publisher's key of the same name
    is another key. The empty name, the default, is shared by every publisher that gives none.

    validation is the hub's events.validation for the data of progress events, held to docs/schemas/progress.json:
    "warn" (the default, as the hub's) publishes data that does not match, returns the problems in
    PublishResult.warnings ("progress: 40 is not between 0 and 1") and logs them on the "syncverse_hub" logger;
    "strict" raises InvalidEvent naming them and publishes nothing; "off" checks nothing.
    """

    def __init__(self, client, *, prefix=DEFAULT_PREFIX, max_len=DEFAULT_MAX_LEN, max_age=None,
                 max_event_bytes=DEFAULT_MAX_EVENT_BYTES, idempotency_ttl=DEFAULT_IDEMPOTENCY_TTL,
                 retry_budget=DEFAULT_RETRY_BUDGET, sharded=False, publisher="", validation=DEFAULT_VALIDATION):
        self.client = client
        self.validation = check_validation(validation)
        self.prefix = prefix or DEFAULT_PREFIX
        self.max_len = int(max_len)
        self.max_age = None if max_age is None else _seconds(max_age)
        self.max_event_bytes = int(max_event_bytes)
        self.idempotency_ttl_ms = int(_seconds(idempotency_ttl) * 1000)
        self.retry_budget = _seconds(retry_budget)
        if self.max_len < 1 or self.max_event_bytes < 1 or self.idempotency_ttl_ms < 1:
            raise ValueError("max_len, max_event_bytes and idempotency_ttl must be positive")
        if self.idempotency_ttl_ms > MAX_IDEMPOTENCY_TTL * 1000:
            raise ValueError(f"idempotency_ttl must be at most {MAX_IDEMPOTENCY_TTL:.0f} s (24 h)")
        if not isinstance(publisher, str) or len(publisher.encode()) > MAX_PUBLISHER_LEN:
            raise ValueError(f"publisher must be a str of at most {MAX_PUBLISHER_LEN} bytes")
        self.publisher = publisher
        # register_script runs the script with EVALSHA and, on NOSCRIPT (a restarted or flushed Redis), loads it and
        # runs it again; in a pipeline it makes sure the script is loaded before the pipeline is sent.
        self._script = client.register_script(publish_script(sharded))

    def publish(self, topic, type, data, idempotency_key=None, traceparent=None):
        """Publish one event and return its PublishResult (id, duplicate, retries).

        type None or "" means "progress". data is any JSON-encodable value, or bytes holding one JSON value. Invalid
        input raises InvalidEvent (EventTooLarge for oversized data), both ValueErrors, before anything is sent.
        With an idempotency_key the publish is safe to repeat for idempotency_ttl: a key seen before with the same
        type and data answers the first event's id with duplicate=True and stores nothing; with other type or data
        it raises IdempotencyConflict and stores nothing.
        traceparent, a W3C traceparent (e.g. of the OpenTelemetry span publishing it), is stored and delivered with
        the event, so the hub's spans join that trace; an invalid one is left out with a TraceParentIgnored warning
        and the event is published all the same.
        """
        keys, args, warnings = self._call(topic, type, data, idempotency_key, traceparent)
        started, retries = time.monotonic(), 0
        while True:
            try:
                return self._result(self._script(keys=keys, args=args), retries)._replace(warnings=warnings)
            except _RETRYABLE:
                if idempotency_key is None or self.retry_budget < 0:
                    raise
                wait = _backoff(retries)
                if time.monotonic() - started + wait > self.retry_budget:
                    raise
                time.sleep(wait)
                retries += 1
            except redis.exceptions.ResponseError as e:
                refused = _refusal(topic, e)
                if refused is e:
                    raise
                raise refused from e

    def progress(self, topic, workflow, *, idempotency_key=None, traceparent=None, **fields):
        """Publish a progress event of workflow and fields (see syncverse_hub.progress) on topic; the data is held to
        its schema by the publisher's validation."""
        return self.publish(topic, "progress", progress_data(workflow, **fields), idempotency_key, traceparent)

    def batch(self):
        """A Batch: `with publisher.batch() as b: b.publish(...)` sends every event in one round trip at the end."""
        return Batch(self)

    def publish_batch(self, events):
        """Publish several events in one round trip (a pipeline of script calls) and return their PublishResults.

        events are Events or (topic, type, data[, idempotency_key]) tuples. Every event is validated before anything
        is sent, so one invalid event raises InvalidEvent and publishes none. Events of one topic are stored in the
        order given. When some fail in Redis, BatchError says which; a batch is not retried.
        """
        b = Batch(self)
        for ev in events:
            b.publish(*ev)
        return b.send()

    def _call(self, topic, type, data, idempotency_key, traceparent=None):
        """Validate an event and return the script's KEYS and ARGV for it, and the warnings about its data."""
        event_type = type or DEFAULT_TYPE
        check_topic(topic)
        check_type(event_type)
        raw = encode_data(data, self.max_event_bytes)
        if idempotency_key is not None:
            check_key(idempotency_key)
        warnings = self._check(topic, event_type, raw)
        base = f"{self.prefix}:{{{topic}}}:"
        min_id = "" if self.max_age is None else str(int((time.time() - self.max_age) * 1000))
        keys = [base + "events", base + "state"]
        args = [base + "live", event_type, raw, self.max_len, self.max_event_bytes, min_id]
        if idempotency_key is not None:
            who = self.publisher.replace("%", "%25").replace(":", "%3A")
            keys.append(base + "idem:" + who + ":" + idempotency_key)
            args += [self.idempotency_ttl_ms, self.publisher]
        traceparent = check_traceparent(traceparent)
        if traceparent is not None:
            if idempotency_key is None:
                args += [0, ""]  # ARGV[7] and ARGV[8], not read without a key
            args.append(traceparent)
        return keys, args, warnings

    def _check(self, topic, event_type, raw):
        """Hold the data to its type's schema: the warnings in mode warn (logged), InvalidEvent in mode strict."""
        if self.validation == "off" or event_type != "progress":  # the one type with a schema here
            return ()
        found = tuple(problems(event_type, json.loads(raw)))
        if not found:
            return ()
        what = f"{event_type} data does not match docs/schemas/{event_type}.json: {'; '.join(found)}"
        if self.validation == "strict":
            raise InvalidEvent(f"publish to {topic}: {what}")
        log.warning("publish to %s: %s (validation: warn, published all the same)", topic, what)
        return found

    @staticmethod
    def _result(reply, retries=0):
        """Read the script's answer: an id, or [id, duplicate] when it was given a key."""
        if isinstance(reply, (list, tuple)) and len(reply) == 2 and reply[1] in (0, 1):
            return PublishResult(_text(reply[0]), reply[1] == 1, retries)
        if isinstance(reply, (bytes, str)):
            return PublishResult(_text(reply), False, retries)
        raise redis.exceptions.ResponseError(f"publish script answered {reply!r}, want an id or [id, duplicate]")


class Batch:
    """Events collected to be sent in one round trip. Each publish or progress validates its event at once (raising
    InvalidEvent before anything is sent); send, or leaving the with block without an exception, sends them all.
    A with block left by an exception sends nothing. results holds the PublishResults once sent."""

    def __init__(self, publisher):
        self._pub = publisher
        self._calls = []
        self.results = None

    def publish(self, topic, type, data, idempotency_key=None, traceparent=None):
        """Add an event; return its index in results."""
        if self.results is not None:
            raise RuntimeError("batch already sent")
        keys, args, warnings = self._pub._call(topic, type, data, idempotency_key, traceparent)
        self._calls.append((topic, (keys, args), warnings))
        return len(self._calls) - 1

    def progress(self, topic, workflow, *, idempotency_key=None, traceparent=None, **fields):
        return self.publish(topic, "progress", progress_data(workflow, **fields), idempotency_key, traceparent)

    def send(self):
        """Send every event in one pipeline; return their PublishResults or raise BatchError."""
        if self.results is not None:
            raise RuntimeError("batch already sent")
        if not self._calls:
            self.results = []
            return self.results
        pipe = self._pub.client.pipeline(transaction=False)
        for _, (keys, args), _ in self._calls:
            self._pub._script(keys=keys, args=args, client=pipe)
        replies = pipe.execute(raise_on_error=False)
        results = []
        for (topic, _, warnings), reply in zip(self._calls, replies):
            if isinstance(reply, redis.exceptions.ResponseError):
                results.append(_refusal(topic, reply))
            elif isinstance(reply, Exception):
                results.append(reply)
            else:
                try:
                    results.append(Publisher._result(reply)._replace(warnings=warnings))
                except redis.exceptions.ResponseError as e:
                    results.append(e)
        self.results = results
        if any(isinstance(r, Exception) for r in results):
            raise BatchError(results)
        return results

    def __len__(self):
        return len(self._calls)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.send()
        return False


def _refusal(topic, err):
    """The error a script error reply stands for: InvalidEvent / EventTooLarge for a refusal, else err itself."""
    msg = str(err)
    for text, kind in _REFUSALS:
        if text in msg:
            return kind(f"publish to {topic}: the publish script refused it: {text}")
    return err


def _text(v):
    return v.decode() if isinstance(v, bytes) else v


def _backoff(n):
    """The wait before retry n+1: 25 ms doubling to at most 800 ms, jittered down by up to half (as pubsub's)."""
    d = 0.025 * (1 << min(n, 5))
    return d / 2 + random.uniform(0, d / 2)
