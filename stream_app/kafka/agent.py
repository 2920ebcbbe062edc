"""The fold agent: each message of the events topic folded into its tenant's memory, or sent
to the dead-letter topic with the reason.

Faust runs ``kafka_concurrency`` actors of :meth:`FoldAgent.run` (:func:`register`). An actor
takes its tenant's FIFO lock before its first await, so one tenant's events fold in partition
order while other tenants proceed concurrently (docs/kafka.md). The agent yields each outcome,
so Faust's ``test_context`` returns once a message is folded (tests/kafka/test_agent.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

import structlog

from schemas.errors import InvalidEventError
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
    ) -> None:
        self.hub = hub
        self.deadletters = deadletters
        self.admission = admission
        self.partition_of = partition_of

    async def run(self, stream: Any) -> AsyncIterator[FoldResult | None]:
        """The agent's body: one outcome per message (None: dead-lettered)."""
        async for event in stream.events():
            yield await self.handle(event.message)

    async def handle(self, message: Any) -> FoldResult | None:
        """Fold one events-topic message, or dead-letter it."""
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
        # no await before the lock: actors queue on it in the order they took the messages
        async with self.hub.lock(event.tenant):
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
