"""The data of a `progress` event, the one the hub's console draws (its schema: docs/schemas/progress.json; docs/subscribing.md, "The events the console understands")."""
from .schema import STATUSES, problems

_FIELDS = ("title", "step", "progress", "status", "message", "agent", "eta_s")


def progress(workflow, *, title=None, step=None, progress=None, status=None, message=None, agent=None, eta_s=None,
             **extra):
    """Return the data of a progress event: workflow is required, every other field is left out when None.

    progress is a fraction from 0 to 1 (0.4, not 40) and status one of STATUSES; a value the console would
    misread raises ValueError here, where the mistake is made, naming each problem as the hub does
    ("progress: 40 is not between 0 and 1"). extra fields are kept as given. Publisher.progress builds the same
    data but leaves the verdict to the publisher's validation (warn, by default, publishes and warns).
    """
    data = build(workflow, title=title, step=step, progress=progress, status=status, message=message, agent=agent,
                 eta_s=eta_s, **extra)
    found = problems("progress", data)
    if found:
        hint = " (a fraction: 0.4 for 40%)" if any(p.startswith("progress:") for p in found) else ""
        raise ValueError("invalid progress data: " + "; ".join(found) + hint)
    return data


def build(workflow, **fields):
    """The data of a progress event, unchecked: workflow, then every field that is not None."""
    data = {"workflow": workflow}
    for name in _FIELDS:
        if fields.get(name) is not None:
            data[name] = fields[name]
    data.update({k: v for k, v in fields.items() if k not in _FIELDS})
    return data


__all__ = ["STATUSES", "build", "progress"]
