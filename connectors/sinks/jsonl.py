"""Append intent messages to a JSONL file, one line each (a locked append a deletion's rewrite
cannot lose, :mod:`connectors.sinks.files`); ``flush`` fsyncs the file."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import orjson

from connectors.sinks.base import SinkError, message_body
from connectors.sinks.files import append_line
from schemas.intents import IntentMessage


class JsonlSink:
    """One JSON object per line, appended to ``path`` (created with its folder if missing);
    ``with_message_id``: each line also carries the message's ``message_id``. ``name``
    defaults to the file's absolute path."""

    def __init__(
        self, path: str | Path, *, with_message_id: bool = False, name: str | None = None
    ) -> None:
        self.path = Path(path)
        self.name = name or f"jsonl:{self.path.resolve()}"
        self.with_message_id = with_message_id

    async def add(self, message: IntentMessage) -> None:
        line = message_body(message)
        if self.with_message_id:
            record = orjson.loads(line)
            record["message_id"] = message.message_id
            line = orjson.dumps(record)
        try:
            append_line(self.path, line)
        except OSError as exc:  # a full disk, a folder gone: try again later
            raise SinkError(f"writing {self.path} failed: {exc}") from exc

    async def flush(self) -> None:
        if not self.path.exists():
            return
        try:
            await asyncio.to_thread(_fsync, self.path)
        except OSError as exc:
            raise SinkError(f"syncing {self.path} failed: {exc}") from exc

    async def close(self) -> None:
        return None


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
