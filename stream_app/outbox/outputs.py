"""Where emitted intent messages go in the embedded mode: a human line and intents.jsonl.

An output is anything with ``emit(message)``; the connectors' sinks can be added beside these.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Protocol, TextIO, runtime_checkable

import orjson

from schemas.intents import IntentMessage
from stream_app.embedded.files import append_line


@runtime_checkable
class IntentOutput(Protocol):
    def emit(self, message: IntentMessage) -> None: ...


def describe(message: IntentMessage) -> str:
    """One human-readable line for an intent message."""
    intent = message.intent
    if message.type == "intent.retracted":
        return f"[{message.tenant}] intent retracted ({message.reason}): id {intent.id}"
    if message.type == "intent.created":
        what = "new intent"
    else:
        before = message.previous_status.value if message.previous_status else "?"
        what = f"intent {before} -> {intent.status.value}"
    parts = [f"[{message.tenant}] {what}: {intent.title!r}", f"({intent.category}"]
    parts[-1] += f", {intent.status.value})"
    if intent.deadline is not None:
        parts.append(f"due {intent.deadline.date().isoformat()}")
    if intent.evidence_event_ids:
        parts.append(f"evidence: {len(intent.evidence_event_ids)} events")
    parts.append(f"id {intent.id}")
    return " ".join(parts)


class ConsoleOutput:
    """Prints one line per message (stdout by default)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    def emit(self, message: IntentMessage) -> None:
        stream = self._stream or sys.stdout
        print(describe(message), file=stream, flush=True)


class JsonlFileOutput:
    """Appends each message as one JSON line (one locked write per line, O_APPEND; a deletion
    rewrites the file, see stream_app.embedded.files)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def emit(self, message: IntentMessage) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        record = orjson.loads(message.model_dump_json())
        record["message_id"] = message.message_id
        append_line(self.path, orjson.dumps(record))
