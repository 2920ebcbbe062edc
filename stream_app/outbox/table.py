"""The intent outbox: one durable log of intent messages per data dir, in its store
(``foldmem.db``), with each destination's place in it.

- ``intent_outbox``: the messages, appended in the same transaction as the change that
  caused them (a fold, an intent status, a nightly pass, a deletion's retractions), or copied
  from the intents topic (``foldmem notify``), or replayed from the dead letters for one sink
  (``sink`` names it; empty for every sink).
- ``outbox_cursors``: per sink (its ``Sink.name``), the last message it is done with, and the
  retry state of the next one (attempts, when to try again, the last error), so a restart
  goes on where the previous process stopped, backoff included.
- ``outbox_delivered``: per sink that delivers each message id once, the ids it delivered.

Processes sharing a data dir share the cursors: the one holding a sink's lock delivers it
(:mod:`stream_app.outbox.delivery`). A sink seen for the first time starts where the other
sinks are (or, in a store written before cursors, after the rows marked published): it gets
what is emitted from now on, not the history.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from schemas.intents import IntentMessage
from stream_app.embedded.store import Store


@dataclass(frozen=True)
class OutboxRow:
    seq: int
    message: IntentMessage
    created_at: float  # epoch seconds: a retry horizon counts from here


@dataclass(frozen=True)
class Cursor:
    seq: int  # the last row the sink is done with
    attempts: int = 0  # failed attempts at the next row
    next_at: float = 0.0  # epoch seconds: no attempt before this


class Outbox:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.db = store.connection

    # ---------------------------------------------------------------- reading
    def cursor(self, sink: str) -> Cursor:
        """The sink's cursor, created where the other sinks are when it is new."""
        row = self.db.execute(
            "SELECT seq, attempts, next_at FROM outbox_cursors WHERE sink = ?", (sink,)
        ).fetchone()
        if row is not None:
            return Cursor(int(row[0]), int(row[1]), float(row[2]))
        start = self._start()
        with self.store.transaction():
            self.db.execute(
                "INSERT OR IGNORE INTO outbox_cursors (sink, seq) VALUES (?, ?)", (sink, start)
            )
        return self.cursor(sink)

    def _start(self) -> int:
        row = self.db.execute("SELECT MIN(seq) FROM outbox_cursors").fetchone()
        if row is not None and row[0] is not None:
            return int(row[0])
        row = self.db.execute("SELECT MAX(seq) FROM intent_outbox WHERE published = 1").fetchone()
        return int(row[0]) if row is not None and row[0] is not None else 0

    def rows(self, sink: str, after: int, limit: int = 100) -> list[OutboxRow]:
        """The sink's messages after ``after``, oldest first."""
        found = self.db.execute(
            "SELECT seq, message, created_at FROM intent_outbox "
            "WHERE seq > ? AND sink IN ('', ?) ORDER BY seq LIMIT ?",
            (after, sink, limit),
        ).fetchall()
        return [
            OutboxRow(int(seq), IntentMessage.model_validate_json(data), _epoch(created))
            for seq, data, created in found
        ]

    def pending(self, sink: str) -> int:
        """Messages the sink still has to handle."""
        after = self.cursor(sink).seq
        row = self.db.execute(
            "SELECT COUNT(*) FROM intent_outbox WHERE seq > ? AND sink IN ('', ?)", (after, sink)
        ).fetchone()
        return int(row[0])

    def unpublished(self) -> list[OutboxRow]:
        """Messages some sink has not handled yet (every message before any sink was seen)."""
        row = self.db.execute("SELECT MIN(seq) FROM outbox_cursors").fetchone()
        after = int(row[0]) if row is not None and row[0] is not None else self._start()
        found = self.db.execute(
            "SELECT seq, message, created_at FROM intent_outbox WHERE seq > ? ORDER BY seq",
            (after,),
        ).fetchall()
        return [
            OutboxRow(int(seq), IntentMessage.model_validate_json(data), _epoch(created))
            for seq, data, created in found
        ]

    def delivered_before(self, sink: str, message_id: str) -> bool:
        row = self.db.execute(
            "SELECT 1 FROM outbox_delivered WHERE sink = ? AND message_id = ?", (sink, message_id)
        ).fetchone()
        return row is not None

    # ---------------------------------------------------------------- writing
    def append(self, messages: Sequence[IntentMessage], *, sink: str = "") -> None:
        """Messages that enter here rather than with a change (the intents topic, a replay)."""
        if messages:
            self.store.write_messages(messages, sink)

    def passed(self, sink: str, seq: int, delivered: Sequence[str] = ()) -> None:
        """The sink is done with every row up to ``seq`` (``delivered``: the message ids it
        delivered, recorded when it delivers each id once); the retry state starts over."""
        now = datetime.now(UTC).isoformat()
        with self.store.transaction():
            self.db.execute(
                "UPDATE outbox_cursors SET seq = ?, attempts = 0, next_at = 0, last_error = '' "
                "WHERE sink = ?",
                (seq, sink),
            )
            self.db.executemany(
                "INSERT OR IGNORE INTO outbox_delivered VALUES (?, ?, ?)",
                [(sink, message_id, now) for message_id in delivered],
            )

    def retry_later(self, sink: str, attempts: int, next_at: float, error: str) -> None:
        with self.store.transaction():
            self.db.execute(
                "UPDATE outbox_cursors SET attempts = ?, next_at = ?, last_error = ? "
                "WHERE sink = ?",
                (attempts, next_at, error[:500], sink),
            )


def _epoch(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()
