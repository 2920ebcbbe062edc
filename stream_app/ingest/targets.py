"""Where the ingest driver delivers events: a hub (fold) or a listing (a dry run); the Kafka
events topic is :class:`stream_app.kafka.ingest.KafkaTarget`.

A target takes a batch of one tenant's events, in order, and answers one outcome per event:
the fold's result, ``"sent"`` (the brokers acknowledged it), ``"listed"``, or the error that
refused it. A :class:`stream_app.hub.protocol.TransientError` outcome means "not delivered
now" (that event and the rest of the batch): the driver tries them again. A target that
cannot go on raises :class:`DeliveryError`, carrying the outcomes of what it did deliver.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TextIO

import orjson
import structlog

from schemas.errors import FoldmemError
from schemas.events import RawEvent
from stream_app.hub import CheckpointFn, Hub
from stream_app.ingest.admission import Admission, EventTimeError
from stream_app.ingest.sources import Outcome

log = structlog.get_logger(__name__)


class DeliveryError(FoldmemError):
    """A target could not deliver some events; ``outcomes`` follows the batch: what became
    of each event delivered, None for those that were not."""

    def __init__(self, message: str, outcomes: Sequence[Outcome | None] = ()) -> None:
        super().__init__(message)
        self.outcomes = list(outcomes)


class Target(Protocol):
    name: str  # the ledger's target (``embedded``, ``kafka:<brokers>/<topic>``)

    async def start(self) -> None: ...

    async def deliver(
        self,
        events: Sequence[RawEvent],
        checkpoints: CheckpointFn | None = None,
        ahead: Sequence[RawEvent] = (),
    ) -> list[Outcome]:
        """``ahead``: the events the driver delivers next (a hub embeds them meanwhile)."""
        ...

    async def close(self) -> None: ...


class HubTarget:
    """Folds through a hub (:meth:`stream_app.hub.Hub.fold_batch`); ``checkpoints`` gives the
    source positions each fold commits."""

    name = "embedded"

    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    async def start(self) -> None:
        return None

    async def deliver(
        self,
        events: Sequence[RawEvent],
        checkpoints: CheckpointFn | None = None,
        ahead: Sequence[RawEvent] = (),
    ) -> list[Outcome]:
        return list(await self.hub.fold_batch(events, checkpoints, ahead))

    async def close(self) -> None:
        return None


class DryRunTarget:
    """Lists each event instead of delivering it (``foldmem ingest --dry-run``); a time too far
    ahead is refused as a real import would."""

    def __init__(
        self, name: str, out: TextIO, *, as_json: bool = False, admission: Admission | None = None
    ) -> None:
        self.name = name
        self.out = out
        self.as_json = as_json
        self.admission = admission or Admission()

    async def start(self) -> None:
        return None

    async def deliver(
        self,
        events: Sequence[RawEvent],
        checkpoints: CheckpointFn | None = None,
        ahead: Sequence[RawEvent] = (),
    ) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for event in events:
            try:
                self.admission.check(event)
            except EventTimeError as exc:
                outcomes.append(exc)
                continue
            outcomes.append("listed")
            if self.as_json:
                self.out.write(event.model_dump_json() + "\n")
                continue
            title = event.title if len(event.title) <= 80 else event.title[:77] + "..."
            self.out.write(
                f"{event.tenant}\t{event.ts.isoformat()}\t{event.source}\t{event.id}\t"
                f"{orjson.dumps(title).decode()}\n"
            )
        return outcomes

    async def close(self) -> None:
        return None
