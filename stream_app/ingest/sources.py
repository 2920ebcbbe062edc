"""What the ingest driver reads (:mod:`stream_app.ingest.driver`): sources that own their
reading and their checkpoint.

A source yields :class:`Read` items (an event or a bad item, and where it is); the driver
hands the events to its target and tells the source what became of them (:meth:`Source.done`),
so the source can move its checkpoint past what is finished and nothing else:

- :class:`stream_app.ingest.tail.JsonlTail`: RawEvent JSONL by byte offset, followed like
  ``tail -f``; the offset is committed in the fold's transaction (``foldmem run``);
- :class:`FileSource`: any connector's file or folder (.ics, mbox, Maildir, Slack, ...), read
  whole, again when it changes; with a :class:`Sent` checkpoint (``foldmem ingest``) the events
  already delivered are passed over and an unchanged source is not read at all;
- :class:`ImapSource`: an IMAP folder, polled; the connector's UID checkpoint moves past a
  message only once it is done;
- :class:`Batch`: the items of one HTTP request.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast
from urllib.parse import urlparse

import structlog

from connectors.base import BadItem, Item, refusing_whole_files
from connectors.errors import ConnectorError
from schemas.errors import ConfigError, FoldmemError
from schemas.events import RawEvent
from stream_app.hub.protocol import Checkpoint, FoldOutcome
from stream_app.ingest.ledger import Ledger, event_ident, fingerprint
from stream_app.settings import Settings
from topologies.engine import FoldResult

log = structlog.get_logger(__name__)

IMAP_SCHEMES = ("imap://", "imaps://")
Ref = Path | str  # a file or folder, or an IMAP url
# what became of an event: the fold's result, "sent" (a broker acknowledged it), "listed"
# (a dry run), or the error that refused it
Outcome = FoldOutcome | str


@dataclass(eq=False)
class Read:
    """One item a source read. ``location`` names an event for its dead letter ("event e1",
    "item 3 (event e1)"); ``position`` is the source's own (a file offset, a request index)."""

    item: RawEvent | BadItem
    source: Source
    location: str
    position: int = 0

    @property
    def items(self) -> int:
        """How many items of the source this stands for (a refused file: all of them)."""
        return self.item.items if isinstance(self.item, BadItem) else 1


class Source(Protocol):
    name: str  # the dead-letter record's "source"
    key: str  # its identity in the checkpoint (the ledger, the store's offsets)
    reports_once: bool  # a file read again reports a bad item once, not at every read

    def skipped(self) -> str | None:
        """Why the source need not be read at all (unchanged since it was imported), or None."""
        ...

    def reads(self, stop: asyncio.Event) -> AsyncIterator[Read]:
        """The items, until the source is exhausted (one-shot) or ``stop`` is set (followed)."""
        ...

    def passed(self, read: Read) -> bool:
        """The checkpoint says this event was delivered before: nothing to do."""
        ...

    def checkpoints(self, read: Read) -> Sequence[Checkpoint]:
        """Positions to commit in the same transaction as this event's fold."""
        ...

    def done(self, finished: Sequence[tuple[Read, Outcome | None]]) -> None:
        """These items are finished (an event with its outcome; a bad item with None)."""
        ...

    def finish(self, complete: bool) -> None:
        """The driver read the source to its end (``complete``: and every event got there)."""
        ...


class Sent:
    """The checkpoint of an import: the ledger's events delivered to ``target``."""

    def __init__(self, ledger: Ledger, target: str, *, record: bool = True) -> None:
        self.ledger = ledger
        self.target = target
        self.record = record  # False in a dry run: the ledger is only read


# ---------------------------------------------------------------------- references
def is_url(text: str) -> bool:
    return text.startswith(IMAP_SCHEMES)


def parse_refs(args: Sequence[str]) -> list[Ref]:
    """Command-line SOURCE arguments: IMAP urls stay strings, the rest become Paths."""
    return [a if is_url(a) else Path(a) for a in args]


def ref_key(ref: Ref) -> str:
    return ref if isinstance(ref, str) else str(Path(ref).resolve())


def imap_checkpoint_path(settings: Settings, url: str) -> Path:
    return settings.data_dir / "imap" / (hashlib.sha256(url.encode()).hexdigest()[:16] + ".json")


