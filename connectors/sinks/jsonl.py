"""Append intents to a JSONL file; `flush` fsyncs."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import BinaryIO

from connectors.sinks.base import message_body
from schemas.intents import IntentMessage


class JsonlSink:
    """One JSON object per line, appended to `path` (created with its folder if missing)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fh: BinaryIO | None = None

    def _file(self) -> BinaryIO:
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open("ab")
        return self._fh

    async def add(self, message: IntentMessage) -> None:
        self._file().write(message_body(message) + b"\n")

    async def flush(self) -> None:
        if self._fh is not None:
            fh = self._fh
            fh.flush()
            await asyncio.to_thread(os.fsync, fh.fileno())

    async def close(self) -> None:
        if self._fh is not None:
            await self.flush()
            self._fh.close()
            self._fh = None
