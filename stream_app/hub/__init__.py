"""The hub contract (:class:`Hub`) and what both hubs share: the reads, the read-only views of
a tenant's memory, the nightly schedule and a deletion's retractions."""

from stream_app.hub.protocol import Checkpoint, CheckpointFn, FoldOutcome, Hub

__all__ = ["Checkpoint", "CheckpointFn", "FoldOutcome", "Hub"]