def open_ref(
    ref: Ref,
    tenant: str,
    kind: str | None,
    settings: Settings,
    *,
    imap_checkpoint: Path | None = None,
) -> Any:
    """The connector for a file, folder or IMAP url; problems become a one-line ConfigError."""
    from connectors.detect import open_source

    try:
        if isinstance(ref, str):
            options: dict[str, Any] = {"checkpoint_path": imap_checkpoint}
            if settings.imap_password is not None:
                options["password"] = settings.imap_password.get_secret_value()
            elif urlparse(ref).password is None:
                raise ConfigError(f"{ref}: set FOLDMEM_IMAP_PASSWORD to the account's password")
            return open_source(ref, tenant, kind="imap", **options)
        return open_source(ref, tenant, kind)
    except ConnectorError as exc:
        raise ConfigError(str(exc)) from exc


def event_location(event: RawEvent) -> str:
    return f"event {event.id}"


# ------------------------------------------------------------------- files, IMAP
class _Delivered:
    """Passing over what the ``Sent`` checkpoint holds, and recording what was delivered.

    An event handed to the target but not yet confirmed (a Kafka batch; in a dry run,
    everything listed) is in flight: the same item again is passed over too."""

    key: str

    def __init__(self, sent: Sent | None) -> None:
        self.sent = sent
        self.failed = False  # an event was not delivered: the source is read again next time
        self._in_flight: set[tuple[str, str, str]] = set()

    def passed(self, read: Read) -> bool:
        if self.sent is None or not isinstance(read.item, RawEvent):
            return False
        ident = event_ident(read.item)
        if ident in self._in_flight or self.sent.ledger.was_sent(self.sent.target, read.item):
            return True
        self._in_flight.add(ident)
        return False

    def checkpoints(self, read: Read) -> Sequence[Checkpoint]:
        return ()

    def done(self, finished: Sequence[tuple[Read, Outcome | None]]) -> None:
        delivered: list[tuple[RawEvent, str]] = []
        for read, outcome in finished:
            if not isinstance(read.item, RawEvent) or outcome is None:
                continue
            if isinstance(outcome, FoldmemError):
                self.failed = True
                self._in_flight.discard(event_ident(read.item))
            elif isinstance(outcome, FoldResult):
                delivered.append((read.item, outcome.status))
            elif outcome != "listed":  # a dry run keeps what it listed in flight
                delivered.append((read.item, outcome))
        if delivered and self.sent is not None and self.sent.record:
            for event, _ in delivered:
                self._in_flight.discard(event_ident(event))
            self.sent.ledger.mark_sent(self.sent.target, self.key, delivered)


class FileSource(_Delivered):
    """A connector's file or folder. Read once (``follow=False``), or again each time it
    changes (dedup by event id makes that cheap). A file none of whose items could be read is
    reported once as a whole."""

    reports_once = True

    def __init__(
        self,
        path: Path,
        tenant: str,
        kind: str | None,
        settings: Settings,
        *,
        name: str | None = None,
        sent: Sent | None = None,
        follow: bool = False,
    ) -> None:
        super().__init__(sent)
        self.path = path
        self.tenant = tenant
        self.kind = kind
        self.settings = settings
        self.key = ref_key(path)
        self.name = name or self.key
        self.follow = follow
        self._print: str | None = None

    def skipped(self) -> str | None:
        if not self.follow and not self.path.exists():  # a followed one may appear later
            raise ConfigError(f"{self.path}: no such file or folder")
        if self.sent is None:
            return None
        self._print = fingerprint(self.path)
        if self.sent.ledger.complete(self.sent.target, self.key) == self._print:
            return "unchanged since its last complete import, skipped"
        return None

    async def reads(self, stop: asyncio.Event) -> AsyncIterator[Read]:
        seen_mtime: float | None = None
        while not stop.is_set():
            mtime = self.path.stat().st_mtime if self.path.exists() else None
            if mtime is not None and mtime != seen_mtime:
                seen_mtime = mtime
                source = open_ref(self.path, self.tenant, self.kind, self.settings)
                log.info("source_opened", source=self.name, kind=getattr(source, "kind", "?"))
                items = refusing_whole_files(self.key, source.read())
                for count, item in enumerate(items, start=1):
                    yield _read(item, self)
                    if count % 64 == 0:
                        await asyncio.sleep(0)
            if not self.follow:
                return
            with contextlib.suppress(TimeoutError):
                wait = max(self.settings.poll_interval, 1.0)
                await asyncio.wait_for(stop.wait(), timeout=wait)

    def finish(self, complete: bool) -> None:
        if self.sent is None or not self.sent.record or self._print is None:
            return
        if complete and not self.failed:
            self.sent.ledger.mark_complete(self.sent.target, self.key, self._print)


