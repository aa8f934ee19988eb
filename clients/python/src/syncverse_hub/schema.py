"""The hub's schema of progress data (docs/schemas/progress.json), held here in the hub's own words.

problems() answers what the hub's events.validation says of the same data ("progress: 40 is not between 0 and 1"),
one string per problem, sorted by field, so a warning reads the same from this client, POST /publish and hub publish.
"""
import json
import math
import numbers

STATUSES = ("queued", "running", "succeeded", "failed", "cancelled")
VALIDATIONS = ("off", "warn", "strict")  # the hub's events.validation modes
_STRINGS = ("title", "step", "message", "agent")
_MAX_SHOWN = 40


def problems(type, data):
    """Return the problems of data (decoded JSON) for an event of type; [] for a type without a schema here."""
    if (type or "progress") != "progress":
        return []
    if not isinstance(data, dict):
        return [f"data: {_shown(data)} is {_article(data)}, not an object"]
    out = []
    if "workflow" not in data:
        out.append("workflow: missing (required)")
    elif not isinstance(data["workflow"], str):
        out.append(_not("workflow", data["workflow"], "a string"))
    elif data["workflow"] == "":
        out.append("workflow: empty (at least 1 character)")
    for name in _STRINGS:
        if name in data and not isinstance(data[name], str):
            out.append(_not(name, data[name], "a string"))
    if "progress" in data:
        v = data["progress"]
        if not _number(v):
            out.append(_not("progress", v, "a number"))
        elif not 0 <= v <= 1:
            out.append(f"progress: {_shown(v)} is not between 0 and 1")
    if "status" in data and data["status"] not in STATUSES:
        out.append(f"status: {_shown(data['status'])} is not one of {', '.join(STATUSES)}")
    if "eta_s" in data:
        v = data["eta_s"]
        if not _number(v):
            out.append(_not("eta_s", v, "a number"))
        elif v < 0:
            out.append(f"eta_s: {_shown(v)} is less than 0")
    return sorted(out)


def check_validation(mode):
    if mode not in VALIDATIONS:
        raise ValueError(f"validation must be one of {', '.join(VALIDATIONS)}, got {mode!r}")
    return mode


def _not(name, value, want):
    if isinstance(value, float) and not math.isfinite(value):
        return f"{name}: {value} is not a finite number"
    return f"{name}: {_shown(value)} is {_article(value)}, not {want}"


def _number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)


def _article(v):
    if v is None:
        return "a null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, numbers.Real):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, (list, tuple)):
        return "an array"
    return "an object"


def _shown(v):
    """v as JSON, cut to 40 bytes as the hub quotes it: 40.0 is shown 40, as JSON has it."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    try:
        s = json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        s = repr(v)
    b = s.encode()
    return b[:_MAX_SHOWN].decode(errors="ignore") + "…" if len(b) > _MAX_SHOWN else s
