"""WhatsApp .txt exports: Android ("date, time - Name: text"), iOS ("[date, time] Name: text")."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from connectors.base import Item, aware, bad, make_event, resolve_tz, stable_id

_MARKS = "\u200e\u200f\ufeff"
_IOS = re.compile(r"^\[(?P<date>[^,\]]+),\s*(?P<time>[^\]]+)\]\s(?P<rest>.*)$")
_ANDROID = re.compile(
    r"^(?P<date>\d{1,4}[./-]\d{1,2}[./-]\d{1,4}),?\s"
    r"(?P<time>\d{1,2}[:.]\d{2}(?:[:.]\d{2})?(?:[\s\u202f\u00a0]*[AaPp]\.?\s?[Mm]\.?)?)"
    r"\s[-\u2013]\s(?P<rest>.*)$"
)
_TIME = re.compile(
    r"^(?P<h>\d{1,2})[:.](?P<m>\d{2})(?:[:.](?P<s>\d{2}))?[\s\u202f\u00a0]*(?P<ampm>[AaPp])?"
)
_MEDIA = re.compile(r"^(<attached: (?P<ios>[^>]+)>|(?P<android>\S+\.\w{2,5}) \(file attached\))$")
_OMITTED = ("<media omitted>", "image omitted", "video omitted", "audio omitted",
            "sticker omitted", "document omitted", "gif omitted")  # fmt: skip


@dataclass
class _Message:
    line: int
    date: str
    time: str
    sender: str | None
    lines: list[str] = field(default_factory=list)


class WhatsAppSource:
    """Messages of a WhatsApp .txt export; times are local (`default_tz`).

    Date order (day or month first) is inferred from the file, else `dayfirst`.
    Ids hash (chat, time, sender, text, n-th repeat), so a later export of the same
    chat gives the same ids; `chat` defaults to the name in the file name.
    """

    kind = "whatsapp"

    def __init__(
        self,
        path: str | Path,
        tenant: str,
        *,
        chat: str | None = None,
        default_tz: str | tzinfo = "UTC",
        dayfirst: bool | None = None,
    ) -> None:
        self.path = Path(path)
        self.name = str(path)
        self.tenant = tenant
        self.chat = chat or chat_name(self.path)
        self.default_tz = resolve_tz(default_tz)
        self.dayfirst = dayfirst

    def read(self) -> Iterator[Item]:
        text = self.path.read_bytes().decode("utf-8", errors="replace")
        messages: list[_Message] = []
        orphans: list[int] = []
        for no, raw in enumerate(text.splitlines(), 1):
            line = raw.lstrip(_MARKS)
            head = parse_header(line)
            if head is None:
                if messages:
                    messages[-1].lines.append(raw.strip(_MARKS))
                elif line.strip():
                    orphans.append(no)
                continue
            date_text, time_text, rest = head
            name, sep, body = rest.partition(": ")
            # A system notice ("Messages are end-to-end encrypted") has no "Name: " on Android
            # and a left-to-right mark before its text on iOS (as media lines do).
            sender = name if sep and not _is_ios_notice(body) else None
            body = body if sep else rest
            messages.append(_Message(no, date_text, time_text, sender, [body.lstrip(_MARKS)]))
        if orphans:
            where = (
                f"line {orphans[0]}" if len(orphans) == 1 else f"lines {orphans[0]}-{orphans[-1]}"
            )
            yield bad(f"{self.path.name}:{where}", "text before the first message header")
        dayfirst = self.dayfirst if self.dayfirst is not None else infer_dayfirst(messages)
        repeats: Counter[tuple[str, str, str]] = Counter()
        for msg in messages:
            if msg.sender is None:
                continue
            location = f"{self.path.name}:line {msg.line}"
            when = parse_datetime(msg.date, msg.time, dayfirst)
            if when is None:
                yield bad(location, f"unreadable date/time {msg.date!r} {msg.time!r}")
                continue
            yield self._event(msg, aware(when, self.default_tz), location, repeats)

    def _event(
        self,
        msg: _Message,
        when: datetime,
        location: str,
        repeats: Counter[tuple[str, str, str]],
    ) -> Item:
        sender = (msg.sender or "").strip(_MARKS + " ")
        body_lines: list[str] = []
        media: list[str] = []
        omitted = False
        for line in msg.lines:
            stripped = line.strip(_MARKS + " ")
            found = _MEDIA.match(stripped)
            if found:
                media.append(found.group("ios") or found.group("android"))
            elif stripped.lower() in _OMITTED:
                omitted = True
            else:
                body_lines.append(line)
        text = "\n".join(body_lines).strip()
        key = (when.isoformat(), sender, "\n".join(msg.lines))
        repeats[key] += 1
        attrs: dict[str, Any] = {"platform": "whatsapp", "channel": self.chat}
        if media:
            attrs["attachments"] = [{"filename": m, "content_type": None} for m in media]
        if omitted:
            attrs["media_omitted"] = True
        if text == "This message was deleted" or text == "You deleted this message":
            attrs["deleted"] = True
            text = ""
        return make_event(
            location,
            id=stable_id("chat:whatsapp", self.chat, *key, str(repeats[key])),
            tenant=self.tenant,
            source="chat",
            ts=when,
            title=f"{sender} in {self.chat}",
            body=text,
            participants=[sender],
            attrs=attrs,
        )


def _is_ios_notice(body: str) -> bool:
    if not body.startswith("\u200e"):
        return False
    text = body.strip(_MARKS + " ")
    return not (_MEDIA.match(text) or text.lower() in _OMITTED)


def parse_header(line: str) -> tuple[str, str, str] | None:
    """(date, time, rest) of a message's first line, or None for a continuation line."""
    match = _IOS.match(line) or _ANDROID.match(line)
    if not match or not re.match(r"^\d{1,4}[./-]\d{1,2}[./-]\d{1,4}$", match["date"].strip()):
        return None
    if not _TIME.match(match["time"].strip()):
        return None
    return match["date"].strip(), match["time"].strip(), match["rest"]