class ImapSource(_Delivered):
    """An IMAP folder, polled (``follow``) or read once. The connector's UID checkpoint (when
    ``checkpoint`` is given) moves past a message when the next one is asked for, so the next
    one is asked for only once the previous one is done: a crash re-delivers at most the
    message in flight."""

    reports_once = True

    def __init__(
        self,
        url: str,
        tenant: str,
        settings: Settings,
        *,
        checkpoint: Path | None = None,
        sent: Sent | None = None,
        follow: bool = False,
    ) -> None:
        super().__init__(sent)
        self.connector = open_ref(url, tenant, None, settings, imap_checkpoint=checkpoint)
        self.key = url
        self.name = self.connector.name
        self.poll_s = settings.imap_poll_interval
        self.follow = follow
        self._finished = asyncio.Event()

    def skipped(self) -> str | None:
        return None

    async def reads(self, stop: asyncio.Event) -> AsyncIterator[Read]:
        log.info("source_opened", source=self.name, kind="imap")
        end = object()
        while not stop.is_set():
            items = self.connector.read()
            try:
                while not stop.is_set():
                    try:
                        item = await asyncio.to_thread(next, items, end)
                    except FoldmemError:
                        raise
                    except Exception as exc:  # network trouble: try again at the next poll
                        if not self.follow:
                            raise ConfigError(f"{self.name}: {exc}") from exc
                        log.warning("imap_poll_failed", source=self.name, error=str(exc))
                        break
                    if item is end:
                        break
                    self._finished.clear()
                    yield _read(cast(Item, item), self)
                    await self._finished.wait()  # done before the checkpoint may pass it
            finally:
                close = getattr(items, "close", None)
                if close is not None:
                    await asyncio.to_thread(close)
            if not self.follow:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self.poll_s)

    def done(self, finished: Sequence[tuple[Read, Outcome | None]]) -> None:
        super().done(finished)
        self._finished.set()

    def finish(self, complete: bool) -> None:
        self._finished.set()


def _read(item: Item, source: Source) -> Read:
    if isinstance(item, BadItem):
        return Read(item, source, item.location)
    return Read(item, source, event_location(item))


# ------------------------------------------------------------------------ requests
@dataclass(eq=False)
class Batch:
    """The items of one request (``POST /tenants/{t}/events``), validated by the caller."""

    name: str
    items: Sequence[RawEvent | BadItem]
    key: str = ""
    reports_once: bool = False
    finished: list[tuple[Read, Outcome | None]] = field(default_factory=list)

    def skipped(self) -> str | None:
        return None

    async def reads(self, stop: asyncio.Event) -> AsyncIterator[Read]:
        for index, item in enumerate(self.items):
            if isinstance(item, BadItem):
                yield Read(item, self, item.location, index)
            else:
                yield Read(item, self, f"item {index} (event {item.id})", index)

    def passed(self, read: Read) -> bool:
        return False

    def checkpoints(self, read: Read) -> Sequence[Checkpoint]:
        return ()

    def done(self, finished: Sequence[tuple[Read, Outcome | None]]) -> None:
        self.finished.extend(finished)

    def finish(self, complete: bool) -> None:
        return None


def open_sources(
    refs: Iterable[Ref],
    tenant: str,
    kind: str | None,
    settings: Settings,
    *,
    sent: Sent | None = None,
) -> list[Source]:
    """The sources of an import (``foldmem ingest``): every kind of file, and IMAP folders read
    whole (the ledger is their checkpoint)."""
    sources: list[Source] = []
    for ref in refs:
        if isinstance(ref, str):
            sources.append(ImapSource(ref, tenant, settings, sent=sent))
        else:
            sources.append(FileSource(Path(ref), tenant, kind, settings, sent=sent))
    return sources
