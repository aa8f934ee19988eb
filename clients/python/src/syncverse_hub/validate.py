"""What every publisher checks before an event is sent: the same rules as the hub's pubsub.Validate."""
import json
import re

MAX_TOPIC_LEN = 128
MAX_TYPE_LEN = 64
MAX_KEY_LEN = 255
MAX_PUBLISHER_LEN = 1024        # bytes of the publisher's name, UTF-8
MAX_IDEMPOTENCY_TTL = 86400.0   # seconds: the script refuses a longer history.idempotency_ttl
DEFAULT_TYPE = "progress"
DEFAULT_MAX_EVENT_BYTES = 64 << 10  # limits.max_event_bytes
# The hub's own event types: its SSE control frames (reset, auth-expired, presence) and its workflow-health verdicts (health).
RESERVED_TYPES = ("reset", "auth-expired", "presence", "health")
# How deeply the script's JSON decoder (Redis's cjson) nests arrays and objects.
MAX_JSON_DEPTH = 1000

_TOPIC = re.compile(r"[A-Za-z0-9._:-]+")
_TYPE = re.compile(r"[a-z0-9._-]+")
_KEY = re.compile(r"[!-~]+")
# A W3C traceparent as the hub stores it: version 00's layout, lowercase hex (pubsub.ParseTraceParent).
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")


class InvalidEvent(ValueError):
    """The event breaks the hub's rules (topic, type, data or idempotency key); nothing was sent."""


class EventTooLarge(InvalidEvent):
    """The event's data is larger than limits.max_event_bytes; nothing was sent."""


class IdempotencyConflict(InvalidEvent):
    """The publisher used the idempotency key within idempotency_ttl for an event of other type or data; nothing was
    stored (pubsub.ErrConflict)."""


def _check_name(what, value, max_len, pattern, allowed):
    """Refuses value unless it is 1 to max_len characters, each one matching pattern; allowed names them."""
    if not isinstance(value, str) or not value:
        raise InvalidEvent(f"invalid {what}: {value!r}: want 1 to {max_len} characters of {allowed}")
    if len(value) > max_len:
        raise InvalidEvent(f"invalid {what}: {len(value)} characters, at most {max_len}")
    if not pattern.fullmatch(value):
        bad = next(i for i, c in enumerate(value) if not pattern.fullmatch(c))
        raise InvalidEvent(f"invalid {what}: character {value[bad]!r} at {bad} (allowed: {allowed})")


def check_topic(topic):
    _check_name("topic", topic, MAX_TOPIC_LEN, _TOPIC, "A-Z a-z 0-9 . _ : -")


def check_type(event_type):
    _check_name("event type", event_type, MAX_TYPE_LEN, _TYPE, "a-z 0-9 . _ -")
    if event_type in RESERVED_TYPES:
        raise InvalidEvent(
            f"invalid event type: {event_type!r} is the hub's own (reserved: {', '.join(RESERVED_TYPES)})")


def check_key(key):
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_LEN:
        n = len(key) if isinstance(key, str) else key
        raise InvalidEvent(f"invalid event: idempotency key must be 1 to {MAX_KEY_LEN} characters, got {n!r}")
    if not _KEY.fullmatch(key):
        bad = next(i for i, c in enumerate(key) if not _KEY.fullmatch(c))
        raise InvalidEvent(
            f"invalid event: idempotency key has character {key[bad]!r} at {bad} (allowed: visible ASCII)")


# Python's json recursion stops short of cjson's 1000 levels (at about sys.getrecursionlimit()), so data nested
# nearly that deeply cannot be checked, nor encoded, here.
_TOO_DEEP_FOR_PYTHON = "invalid event: data nests too deeply for Python's json module (its recursion limit)"


def _refuse_constant(name):
    raise ValueError(f"{name} is not JSON")


def encode_data(data, max_bytes):
    """Return data as the bytes the script is given, or raise InvalidEvent / EventTooLarge.

    bytes (or bytearray) are taken as one JSON value already encoded; anything else is encoded with json.dumps.
    """
    if isinstance(data, (bytes, bytearray)):
        raw = bytes(data)
        try:
            json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
        except (UnicodeDecodeError, ValueError) as e:
            raise InvalidEvent(f"invalid event: data is not one valid JSON value: {e}") from None
        except RecursionError:
            _check_cjson(raw)  # names the hub's limit when the data is past it
            raise InvalidEvent(_TOO_DEEP_FOR_PYTHON) from None
    else:
        try:
            text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
            raw = text.encode("utf-8")
        except UnicodeEncodeError:  # a ValueError too: caught first
            raise InvalidEvent("invalid event: data has a lone UTF-16 surrogate") from None
        except (TypeError, ValueError) as e:
            raise InvalidEvent(f"invalid event: data cannot be encoded as JSON: {e}") from None
        except RecursionError:
            raise InvalidEvent(_TOO_DEEP_FOR_PYTHON) from None
    if len(raw) > max_bytes:
        raise EventTooLarge(f"event too large: data is {len(raw)} bytes, at most {max_bytes}")
    _check_cjson(raw)
    return raw


def _check_cjson(raw):
    """Refuse what json accepts but the script's cjson does not: deep nesting and a \\u escape of a lone surrogate."""
    depth, i, n = 0, 0, len(raw)
    while i < n:
        c = raw[i]
        if c in b"[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise InvalidEvent(f"invalid event: data nests deeper than {MAX_JSON_DEPTH} arrays and objects")
        elif c in b"]}":
            depth -= 1
        elif c == 0x22:  # '"'
            i = _check_string(raw, i + 1)
        i += 1


def _check_string(raw, i):
    """Scan a string from just after its opening quote; return the index of its closing quote."""
    while raw[i] != 0x22:
        if raw[i] == 0x5C:  # '\\'
            i += 1
            if raw[i] == 0x75:  # 'u'
                r = int(raw[i + 1:i + 5], 16)
                i += 4
                if 0xDC00 <= r <= 0xDFFF:
                    raise InvalidEvent(f"invalid event: data has a lone UTF-16 surrogate \\u{r:04x}")
                if 0xD800 <= r <= 0xDBFF:
                    if raw[i + 1:i + 3] != b"\\u" or not 0xDC00 <= int(raw[i + 3:i + 7] or b"0", 16) <= 0xDFFF:
                        raise InvalidEvent(f"invalid event: data has a lone UTF-16 surrogate \\u{r:04x}")
                    i += 6
        i += 1
    return i


class TraceParentIgnored(UserWarning):
    """A traceparent that is not a valid W3C one was left out; the event was published without it."""


def check_traceparent(traceparent):
    """Return traceparent when it is a valid W3C traceparent as the hub stores it, else None with a
    TraceParentIgnored warning: tracing never costs a publish."""
    if traceparent is None or traceparent == "":
        return None
    m = _TRACEPARENT.fullmatch(traceparent) if isinstance(traceparent, str) else None
    if m is None or m[1] == "ff" or m[2] == "0" * 32 or m[3] == "0" * 16 or (m[1] == "00" and int(m[4], 16) > 3):
        import warnings
        warnings.warn(TraceParentIgnored(f"invalid traceparent {traceparent!r:.80} ignored; the event is published "
                                         "without it"), stacklevel=3)
        return None
    return traceparent
