"""The durable delivery queue of one webhook: what is still to be delivered, and what was.

One SQLite file per webhook URL under ``DATA_DIR/notify/`` (``webhook-<hash>-queue.db``),
shared by every process that delivers to that URL (``foldmem run``, ``foldmem ingest``,
``foldmem notify``):

- ``pending``: each message to deliver with the number of attempts so far, the time of the
  next one (exponential backoff) and the last error. A row leaves the table when the message
  was delivered, or when it is dead-lettered: at once after a refusal that retrying cannot
  change (a 4xx other than 408/425/429), else after a failed attempt once the message is older
  than the retry horizon (``FOLDMEM_WEBHOOK_RETRY_HOURS``).
- ``delivered`` (the file ``webhook-<hash>.db`` the deduplicating sink always used): every
  message id the receiver accepted. A message id in it is never sent again (a replay, the same
  message published twice, a second process).
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from schemas.intents import IntentMessage

_PENDING = """
CREATE TABLE IF NOT EXISTS pending (seq INTEGER PRIMARY KEY AUTOINCREMENT,
  message_id TEXT NOT NULL, body BLOB NOT NULL, added_at TEXT NOT NULL)
"""
_COLUMNS = {
    "attempts": "INTEGER NOT NULL DEFAULT 0",
    "next_at": "REAL NOT NULL DEFAULT 0",  # epoch seconds of the next attempt
    "first_at": "REAL NOT NULL DEFAULT 0",  # epoch seconds it was queued (the horizon's start)
    "last_error": "TEXT NOT NULL DEFAULT ''",
}


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter: ``first_delay_s * 2**(n-1)`` capped at ``max_delay_s``
    (at least a receiver's Retry-After), for ``horizon_s`` after a message was queued."""

    first_delay_s: float = 1.0
    max_delay_s: float = 600.0
    horizon_s: float = 24 * 3600.0

    def delay(self, attempts: int, retry_after: float | None = None) -> float:
        base = min(self.max_delay_s, self.first_delay_s * 2 ** max(0, attempts - 1))
        delay = base / 2 + random.uniform(0, base / 2)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_delay_s))
        return delay


@dataclass(frozen=True)
class Pending:
    seq: int
    message: IntentMessage
    attempts: int
    first_at: float


class WebhookQueue:
    """The two tables of one webhook; thread-safe (the delivery thread and ``emit`` share it)."""

    def __init__(self, queue_path: Path, delivered_path: Path) -> None:
        queue_path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            queue_path, check_same_thread=False, isolation_level=None, timeout=30.0
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"ATTACH DATABASE '{_quoted(delivered_path)}' AS seen")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS seen.delivered "
            "(message_id TEXT PRIMARY KEY, delivered_at TEXT)"
        )
        self._db.execute(_PENDING)
        have = {row[1] for row in self._db.execute("PRAGMA table_info(pending)")}
        for name, spec in _COLUMNS.items():  # a queue written before retries were durable
            if name not in have:
                self._db.execute(f"ALTER TABLE pending ADD COLUMN {name} {spec}")
        self._db.execute("UPDATE pending SET first_at = ? WHERE first_at = 0", (time.time(),))

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ----------------------------------------------------------------- writing
    def add(self, message: IntentMessage, now: float | None = None) -> bool:
        """Queue a message; False (nothing queued) when its id was delivered before."""
        at = time.time() if now is None else now
        with self._tx() as db:
            if self._was_delivered(db, message.message_id):
                return False
            db.execute(
                "INSERT INTO pending (message_id, body, added_at, attempts, next_at, first_at) "
                "VALUES (?, ?, ?, 0, ?, ?)",
                (message.message_id, message.model_dump_json(), _iso(at), at, at),
            )
        return True

    def delivered(self, seq: int, message_id: str) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT OR IGNORE INTO seen.delivered VALUES (?, ?)",
                (message_id, datetime.now(UTC).isoformat()),
            )
            db.execute("DELETE FROM pending WHERE seq = ?", (seq,))

    def retry_later(self, seq: int, attempts: int, next_at: float, error: str) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE pending SET attempts = ?, next_at = ?, last_error = ? WHERE seq = ?",
                (attempts, next_at, error[:500], seq),
            )

    def drop(self, seq: int) -> None:
        with self._tx() as db:
            db.execute("DELETE FROM pending WHERE seq = ?", (seq,))

    # ----------------------------------------------------------------- reading
    def due(self, now: float, limit: int = 100) -> list[Pending]:
        """Messages whose next attempt is due, oldest first; those delivered meanwhile (by
        another process, or queued twice) are dropped on the way."""
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, message_id, body, attempts, first_at FROM pending "
                "WHERE next_at <= ? ORDER BY seq LIMIT ?",
                (now, limit),
            ).fetchall()
        found: list[Pending] = []
        for seq, message_id, body, attempts, first_at in rows:
            if self.was_delivered(str(message_id)):
                self.drop(int(seq))
                continue
            message = IntentMessage.model_validate_json(body)
            found.append(Pending(int(seq), message, int(attempts), float(first_at)))
        return found

    def was_delivered(self, message_id: str) -> bool:
        with self._lock:
            return self._was_delivered(self._db, message_id)

    @staticmethod
    def _was_delivered(db: sqlite3.Connection, message_id: str) -> bool:
        row = db.execute(
            "SELECT 1 FROM seen.delivered WHERE message_id = ?", (message_id,)
        ).fetchone()
        return row is not None

    def pending(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM pending").fetchone()[0])

    def next_at(self) -> float | None:
        with self._lock:
            row = self._db.execute("SELECT MIN(next_at) FROM pending").fetchone()
        return None if row is None or row[0] is None else float(row[0])


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat()


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")
