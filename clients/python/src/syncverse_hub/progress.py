"""The data of a `progress` event, the one the hub's console draws (its schema: docs/schemas/progress.json; docs/subscribing.md, "The events the console understands")."""
import math
import numbers

STATUSES = ("queued", "running", "succeeded", "failed", "cancelled")


def progress(workflow, *, title=None, step=None, progress=None, status=None, message=None, agent=None, eta_s=None,
             **extra):
    """Return the data of a progress event: workflow is required, every other field is left out when None.

    progress is a fraction from 0 to 1 (0.4, not 40) and status one of STATUSES; a value the console would
    misread raises ValueError here, where the mistake is made. extra fields are kept as given.
    """
    if not isinstance(workflow, str) or not workflow:
        raise ValueError(f"progress: workflow must be a non-empty string, got {workflow!r}")
    data = {"workflow": workflow}
    for name, value in (("title", title), ("step", step), ("message", message), ("agent", agent)):
        if value is not None:
            if not isinstance(value, str):
                raise ValueError(f"progress: {name} must be a string, got {value!r}")
            data[name] = value
    if progress is not None:
        if not _number(progress) or not 0 <= progress <= 1:
            raise ValueError(f"progress: progress must be a number from 0 to 1 (a fraction: 0.4 for 40%), got {progress!r}")
        data["progress"] = progress
    if status is not None:
        if status not in STATUSES:
            raise ValueError(f"progress: status must be one of {', '.join(STATUSES)}, got {status!r}")
        data["status"] = status
    if eta_s is not None:
        if not _number(eta_s) or eta_s < 0:
            raise ValueError(f"progress: eta_s must be a number of seconds, at least 0, got {eta_s!r}")
        data["eta_s"] = eta_s
    data.update(extra)
    return data


def _number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)