def infer_dayfirst(messages: list[_Message]) -> bool:
    """Day first unless some date only makes sense month first (or AM/PM suggests the US)."""
    ampm = False
    for msg in messages:
        parts = re.split(r"[./-]", msg.date)
        if len(parts[0]) == 4:
            continue
        first, second = int(parts[0]), int(parts[1])
        if first > 12:
            return True
        if second > 12:
            return False
        ampm = ampm or bool(re.search(r"[AaPp]\.?\s?[Mm]", msg.time))
    return not ampm


def parse_datetime(date_text: str, time_text: str, dayfirst: bool) -> datetime | None:
    pieces = re.split(r"[./-]", date_text)
    if len(pieces) != 3:
        return None
    parts = [int(p) for p in pieces]
    if len(pieces[0]) == 4:
        year, month, day = parts
    elif dayfirst:
        day, month, year = parts
    else:
        month, day, year = parts
    if year < 100:
        year += 2000
    match = _TIME.match(time_text)
    if not match:
        return None
    hour, minute, second = int(match["h"]), int(match["m"]), int(match["s"] or 0)
    if match["ampm"]:
        pm = match["ampm"].lower() == "p"
        hour = hour % 12 + (12 if pm else 0)
    try:
        return datetime(year, month, day, hour, minute, second)
    except ValueError:
        return None


def chat_name(path: Path) -> str:
    """'Bob' from 'WhatsApp Chat with Bob.txt' (or its folder for iOS '_chat.txt')."""
    stem = path.stem if path.name != "_chat.txt" else path.parent.name
    for prefix in (
        "WhatsApp Chat with ",
        "WhatsApp Chat - ",
        "WhatsApp-Chat mit ",
        "Chat WhatsApp con ",
    ):
        if stem.startswith(prefix):
            return stem[len(prefix) :]
    return stem
