"""Checkpointed imports (``foldmem ingest``): sources -> embedded store or the Kafka events topic.

The checkpoint is a ledger in DATA_DIR/ingest.db:

- ``sent``: per target (``embedded`` or ``kafka:<brokers>/<topic>``) the events already
  delivered (folded, or acknowledged by the brokers) by id, with the fingerprint of the
  content last delivered and the source they came from. An interrupted import re-reads its
  sources and skips every event in the ledger: nothing is sent twice, whatever the source's
  item order (calendars expand recurrences around "now"). An id that comes back with other
  content (a moved meeting, an edited message) is sent again: the engine folds it as a
  revision.
- ``sources``: a fingerprint (size, mtime, content hash) of each source imported completely;
  an unchanged source is skipped without being parsed.
- ``bad``: bad items already written to the dead-letter file, so re-reading a file (a re-run,
  or a followed mbox that grew) reports each bad item once. ``foldmem run`` uses it too.

Embedded imports fold through :class:`stream_app.embedded.hub.MemoryHub` (the engine path of
``foldmem run``); Kafka imports produce RawEvent JSON keyed by tenant (as ``foldmem produce``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import signal
import sqlite3
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TextIO
from urllib.parse import urlparse

import orjson
import structlog

from connectors.base import BadItem, Source, refusing_whole_files
from connectors.errors import ConnectorError
from schemas.errors import ConfigError, FoldmemError, InvalidEventError
from schemas.events import RawEvent
from stream_app.embedded.store import TransientStoreError
from stream_app.ingest.admission import Admission, EventTimeError
from stream_app.settings import Settings
from topologies.engine import event_fingerprint

log = structlog.get_logger(__name__)

IMAP_SCHEMES = ("imap://", "imaps://")
Ref = Path | str  # a file or folder, or an IMAP url


# --------------------------------------------------------------------------- sources
def is_url(text: str) -> bool:
    return text.startswith(IMAP_SCHEMES)


def parse_refs(args: Sequence[str]) -> list[Ref]:
    """Command-line SOURCE arguments: IMAP urls stay strings, the rest become Paths."""
    return [a if is_url(a) else Path(a) for a in args]


def ref_key(ref: Ref) -> str:
    return ref if isinstance(ref, str) else str(Path(ref).resolve())


def open_ref(
    ref: Ref,
    tenant: str,
    kind: str | None,
    settings: Settings,
    *,
    imap_checkpoint: Path | None = None,
) -> Source:
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


def imap_checkpoint_path(settings: Settings, url: str) -> Path:
    return settings.data_dir / "imap" / (hashlib.sha256(url.encode()).hexdigest()[:16] + ".json")


def fingerprint(ref: Ref) -> str | None:
    """Changes whenever the content may have changed; None for IMAP (always re-polled)."""
    if isinstance(ref, str):
        return None
    path = Path(ref)
    digest = hashlib.blake2b(digest_size=16)
    if path.is_dir():
        for item in sorted(path.rglob("*")):
            if item.is_file():
                st = item.stat()
                digest.update(
                    f"{item.relative_to(path)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode()
                )
        return "dir:" + digest.hexdigest()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return f"file:{path.stat().st_size}:{digest.hexdigest()}"


# ---------------------------------------------------------------------------- ledger
def _ident(event: RawEvent) -> tuple[str, str, str]:
    return (event.tenant, event.id, event_fingerprint(event))


class Ledger:
    """The import checkpoint in DATA_DIR/ingest.db (see the module docstring)."""

    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self.path = path
        if readonly and not path.exists():
            self._db = sqlite3.connect(":memory:", isolation_level=None)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, isolation_level=None, timeout=30.0)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(
            """
            CREATE TABLE IF NOT EXISTS sources (target TEXT NOT NULL, source TEXT NOT NULL,
              fingerprint TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (target, source));
            CREATE TABLE IF NOT EXISTS bad (source TEXT NOT NULL, location TEXT NOT NULL,
              reason TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (source, location, reason));
            """
        )
        self._sent_table()

    def _sent_table(self) -> None:
        """``sent``: one row per delivered id with the fingerprint of its latest content. A
        ledger written before fingerprints gets the column, empty: it matches any content,
        as those rows did."""
        with self._tx():
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS sent (target TEXT NOT NULL, tenant TEXT NOT NULL, "
                "event_id TEXT NOT NULL, source TEXT NOT NULL, status TEXT NOT NULL, "
                "at TEXT NOT NULL, fingerprint TEXT NOT NULL DEFAULT '', "
                "PRIMARY KEY (target, tenant, event_id))"
            )
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(sent)")}
            if "fingerprint" not in columns:
                self._db.execute("ALTER TABLE sent ADD COLUMN fingerprint TEXT NOT NULL DEFAULT ''")

    def close(self) -> None:
        self._db.close()

    def was_sent(self, target: str, event: RawEvent) -> bool:
        """This event's id was delivered to the target, last with this content (a meeting
        moved and moved back is sent each time)."""
        row = self._db.execute(
            "SELECT 1 FROM sent WHERE target = ? AND tenant = ? AND event_id = ? "
            "AND fingerprint IN (?, '')",
            (target, event.tenant, event.id, event_fingerprint(event)),
        ).fetchone()
        return row is not None

    def mark_sent(self, target: str, source: str, done: Sequence[tuple[RawEvent, str]]) -> None:
        now = _now()
        with self._tx():
            self._db.executemany(
                "INSERT OR REPLACE INTO sent VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (target, e.tenant, e.id, source, status, now, event_fingerprint(e))
                    for e, status in done
                ],
            )

    def sent_count(self, target: str, source: str | None = None) -> int:
        if source is None:
            row = self._db.execute("SELECT COUNT(*) FROM sent WHERE target = ?", (target,))
        else:
            row = self._db.execute(
                "SELECT COUNT(*) FROM sent WHERE target = ? AND source = ?", (target, source)
            )
        return int(row.fetchone()[0])

    def complete(self, target: str, source: str) -> str | None:
        row = self._db.execute(
            "SELECT fingerprint FROM sources WHERE target = ? AND source = ?", (target, source)
        ).fetchone()
        return None if row is None else str(row[0])

    def mark_complete(self, target: str, source: str, print_: str) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?)", (target, source, print_, _now())
        )

    def first_report(self, source: str, location: str, reason: str) -> bool:
        """Record a bad item; False if it was already reported."""
        cur = self._db.execute(
            "INSERT OR IGNORE INTO bad VALUES (?, ?, ?, ?)", (source, location, reason, _now())
        )
        return cur.rowcount == 1

    def forget(self, target: str, sources: Sequence[str]) -> None:
        with self._tx():
            for source in sources:
                self._db.execute(
                    "DELETE FROM sent WHERE target = ? AND source = ?", (target, source)
                )
                self._db.execute(
                    "DELETE FROM sources WHERE target = ? AND source = ?", (target, source)
                )

    @contextlib.contextmanager
    def _tx(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")


def _now() -> str:
    return datetime.now(UTC).isoformat()


# ---------------------------------------------------------------------------- targets
Done = list[tuple[RawEvent, str]]  # (event, status) confirmed delivered


class DeliveryError(FoldmemError):
    """A target could not deliver some events; `done` lists those it did deliver."""

    def __init__(self, message: str, done: Done | None = None) -> None:
        super().__init__(message)
        self.done: Done = done or []


class Target(Protocol):
    name: str
    failed: int  # events given up on (dead-lettered) so far

    async def start(self) -> None: ...

    async def send(self, event: RawEvent) -> Done: ...

    async def flush(self) -> Done: ...

    async def close(self) -> None: ...


class EmbeddedTarget:
    """Folds into the data dir's store through the hub, one event at a time.

    Another process writing the same tenant (a running ``foldmem run``) is waited for: the
    hub takes turns with it (:mod:`stream_app.embedded.interlock`), and a transient conflict is
    tried again with backoff; only after ``busy_attempts`` does the import stop with
    :class:`DeliveryError` (nothing recorded for that event: the same command goes on). An
    event the engine refuses (a forgotten id, a time too far ahead) is a bad item; any other
    failure is dead-lettered and counted in ``failed`` (its source is then not recorded as
    complete, so the next run reads it again).
    """

    name = "embedded"

    def __init__(
        self, hub: Any, deadletter: Any, busy_attempts: int = 6, busy_delay_s: float = 0.5
    ) -> None:
        self.hub = hub
        self.deadletter = deadletter
        self.busy_attempts = busy_attempts
        self.busy_delay_s = busy_delay_s
        self.failed = 0

    async def start(self) -> None:
        self.hub.publish_pending()
        await self.hub.recover()

    async def send(self, event: RawEvent) -> Done:
        try:
            result = await self._fold(event)
        except (InvalidEventError, DeliveryError):
            raise
        except FoldmemError as exc:
            self.failed += 1
            self.deadletter.write("ingest", f"event {event.id}", str(exc), "fold_failed")
            return []
        return [(event, result.status)]

    async def _fold(self, event: RawEvent) -> Any:
        delay = self.busy_delay_s
        for attempt in range(1, self.busy_attempts + 1):
            try:
                return await self.hub.fold(event)
            except TransientStoreError as exc:
                if attempt == self.busy_attempts:
                    raise DeliveryError(
                        f"event {event.id} not folded: {exc}; run the same command again to go on"
                    ) from exc
                log.info("ingest_retry_busy", event_id=event.id, attempt=attempt, error=str(exc))
                await asyncio.sleep(delay)
                delay *= 2
        raise AssertionError("unreachable")  # pragma: no cover

    async def flush(self) -> Done:
        return []

    async def close(self) -> None:
        self.hub.publish_pending(wait_s=10.0)


class KafkaTarget:
    """Produces RawEvent JSON keyed by tenant; a batch counts as sent once acknowledged."""

    def __init__(self, settings: Settings, topic: str | None = None, batch: int = 500) -> None:
        self.settings = settings
        self.topic = topic or settings.kafka_events_topic
        self.name = f"kafka:{','.join(settings.kafka_broker_list)}/{self.topic}"
        self.batch = batch
        self.failed = 0  # refused sends raise DeliveryError instead
        self._producer: Any = None
        self._pending: list[tuple[RawEvent, Any]] = []

    async def start(self) -> None:
        from aiokafka import AIOKafkaProducer

        if self.topic == self.settings.kafka_events_topic:
            from stream_app.kafka.topics import ensure_topics

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

    async def send(self, event: RawEvent) -> Done:
        try:
            future = await self._producer.send(
                self.topic, value=event.model_dump_json().encode(), key=event.tenant.encode()
            )
        except Exception as exc:  # aiokafka: buffer full, metadata timeout, too large
            done = await self._settle()
            raise DeliveryError(self._failure(1, exc), done) from exc
        self._pending.append((event, future))
        if len(self._pending) >= self.batch:
            return await self.flush()
        return []

    async def flush(self) -> Done:
        return await self._settle()

    async def _settle(self) -> Done:
        """Wait for the brokers' answer on every pending event: the acknowledged ones, or
        DeliveryError (carrying the acknowledged ones) if any was refused."""
        pending, self._pending = self._pending, []
        if not pending:
            return []
        results = await asyncio.gather(*(f for _, f in pending), return_exceptions=True)
        done: Done = []
        failures: list[BaseException] = []
        for (event, _), result in zip(pending, results, strict=True):
            if isinstance(result, BaseException):
                failures.append(result)
            else:
                done.append((event, "sent"))
        if failures:
            raise DeliveryError(self._failure(len(failures), failures[0]), done)
        return done

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


# ---------------------------------------------------------------------------- importer
@dataclass
class ImportStats:
    read: int = 0
    sent: int = 0
    folded: int = 0
    duplicates: int = 0
    already_sent: int = 0
    bad: int = 0
    bad_known: int = 0
    unchanged_sources: int = 0
    seconds: float = 0.0
    interrupted: bool = False

    def line(self, dry_run: bool = False) -> str:
        rate = self.read / self.seconds if self.seconds > 0 else 0.0
        verb = "would send" if dry_run else "sent"
        parts = [f"read {self.read}", f"{verb} {self.sent}"]
        if self.folded or self.duplicates:
            parts.append(f"folded {self.folded}, duplicates {self.duplicates}")
        parts.append(f"already sent {self.already_sent}")
        known = f" (+{self.bad_known} reported before)" if self.bad_known else ""
        parts.append(f"bad {self.bad}{known}")
        if self.unchanged_sources:
            parts.append(f"unchanged sources skipped {self.unchanged_sources}")
        parts.append(f"{self.seconds:.1f}s ({rate:.0f} items/s)")
        return ", ".join(parts)


class Importer:
    """Reads sources, skips what the ledger says was sent, sends the rest, records it."""

    def __init__(
        self,
        settings: Settings,
        target: Target | None,
        ledger: Ledger,
        *,
        target_name: str,
        tenant: str | None = None,
        kind: str | None = None,
        dry_run: bool = False,
        as_json: bool = False,
        limit: int | None = None,
        progress: bool | None = None,
        deadletter: Any = None,
        out: TextIO | None = None,
        err: TextIO | None = None,
    ) -> None:
        self.settings = settings
        self.target = target
        self.ledger = ledger
        self.target_name = target_name
        self.tenant = tenant or settings.default_tenant
        self.kind = kind
        self.dry_run = dry_run
        self.as_json = as_json
        self.limit = limit
        self.deadletter = deadletter
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.progress = self.err.isatty() if progress is None else progress
        self.stats = ImportStats()
        self.admission = Admission.of(settings.max_future_days)
        self.stop = asyncio.Event()
        self._advance: Any = None
        # (tenant, id, fingerprint) handed to the target but not yet confirmed (a Kafka batch;
        # in a dry run, everything listed): the same item again is not sent twice
        self._in_flight: set[tuple[str, str, str]] = set()

    async def run(self, refs: Sequence[Ref]) -> ImportStats:
        started = time.perf_counter()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._interrupt)
        try:
            if self.target is not None and not self.dry_run:
                await self.target.start()
            with self._progress_view() as progress:
                for ref in refs:
                    if self.stop.is_set():
                        break
                    await self._import(ref, progress)
        finally:
            if self.target is not None and not self.dry_run:
                try:
                    await self.target.close()
                finally:
                    for sig in (signal.SIGINT, signal.SIGTERM):
                        with contextlib.suppress(NotImplementedError, RuntimeError):
                            loop.remove_signal_handler(sig)
            self.stats.seconds = time.perf_counter() - started
        self.stats.interrupted = self.stop.is_set()
        return self.stats

    def _interrupt(self) -> None:
        log.info("ingest_interrupted")
        self.stop.set()

    async def _import(self, ref: Ref, progress: Any) -> None:
        key = ref_key(ref)
        if not isinstance(ref, str) and not Path(ref).exists():
            raise ConfigError(f"{ref}: no such file or folder")
        print_ = fingerprint(ref)
        if print_ is not None and self.ledger.complete(self.target_name, key) == print_:
            self.stats.unchanged_sources += 1
            print(f"{ref}: unchanged since its last complete import, skipped", file=self.err)
            return
        source = open_ref(ref, self.tenant, self.kind, self.settings)
        log.info("ingest_source", source=key, kind=getattr(source, "kind", "?"))
        task = progress.add_task(Path(str(ref)).name, total=None) if progress else None
        complete = True
        failed_before = self.target.failed if self.target is not None else 0
        items = source.read() if isinstance(ref, str) else refusing_whole_files(key, source.read())
        for item in items:
            if task is not None:
                progress.advance(task, 1)
            self.stats.read += item.items if isinstance(item, BadItem) else 1
            if isinstance(item, BadItem):
                self._bad(key, item)
            else:
                await self._event(key, item)
            if self.stop.is_set() or (self.limit is not None and self.stats.sent >= self.limit):
                complete = False
                self.stop.set()
                break
        await self._flush(key)
        if task is not None:
            done = next(t.completed for t in progress.tasks if t.id == task)
            progress.update(task, total=done)
        if self.target is not None and self.target.failed > failed_before:
            complete = False  # an event was not folded: the next run must read the source again
        if complete and print_ is not None and not self.dry_run:
            self.ledger.mark_complete(self.target_name, key, print_)

    def _bad(self, key: str, item: BadItem) -> None:
        if self.dry_run:
            self.stats.bad += 1
            print(f"bad {item.location}: {item.reason}", file=self.err)
            return
        if not self.ledger.first_report(key, item.location, item.reason):
            self.stats.bad_known += 1
            return
        self.stats.bad += 1
        if self.deadletter is not None:
            self.deadletter.write(key, item.location, item.reason)

    async def _event(self, key: str, event: RawEvent) -> None:
        try:
            self.admission.check(event)  # the target stamps received_at (hub, Kafka worker)
        except EventTimeError as exc:  # refused here, for either target
            self._bad(key, BadItem(f"event {event.id}", exc.reason))
            return
        ident = _ident(event)
        if ident in self._in_flight or self.ledger.was_sent(self.target_name, event):
            self.stats.already_sent += 1
            return
        self.stats.sent += 1
        self._in_flight.add(ident)
        if self.dry_run:
            if self.as_json:
                self.out.write(event.model_dump_json() + "\n")
            else:
                title = event.title if len(event.title) <= 80 else event.title[:77] + "..."
                self.out.write(
                    f"{event.tenant}\t{event.ts.isoformat()}\t{event.source}\t{event.id}\t"
                    f"{orjson.dumps(title).decode()}\n"
                )
            return
        assert self.target is not None
        try:
            done = await self.target.send(event)
        except DeliveryError as exc:
            self._record(key, exc.done)
            raise
        except InvalidEventError as exc:  # refused by the engine (a forgotten event id)
            self._in_flight.discard(ident)
            self.stats.sent -= 1
            self._bad(key, BadItem(f"event {event.id}", exc.reason))
            return
        self._record(key, done)

    async def _flush(self, key: str) -> None:
        """Wait for the target to confirm what it holds, and record what it confirmed."""
        if self.dry_run or self.target is None:
            return
        try:
            done = await self.target.flush()
        except DeliveryError as exc:
            self._record(key, exc.done)
            raise
        finally:
            self._in_flight.clear()
        self._record(key, done)

    def _record(self, key: str, done: Done) -> None:
        if not done:
            return
        for event, _ in done:
            self._in_flight.discard(_ident(event))
        self.ledger.mark_sent(self.target_name, key, done)
        for _, status in done:
            if status == "duplicate":
                self.stats.duplicates += 1
            elif status != "sent":
                self.stats.folded += 1

    @contextlib.contextmanager
    def _progress_view(self) -> Iterator[Any]:
        if not self.progress:
            yield None
            return
        from rich.console import Console
        from rich.progress import (
            Progress,
            ProgressColumn,
            SpinnerColumn,
            Task,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.text import Text

        class Rate(ProgressColumn):
            def render(self, task: Task) -> Text:
                speed = task.finished_speed or task.speed
                return Text(f"{speed or 0:.0f} items/s")

        with Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            TextColumn("{task.completed:.0f} items"),
            Rate(),
            TimeElapsedColumn(),
            console=Console(file=self.err),
            transient=False,
        ) as progress:
            yield progress


def delete_checkpoint(settings: Settings, target: str, refs: Sequence[Ref]) -> None:
    ledger = Ledger(settings.ingest_db_path)
    try:
        ledger.forget(target, [ref_key(r) for r in refs])
    finally:
        ledger.close()


__all__ = [
    "DeliveryError",
    "EmbeddedTarget",
    "ImportStats",
    "Importer",
    "KafkaTarget",
    "Ledger",
    "fingerprint",
    "open_ref",
    "parse_refs",
]
