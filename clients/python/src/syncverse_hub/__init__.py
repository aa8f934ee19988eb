"""Publish events to the SyncVerse Progress Hub through Redis.

    import redis, syncverse_hub
    pub = syncverse_hub.Publisher(redis.Redis.from_url("redis://127.0.0.1:6379/0"))
    pub.progress("project.42", "wf-1", step="compile", progress=0.4, status="running")

Every publish runs the hub's own publish script (pubsub/publish.lua, shipped in this package), so an event published
here is stored, delivered live and replayed exactly like one published by the hub.
"""
from .progress import STATUSES, progress
from .publisher import Batch, BatchError, Event, Publisher, PublishResult
from .schema import VALIDATIONS, problems
from .script import publish_script
from .validate import RESERVED_TYPES, EventTooLarge, IdempotencyConflict, InvalidEvent, TraceParentIgnored

__all__ = ["Batch", "BatchError", "Event", "EventTooLarge", "IdempotencyConflict", "InvalidEvent", "Publisher",
           "PublishResult", "RESERVED_TYPES", "STATUSES", "TraceParentIgnored", "VALIDATIONS", "problems", "progress",
           "publish_script"]
