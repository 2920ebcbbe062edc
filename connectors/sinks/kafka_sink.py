"""A Sink that publishes to a Kafka topic (the contract of ``foldmem.intents``).

Key = tenant (one tenant's messages stay in order on one partition), value = IntentMessage
JSON, header ``message_id`` = intent id + status (consumers deduplicate on it). ``flush``
returns once the broker acknowledged every message added so far.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from connectors.errors import ConnectorError
from connectors.sinks.base import SinkError, message_body
from schemas.intents import IntentMessage


class KafkaSink:
    def __init__(
        self,
        brokers: str | Sequence[str],
        topic: str = "foldmem.intents",
        *,
        producer: Any | None = None,
    ) -> None:
        self.brokers = (
            [b.strip() for b in brokers.split(",")] if isinstance(brokers, str) else list(brokers)
        )
        self.topic = topic
        self.name = f"kafka:{topic}"
        self._producer = producer
        self._owned = producer is None
        self._pending: list[asyncio.Future[Any]] = []

    async def _client(self) -> Any:
        if self._producer is None:
            from aiokafka import AIOKafkaProducer

            producer = AIOKafkaProducer(bootstrap_servers=self.brokers, acks="all", linger_ms=5)
            try:
                await producer.start()
            except Exception as exc:
                raise ConnectorError(f"Kafka brokers {self.brokers} unreachable: {exc}") from exc
            self._producer = producer
        return self._producer

    async def add(self, message: IntentMessage) -> None:
        producer = await self._client()
        future = await producer.send(
            self.topic,
            key=message.tenant.encode(),
            value=message_body(message),
            headers=[("message_id", message.message_id.encode())],
        )
        self._pending.append(future)

    async def flush(self) -> None:
        pending, self._pending = self._pending, []
        if not pending:
            return
        try:
            await asyncio.gather(*pending)
        except Exception as exc:
            raise SinkError(f"publishing intents to {self.topic} failed: {exc}") from exc

    async def close(self) -> None:
        try:
            await self.flush()
        finally:
            if self._producer is not None and self._owned:
                await self._producer.stop()
            self._producer = None
