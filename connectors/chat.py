"""Chat sources: a generic JSONL chat format, plus Slack and WhatsApp exports (re-exported)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any

import orjson

from connectors.base import Item, aware, bad, json_problem, make_event, resolve_tz, stable_id
from connectors.slack import SlackSource
from connectors.whatsapp import WhatsAppSource

# The spellings chat exports use for each field, in order of preference (the first present wins).
FIELDS: dict[str, tuple[str, ...]] = {
    "user": ("user", "from", "sender", "author", "username", "user_name", "sender_name"),
    "text": ("text", "message", "content", "body", "msg"),
    "ts": ("ts", "timestamp", "time", "date", "datetime", "created_at", "sent_at"),
    "channel": ("channel", "room", "conversation", "channel_name"),
    "id": ("id", "message_id", "msg_id", "uuid"),
    "thread": ("thread", "thread_id", "thread_ts"),
}
_DESCRIBE = {"user": "the sender", "text": "the text", "ts": "the time"}
_PERSON_KEYS = ("name", "display_name", "username", "id")


def field_value(obj: dict[str, Any], name: str) -> tuple[str | None, Any]:
    """(key, value) of the first spelling of ``name`` present with a value, else (None, None)."""
    for key in FIELDS[name]:
        value = obj.get(key)
        if value not in (None, "", [], {}):
            return key, value
    return None, None


def _person(value: Any) -> str | None:
    """A sender as text: a string or number, or an object's name (``{"name": ..., "id": ...}``)."""
    if isinstance(value, dict):
        value = next((value[k] for k in _PERSON_KEYS if value.get(k) not in (None, "")), None)
    if isinstance(value, str | int) and not isinstance(value, bool):
        return str(value).strip() or None
    return None


def _text(value: Any) -> str | None:
    """Message text: a string, or a list of strings and ``{"text": ...}`` parts (rich text)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [p if isinstance(p, str) else p.get("text") if isinstance(p, dict) else None
                 for p in value]  # fmt: skip
        if all(isinstance(p, str) for p in parts):
            return "".join(p for p in parts if isinstance(p, str))
    return None


class ChatJsonlSource:
    """One chat message per line: sender, text, time, and optionally channel, id and thread.

    Each field is read under the spellings exports use (:data:`FIELDS`): the sender as
    ``user``, ``from``, ``sender`` or ``author`` (text, or an object with a ``name``), the text
    as ``text``, ``message``, ``content`` or ``body``, the time as ``ts``, ``timestamp``,
    ``time`` or ``date``, the channel as ``channel``, ``room`` or ``conversation`` (default:
    the file's name). The time is ISO 8601 (floating times use `default_tz`) or epoch seconds
    (or milliseconds). Other keys go to attrs. Id: hash of (channel, id), or of the whole
    message without id.
    """

    kind = "chat-jsonl"

    def __init__(self, path: str | Path, tenant: str, *, default_tz: str | tzinfo = "UTC") -> None:
        self.path = Path(path)
        self.name = str(path)
        self.tenant = tenant
        self.default_tz = resolve_tz(default_tz)

    def read(self) -> Iterator[Item]:
        with self.path.open("rb") as fh:
            for no, raw in enumerate(fh, 1):
                line = raw.strip().removeprefix(b"\xef\xbb\xbf")
                if line:
                    yield self._parse(line, f"{self.path.name}:line {no}")

    def _parse(self, line: bytes, location: str) -> Item:
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            return bad(location, json_problem(line, exc))
        if not isinstance(obj, dict):
            return bad(location, "expected a JSON object")
        found = {name: field_value(obj, name) for name in FIELDS}
        user = _person(found["user"][1])
        text = _text(found["text"][1]) if found["text"][0] else _text(obj.get("text"))
        missing = [n for n, ok in (("user", user), ("ts", found["ts"][0])) if not ok]
        if text is None:
            missing.append("text")
        if missing:
            return bad(location, "missing " + "; ".join(_missing(n) for n in missing))
        ts_key, ts_value = found["ts"]
        when = parse_ts(ts_value, self.default_tz)
        if when is None:
            return bad(location, f"{ts_key}: not a date/time or epoch: {ts_value!r}")
        assert user is not None and text is not None
        channel_value = found["channel"][1]
        channel = str(channel_value) if isinstance(channel_value, str | int) else self.path.stem
        message_id = found["id"][1]
        thread = found["thread"][1]
        if message_id is not None:
            event_id = stable_id("chat:jsonl", channel, str(message_id))
        else:
            event_id = stable_id("chat:jsonl", channel, user, when.isoformat(), text)
        attrs: dict[str, Any] = {"platform": "jsonl", "channel": channel}
        if message_id is not None:
            attrs["message_id"] = str(message_id)
        if thread is not None:
            attrs["thread"] = str(thread)
            attrs["thread_id"] = stable_id("chat:jsonl", channel, str(thread))
        used = {key for key, _ in found.values() if key is not None} | {"text"}
        attrs.update({k: v for k, v in obj.items() if k not in used})
        return make_event(
            location,
            id=event_id,
            tenant=self.tenant,
            source="chat",
            ts=when,
            title=f"{user} in {channel}",
            body=text,
            participants=[user],
            attrs=attrs,
        )


def _missing(name: str) -> str:
    return f"{_DESCRIBE[name]} (one of: {', '.join(FIELDS[name])})"


def looks_like_chat(obj: dict[str, Any]) -> bool:
    """A JSON object that reads as a chat message: a text and a sender or a channel."""
    has = {name: field_value(obj, name)[0] is not None for name in FIELDS}
    return has["text"] and (has["user"] or has["channel"])


def parse_ts(value: Any, default_tz: tzinfo) -> datetime | None:
    """ISO 8601 text or epoch seconds/milliseconds as an aware datetime."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        text = value.strip()
        if _is_number(text):
            return parse_ts(float(text), default_tz)
        try:
            return aware(datetime.fromisoformat(text.replace("Z", "+00:00")), default_tz)
        except ValueError:
            return None
    return None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


__all__ = ["ChatJsonlSource", "SlackSource", "WhatsAppSource", "looks_like_chat", "parse_ts"]
