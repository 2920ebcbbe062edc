"""Deliver each (intent id, status) once, across restarts (seen-set in SQLite)."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import structlog

from connectors.sinks.base import IntentSink
from schemas.intents import IntentMessage

log = structlog.get_logger(__name__)


class DedupingSink:
    """Wraps a sink; a message whose `message_id` was delivered before is dropped.

    A message is recorded only after the inner sink's `add` returned, so a crash in
    between re-delivers it (at-least-once); the receiver can dedup on the message id.
    """

    def __init__(self, inner: IntentSink, path: str | Path) -> None:
        self.inner = inner
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS delivered (message_id TEXT PRIMARY KEY, delivered_at TEXT)"
        )
        self._db.commit()
        self._lock = asyncio.Lock()
        self.skipped = 0

    def seen(self, message_id: str) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM delivered WHERE message_id = ?", (message_id,)
        ).fetchone()
        return row is not None

    async def add(self, message: IntentMessage) -> None:
        key = message.message_id
        async with self._lock:
            if self.seen(key):
                self.skipped += 1
                log.debug("intent_already_delivered", message_id=key)
                return
            await self.inner.add(message)
            self._db.execute(
                "INSERT OR IGNORE INTO delivered VALUES (?, ?)",
                (key, datetime.now(UTC).isoformat()),
            )
            self._db.commit()

    async def flush(self) -> None:
        await self.inner.flush()

    async def close(self) -> None:
        await self.inner.close()
        self._db.close()
