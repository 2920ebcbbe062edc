"""The embedded mode's local output files, DATA_DIR/intents.jsonl, deadletter.jsonl and
webhook-deadletter.jsonl (undeliverable webhook messages), and the rewrite a deletion makes
of them.

They are append-only logs, written one line per ``os.write`` under an exclusive ``flock``
(:func:`connectors.sinks.files.append_line`). A deletion (``forget-event``,
``forget-tenant``, CLI or API) rewrites them without the deleted content, atomically and under
the same lock (:func:`connectors.sinks.files.rewrite_lines`), so no line appended meanwhile is
lost.

What a rewrite removes (:class:`Scrub`): every line of a forgotten tenant; every message of a
deleted intent (the retraction that follows says it is gone); in the remaining messages of the
tenant, the deleted events' ids (evidence lists) and their titles quoted in descriptions
(as the graph's own texts lose them, topologies.privacy); every
dead-letter record naming a deleted event id (as its ``event_id`` or a word of its location or
reason).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from connectors.sinks.files import rewrite_lines
from topologies.privacy import scrub_quotes


@dataclass
class Scrub:
    """What a deletion removed, as the local files may hold it."""

    tenant: str
    whole_tenant: bool = False
    intent_ids: set[str] = field(default_factory=set)  # deleted intents
    event_ids: set[str] = field(default_factory=set)  # deleted RawEvent ids
    quotes: list[str] = field(default_factory=list)  # titles of the deleted events

    def intent_line(self, line: bytes) -> bytes | None:
        """An intent message line, or a record wrapping one in ``message`` (the webhook's
        dead letters): dropped, rewritten or kept as it is."""
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            return line
        if not isinstance(record, dict):
            return line
        inner = record.get("message")
        message = inner if isinstance(inner, dict) else record
        verdict = self._message(message)
        if verdict is None:
            return None
        return orjson.dumps(record) if verdict else line

    def _message(self, message: dict[str, Any]) -> bool | None:
        """None: drop the message; True: it was scrubbed in place; False: untouched."""
        if message.get("tenant") != self.tenant:
            return False
        if self.whole_tenant:
            return None
        intent = message.get("intent")
        if not isinstance(intent, dict) or message.get("type") == "intent.retracted":
            return False
        if intent.get("id") in self.intent_ids:
            return None
        changed = False
        evidence = intent.get("evidence_event_ids")
        if isinstance(evidence, list) and self.event_ids.intersection(evidence):
            intent["evidence_event_ids"] = [e for e in evidence if e not in self.event_ids]
            changed = True
        description = intent.get("description")
        if isinstance(description, str):  # the node's text: where titles of events are quoted
            scrubbed = scrub_quotes(description, self.quotes)
            changed = changed or scrubbed != description
            intent["description"] = scrubbed
        return changed

    def deadletter_line(self, line: bytes) -> bytes | None:
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            record = None
        if isinstance(record, dict):
            if self.whole_tenant and record.get("tenant") == self.tenant:
                return None
            if record.get("event_id") in self.event_ids:
                return None
        text = line.decode("utf-8", "replace")
        if self.event_ids & set(_WORD.findall(text)):
            return None
        if not isinstance(record, dict):
            return line
        cleaned = _scrub_strings(record, self.quotes)
        return line if cleaned == record else orjson.dumps(cleaned)


_WORD = re.compile(r"[^\s\"',;()\[\]{}]+")


def _scrub_strings(value: Any, quotes: Iterable[str]) -> Any:
    if isinstance(value, str):
        return scrub_quotes(value, quotes)
    if isinstance(value, dict):
        return {k: _scrub_strings(v, quotes) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub_strings(v, quotes) for v in value]
    return value


def scrub_files(intents: Iterable[Path], deadletter: Path | None, scrub: Scrub) -> dict[str, int]:
    """Rewrite the intent logs and the dead-letter file; lines changed or dropped per file."""
    done: dict[str, int] = {}
    for path in dict.fromkeys(intents):
        done[str(path)] = rewrite_lines(path, scrub.intent_line)
    if deadletter is not None:
        done[str(deadletter)] = rewrite_lines(deadletter, scrub.deadletter_line)
    return done
