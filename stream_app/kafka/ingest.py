"""The events topic as the ingest driver's target (``foldmem ingest --to kafka``): RawEvent
JSON keyed by tenant, a batch counted as sent once the brokers acknowledged it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import structlog

from schemas.errors import ConfigError
from schemas.events import RawEvent
from stream_app.hub import CheckpointFn
from stream_app.ingest.admission import Admission, EventTimeError
from stream_app.ingest.sources import Outcome
from stream_app.ingest.targets import DeliveryError
from stream_app.kafka.topics import ensure_topics
from stream_app.settings import Settings

log = structlog.get_logger(__name__)


class KafkaTarget:
    """Produces RawEvent JSON keyed by tenant to the events topic; a batch counts as sent once
    the brokers acknowledged it. Times too far ahead are refused here (the worker would)."""

    def __init__(self, settings: Settings, topic: str | None = None) -> None:
        self.settings = settings
        self.topic = topic or settings.kafka_events_topic
        self.name = f"kafka:{','.join(settings.kafka_broker_list)}/{self.topic}"
        self.admission = Admission.of(settings.max_future_days)
        self._producer: Any = None

    async def start(self) -> None:
        from aiokafka import AIOKafkaProducer

        if self.topic == self.settings.kafka_events_topic:
            await ensure_topics(self.settings, only=[self.topic])
        producer = AIOKafkaProducer(
            bootstrap_servers=self.settings.kafka_broker_list, acks="all", linger_ms=5
        )
        try:
            await producer.start()
        except Exception as exc:
            brokers = self.settings.kafka_brokers
            raise ConfigError(f"Kafka brokers {brokers} unreachable: {exc}") from exc
        self._producer = producer

    async def deliver(
        self,
        events: Sequence[RawEvent],
        checkpoints: CheckpointFn | None = None,
        ahead: Sequence[RawEvent] = (),
    ) -> list[Outcome]:
        outcomes: list[Outcome | None] = [None] * len(events)
        pending: list[tuple[int, Any]] = []
        for index, event in enumerate(events):
            try:
                self.admission.check(event)  # the worker stamps received_at
            except EventTimeError as exc:
                outcomes[index] = exc
                continue
            try:
                future = await self._producer.send(
                    self.topic, value=event.model_dump_json().encode(), key=event.tenant.encode()
                )
            except Exception as exc:  # aiokafka: buffer full, metadata timeout, too large
                await self._settle(outcomes, pending, exc)
            pending.append((index, future))
        await self._settle(outcomes, pending)
        return [o for o in outcomes if o is not None]

    async def _settle(
        self,
        outcomes: list[Outcome | None],
        pending: list[tuple[int, Any]],
        failed: BaseException | None = None,
    ) -> None:
        """Wait for the brokers' answer on every pending event; if any was refused (or the
        send ``failed``), DeliveryError with the outcomes so far (None: not delivered)."""
        results = await asyncio.gather(*(f for _, f in pending), return_exceptions=True)
        failures = [failed] if failed is not None else []
        for (index, _), result in zip(pending, results, strict=True):
            if isinstance(result, BaseException):
                failures.append(result)
            else:
                outcomes[index] = "sent"
        if failures:
            raise DeliveryError(self._failure(len(failures), failures[0]), outcomes)

    def _failure(self, count: int, exc: BaseException) -> str:
        log.error("ingest_kafka_send_failed", topic=self.topic, events=count, error=repr(exc))
        return (
            f"{count} event(s) not acknowledged by Kafka brokers {self.settings.kafka_brokers} "
            f"({type(exc).__name__}: {exc}); run the same command again to send them"
        )

    async def close(self) -> None:
        if self._producer is not None:
            await self._producer.stop()
            self._producer = None
