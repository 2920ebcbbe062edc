"""RawEvent JSONL read by byte offset and followed like ``tail -f`` (``foldmem run``).

The offset is the source's checkpoint: it is committed in the same store transaction as the
fold that passes it (:meth:`JsonlTail.checkpoints`), and only over a prefix of lines that are
all finished (:class:`OffsetTracker`), so a ``kill -9`` neither loses nor doubles a line. A
truncated or replaced file is read again from its start. Each bad line is reported as it is
read (the offset never reads it twice); a one-shot read of a file none of whose lines is an
event also reports the file as a whole.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import structlog

from connectors.base import BadItem, RefusalTally
from connectors.jsonl import JsonlSource
from stream_app.hub.protocol import Checkpoint
from stream_app.ingest.sources import Outcome, Read, event_location

log = structlog.get_logger(__name__)

JSONL_SUFFIXES = (".jsonl", ".ndjson")


class Positions(Protocol):
    """Where offsets are kept (the embedded store)."""

    def checkpoint(self, source: str) -> Checkpoint | None: ...

    def save_checkpoints(self, checkpoints: Sequence[Checkpoint]) -> None: ...


class OffsetTracker:
    """The resume offset of one file: the end of the longest prefix of finished items."""

    def __init__(self, key: str, inode: int | None, start: int) -> None:
        self.key = key
        self.inode = inode
        self.safe = start
        self._pending: deque[tuple[int, int]] = deque()  # (token, end offset)
        self._done: set[int] = set()
        self._next = 0

    def add(self, end_offset: int) -> int:
        self._next += 1
        self._pending.append((self._next, end_offset))
        return self._next

    def done(self, token: int) -> None:
        self._done.add(token)
        while self._pending and self._pending[0][0] in self._done:
            tok, end = self._pending.popleft()
            self._done.discard(tok)
            self.safe = end

    def safe_if_done(self, token: int) -> int:
        safe = self.safe
        for tok, end in self._pending:
            if tok != token and tok not in self._done:
                break
            safe = end
        return safe

    def reset(self, inode: int | None) -> None:
        self._pending.clear()
        self._done.clear()
        self.inode = inode
        self.safe = 0


def source_key(path: Path) -> str:
    return f"file:{path.resolve()}"


class JsonlTail:
    reports_once = False  # the offset never reads a line twice

    def __init__(
        self,
        path: Path,
        tenant: str,
        positions: Positions,
        *,
        follow: bool,
        poll_interval: float = 0.5,
    ) -> None:
        self.path = path
        self.name = str(path)
        self.key = source_key(path)
        self.tenant = tenant
        self.positions = positions
        self.follow = follow
        self.poll_interval = poll_interval
        self.tracker = OffsetTracker(self.key, None, 0)
        self._opened = False  # the saved offset was read (only then may it be overwritten)

    def skipped(self) -> str | None:
        return None

    def size_hint(self) -> int | None:
        """Lines to read, for a progress bar (one-shot reads only)."""
        return None if self.follow else count_lines(self.path)

    async def reads(self, stop: asyncio.Event) -> AsyncIterator[Read]:
        saved = self.positions.checkpoint(self.key)
        inode = _inode(self.path)
        start = 0
        if saved is not None and (saved.inode is None or saved.inode == inode):
            size = self.path.stat().st_size if self.path.exists() else 0
            start = saved.offset if saved.offset <= size else 0
        self.tracker = tracker = OffsetTracker(self.key, inode, start)
        self._opened = True
        source = JsonlSource(self.path, self.tenant, offset=start, complete_tail=not self.follow)
        log.info("source_opened", source=self.name, kind="jsonl", offset=start)
        items: AsyncIterator[tuple[Any, int]]
        if self.follow:
            items = source.follow(self.poll_interval, stop)
        else:
            items = _aiter(source.read_from(start, final=True))
        last_end = start
        tally = RefusalTally(self.name)
        async for item, end in items:
            if end < last_end:  # the file was truncated or replaced: start over
                tracker.reset(_inode(self.path))
            last_end = end
            tally.count(item)
            token = tracker.add(end)
            if isinstance(item, BadItem):
                yield Read(item, self, item.location, token)
            else:
                yield Read(item, self, event_location(item), token)
            if stop.is_set():
                return
        if not self.follow and start == 0 and tally.refused:
            # each line was reported; say that the file as a whole is not an event stream
            summary = tally.summary()
            yield Read(BadItem(summary.location, summary.reason, items=0), self, summary.location)

    def passed(self, read: Read) -> bool:
        return False

    def checkpoints(self, read: Read) -> Sequence[Checkpoint]:
        tracker = self.tracker
        return [Checkpoint(self.key, tracker.safe_if_done(read.position), tracker.inode)]

    def done(self, finished: Sequence[tuple[Read, Outcome | None]]) -> None:
        for read, _ in finished:
            if read.position:
                self.tracker.done(read.position)

    def finish(self, complete: bool) -> None:
        return None

    def save(self) -> None:
        """Commit the offset over what is finished (at shutdown: the last lines may have been
        bad items or duplicates, which commit nothing of their own)."""
        if not self._opened:
            return
        tracker = self.tracker
        self.positions.save_checkpoints([Checkpoint(tracker.key, tracker.safe, tracker.inode)])


async def _aiter(items: Iterator[tuple[Any, int]]) -> AsyncIterator[tuple[Any, int]]:
    for count, item in enumerate(items, start=1):
        yield item
        if count % 64 == 0:
            await asyncio.sleep(0)


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None


def is_event_jsonl(path: Path) -> bool:
    """A .jsonl/.ndjson file of RawEvents (read by offset); chat JSONL goes to the connectors."""
    if path.suffix.lower() not in JSONL_SUFFIXES:
        return False
    try:
        from connectors.detect import detect_kind

        return detect_kind(path) == "jsonl"
    except Exception:  # empty, not yet created or unreadable: a RawEvent stream to follow
        return True


def count_lines(path: Path) -> int:
    if path.suffix.lower() not in JSONL_SUFFIXES or not path.exists():
        return 0
    count = 0
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            count += chunk.count(b"\n")
    return count
