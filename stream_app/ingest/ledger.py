"""The import checkpoint in DATA_DIR/ingest.db (``foldmem ingest``; ``foldmem run`` keeps its
record of reported bad items here too):

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
  or a followed mbox that grew) reports each bad item once.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

from schemas.events import RawEvent
from topologies.engine import event_fingerprint


def fingerprint(path: Path) -> str:
    """Changes whenever the content of a file or folder may have changed."""
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


def event_ident(event: RawEvent) -> tuple[str, str, str]:
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


class OpenedOnUse:
    """A ledger opened at its first use (a run with no bad item creates no ingest.db)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._ledger: Ledger | None = None

    def first_report(self, source: str, location: str, reason: str) -> bool:
        if self._ledger is None:
            self._ledger = Ledger(self.path)
        return self._ledger.first_report(source, location, reason)

    def close(self) -> None:
        if self._ledger is not None:
            self._ledger.close()
            self._ledger = None
