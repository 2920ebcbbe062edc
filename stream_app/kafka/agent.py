"""The fold agent: each message of the events topic folded into its tenant's memory, or sent
to the dead-letter topic with the reason.

Faust runs ``kafka_concurrency`` actors of :meth:`FoldAgent.run` (:func:`register`). An actor
takes its tenant's FIFO lock before its first await, so one tenant's events fold in partition
order while other tenants proceed concurrently (docs/kafka.md). With batches
(``FOLDMEM_KAFKA_FOLD_BATCH_SIZE`` > 1, 64 by default) one actor takes up to that many
messages at a time (``stream.take_events``), folds each tenant's as one engine batch (tenants
concurrently) and its offsets are acknowledged after the batch: one actor keeps the
partitions' order. The agent yields each outcome, so Faust's ``test_context`` returns once a
message is folded (tests/kafka/test_agent.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import structlog

from schemas.errors import InvalidEventError
from schemas.events import RawEvent
from stream_app.ingest.admission import Admission
from stream_app.kafka.codec import parse_event
from stream_app.kafka.hub import FoldError, KafkaHub
from stream_app.kafka.topics import DeadLetterTopic
from topologies.engine import FoldResult

log = structlog.get_logger(__name__)


class FoldAgent:
    def __init__(
        self,
        hub: KafkaHub,
        deadletters: DeadLetterTopic,
        admission: Admission,
        partition_of: Callable[[str], int],
        batch_size: int = 1,
        batch_within_s: float = 0.01,
    ) -> None:
        self.hub = hub
        self.deadletters = deadletters
        self.admission = admission
        self.partition_of = partition_of
        self.batch_size = batch_size  # > 1: messages taken in batches (see run)
        self.batch_within_s = batch_within_s

    async def run(self, stream: Any) -> AsyncIterator[FoldResult | None]:
        """The agent's body: one outcome per message (None: dead-lettered). With batches,
        up to ``batch_size`` messages taken within ``batch_within_s`` are folded together
        (:meth:`handle_batch`) and their offsets acknowledged once the batch is done."""
        if self.batch_size <= 1:
            async for event in stream.events():
                yield await self.handle(event.message)
            return
        async for events in stream.take_events(self.batch_size, within=self.batch_within_s):
            for outcome in await self.handle_batch([event.message for event in events]):
                yield outcome

    async def handle_batch(self, messages: Sequence[Any]) -> list[FoldResult | None]:
        """Fold a batch of events-topic messages: each tenant's admitted events as one engine
        batch under its lock (tenants concurrently), one changelog write per tenant; invalid
        messages and refused or failed events go to the dead-letter topic."""
        outcomes: list[FoldResult | None] = [None] * len(messages)
        groups: dict[str, list[tuple[int, RawEvent, Any]]] = {}
        for position, message in enumerate(messages):
            event = await self._admit(message)
            if event is not None:
                groups.setdefault(event.tenant, []).append((position, event, message))
        folded = await asyncio.gather(*(self._fold_group(items) for items in groups.values()))
        for items, results in zip(groups.values(), folded, strict=True):
            for (position, _, _), outcome in zip(items, results, strict=True):
                outcomes[position] = outcome
        return outcomes

    async def _fold_group(self, items: list[tuple[int, RawEvent, Any]]) -> list[FoldResult | None]:
        tenant = items[0][1].tenant
        async with self.hub.lock(tenant):
            try:
                results = await self.hub.fold_batch_locked([event for _, event, _ in items])
            except FoldError:  # raised before any event folded: one at a time instead
                log.exception("fold_batch_failed", tenant=tenant, events=len(items))
                return [await self._fold_locked(event, message) for _, event, message in items]
        out: list[FoldResult | None] = []
        for (_, event, message), result in zip(items, results, strict=True):
            if result.status in ("refused", "failed"):
                log.info("event_not_folded", tenant=tenant, event_id=event.id, status=result.status)
                await self.deadletters.send(message, result.error or result.status)
                out.append(None)
            else:
                out.append(result)
        return out

    async def handle(self, message: Any) -> FoldResult | None:
        """Fold one events-topic message, or dead-letter it."""
        event = await self._admit(message)
        if event is None:
            return None
        # no await before the lock: actors queue on it in the order they took the messages
        async with self.hub.lock(event.tenant):
            return await self._fold_locked(event, message)

    async def _admit(self, message: Any) -> RawEvent | None:
        """The message's event, admitted; None when it was dead-lettered."""
        arrived = datetime.fromtimestamp(message.timestamp, UTC) if message.timestamp else None
        try:
            event = parse_event(message.value, message.key)
            expected = self.partition_of(event.tenant)
            if message.partition != expected:
                raise InvalidEventError(
                    f"tenant {event.tenant!r} belongs to partition {expected}, "
                    f"the message is on {message.partition}"
                )
            if event.received_at is None and arrived is not None:
                # the broker-side timestamp, not the wall clock: a replay folds the same value
                event = event.model_copy(update={"received_at": arrived})
            # times too far ahead are refused against the same broker timestamp (a replay
            # admits what the first run admitted)
            event = self.admission.admit(event, arrived)
        except InvalidEventError as exc:
            await self.deadletters.send(message, exc.reason)
            return None
        return event

    async def _fold_locked(self, event: RawEvent, message: Any) -> FoldResult | None:
        try:
            return await self.hub.fold_locked(event)
        except FoldError as exc:
            log.exception("fold_failed", tenant=event.tenant, event_id=event.id)
            await self.deadletters.send(message, str(exc))
            return None
        except InvalidEventError as exc:  # refused by the engine (a forgotten event id)
            log.info("event_refused", tenant=event.tenant, event_id=event.id, reason=exc.reason)
            await self.deadletters.send(message, exc.reason)
            return None


def register(app: Any, topic: Any, agent: FoldAgent, concurrency: int) -> Any:
    """The agent on the events topic (Faust's agent object, for ``test_context``)."""
    return app.agent(topic, name="fold", concurrency=concurrency)(agent.run)
