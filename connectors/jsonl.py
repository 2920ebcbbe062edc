"""JSONL of RawEvents: one JSON object per line, read once or followed like `tail -f`."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import BinaryIO

import orjson
import structlog
from pydantic import ValidationError

from connectors.base import BadItem, Item, bad, json_problem, validation_reason
from schemas.events import RawEvent

log = structlog.get_logger(__name__)

_BOM = b"\xef\xbb\xbf"


class JsonlSource:
    """RawEvents from a JSONL file, from a byte offset; `offset` is the resume point.

    `read()` consumes a last line without newline only if `complete_tail` (a finished file);
    `read_from(..., final=False)` and `follow()` never consume such a partial line.
    """

    kind = "jsonl"

    def __init__(
        self, path: str | Path, tenant: str, *, offset: int = 0, complete_tail: bool = True
    ) -> None:
        self.path = Path(path)
        self.name = str(path)
        self.tenant = tenant
        self.offset = offset
        self.complete_tail = complete_tail

    def read(self) -> Iterator[Item]:
        for item, _ in self.read_from(self.offset, final=self.complete_tail):
            yield item

    def read_from(self, offset: int = 0, *, final: bool = False) -> Iterator[tuple[Item, int]]:
        """(item, offset after its line) for each complete line from `offset`."""
        line_no = self._lines_before(offset)
        with self.path.open("rb") as fh:
            fh.seek(offset)
            for item, end, _ in self._scan(fh, offset, line_no, final):
                self.offset = end
                yield item, end

    async def follow(
        self, poll_interval: float = 0.5, stop_event: asyncio.Event | None = None
    ) -> AsyncIterator[tuple[Item, int]]:
        """Yield (item, offset) for existing and appended lines until `stop_event` is set.

        A truncated or replaced file (smaller size or new inode) is read again from 0.
        """
        stop = stop_event or asyncio.Event()
        offset = self.offset
        line_no: int | None = None
        inode: int | None = None
        while not stop.is_set():
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                st = None
            if st is not None:
                if (inode is not None and st.st_ino != inode) or st.st_size < offset:
                    log.info("jsonl_file_replaced", path=self.name, offset=offset)
                    offset, line_no = 0, 0
                inode = st.st_ino
                if line_no is None:
                    line_no = self._lines_before(offset)
                if st.st_size > offset:
                    with self.path.open("rb") as fh:
                        fh.seek(offset)
                        scan = self._scan(fh, offset, line_no, final=False)
                        for count, (item, end, last_line) in enumerate(scan, start=1):
                            offset, line_no = end, last_line
                            self.offset = offset
                            yield item, offset
                            if stop.is_set():
                                return
                            if count % 256 == 0:
                                await asyncio.sleep(0)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=poll_interval)

    def _lines_before(self, offset: int) -> int:
        if offset <= 0:
            return 0
        count, remaining = 0, offset
        with self.path.open("rb") as fh:
            while remaining > 0:
                chunk = fh.read(min(remaining, 1 << 20))
                if not chunk:
                    break
                count += chunk.count(b"\n")
                remaining -= len(chunk)
        return count

    def _scan(
        self, fh: BinaryIO, offset: int, line_no: int, final: bool
    ) -> Iterator[tuple[Item, int, int]]:
        while True:
            raw = fh.readline()
            if not raw:
                return
            if not raw.endswith(b"\n") and not final:
                return  # a partial line: leave it for the next read
            offset += len(raw)
            line_no += 1
            if line_no == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM) :]
            text = raw.strip()
            if not text:
                continue
            yield self._parse(text, line_no), offset, line_no

    def _parse(self, text: bytes, line_no: int) -> Item:
        location = f"{self.path.name}:line {line_no}"
        try:
            obj = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            return bad(location, json_problem(text, exc))
        if not isinstance(obj, dict):
            return bad(location, f"expected a JSON object, got {type(obj).__name__}")
        obj.setdefault("tenant", self.tenant)
        try:
            return RawEvent.model_validate(obj)
        except ValidationError as exc:
            return bad(location, validation_reason(exc))


__all__ = ["BadItem", "JsonlSource"]
