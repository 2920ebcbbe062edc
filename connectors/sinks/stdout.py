"""Print intent messages, one line each: ``human`` (what ``foldmem run`` prints), ``line`` (a
compact log line, ``foldmem notify --stdout``) or ``json``."""

from __future__ import annotations

import sys
from typing import Literal, TextIO

from connectors.sinks.base import message_body
from schemas.intents import IntentMessage, title_without_deadline

Style = Literal["human", "line", "json"]


class StdoutSink:
    name = "stdout"

    def __init__(
        self, *, style: Style = "line", json: bool = False, stream: TextIO | None = None
    ) -> None:
        self.style: Style = "json" if json else style
        self.stream = stream

    @property
    def _out(self) -> TextIO:
        return self.stream or sys.stdout

    async def add(self, message: IntentMessage) -> None:
        if self.style == "json":
            text = message_body(message).decode()
        elif self.style == "human":
            text = describe(message)
        else:
            text = format_line(message)
        self._out.write(text + "\n")
        if self.style == "human":
            self._out.flush()  # a person is watching

    async def flush(self) -> None:
        self._out.flush()

    async def close(self) -> None:
        await self.flush()


def describe(message: IntentMessage) -> str:
    """One human-readable line for an intent message."""
    intent = message.intent
    if message.type == "intent.retracted":
        return f"[{message.tenant}] intent retracted ({message.reason}): id {intent.id}"
    if message.type == "intent.created":
        what = "new intent"
    elif message.type == "intent.updated":
        what = _update(message)
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


def _update(message: IntentMessage) -> str:
    """What an ``intent.updated`` changed: the title beyond its "(by 18 Nov)" suffix, else
    the deadline (a title names its deadline: a moved date alone is no rename)."""
    before_title = title_without_deadline(message.previous_title or "")
    if before_title != title_without_deadline(message.intent.title):
        return f"intent renamed from {message.previous_title!r}"
    before, after = message.previous_deadline, message.intent.deadline
    if before is None:
        return "intent deadline set"
    if after is None:
        return f"intent deadline dropped (was {before.date().isoformat()})"
    if before.date() == after.date():
        return f"intent deadline moved from {before.isoformat(timespec='minutes')}"
    return f"intent deadline moved from {before.date().isoformat()}"


def format_line(message: IntentMessage) -> str:
    """e.g. `2024-03-01T09:00:00+00:00 alice NEW pending "Sign the lease" deadline=... id=...`."""
    intent = message.intent
    if message.type == "intent.retracted":
        when = message.emitted_at.isoformat()
        return f"{when} {message.tenant} RETRACTED {message.reason} id={intent.id}"
    what = {"intent.created": "NEW", "intent.updated": "UPDATED"}.get(message.type, "STATUS")
    change = (
        f"{message.previous_status.value}->{intent.status.value}"
        if message.previous_status is not None and message.type == "intent.status_changed"
        else intent.status.value
    )
    parts = [message.emitted_at.isoformat(), message.tenant, what, change, f'"{intent.title}"']
    if intent.deadline is not None:
        parts.append(f"deadline={intent.deadline.isoformat()}")
    parts.append(f"category={intent.category}")
    parts.append(f"id={intent.id}")
    return " ".join(parts)
