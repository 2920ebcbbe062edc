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

_REQUIRED = ("channel", "user", "ts", "text")
_KNOWN = frozenset({*_REQUIRED, "id", "thread"})


class ChatJsonlSource:
    """One chat message per line: {"id"?, "channel", "user", "ts", "text", "thread"?}.

    `ts` is ISO 8601 (floating times use `default_tz`) or epoch seconds (or milliseconds).
    Other keys go to attrs. Id: hash of (channel, id), or of the whole message without id.
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
        missing = [k for k in _REQUIRED if obj.get(k) in (None, "") and k != "text"]
        if missing or not isinstance(obj.get("text", None), str):
            return bad(location, "missing field(s): " + ", ".join(missing or ["text"]))
        when = parse_ts(obj["ts"], self.default_tz)
        if when is None:
            return bad(location, f"ts: not a date/time or epoch: {obj['ts']!r}")
        channel, user, text = str(obj["channel"]), str(obj["user"]), obj["text"]
        if obj.get("id") not in (None, ""):
            event_id = stable_id("chat:jsonl", channel, str(obj["id"]))
        else:
            event_id = stable_id("chat:jsonl", channel, user, when.isoformat(), text)
        attrs: dict[str, Any] = {"platform": "jsonl", "channel": channel}
        if obj.get("id") not in (None, ""):
            attrs["message_id"] = str(obj["id"])
        if obj.get("thread") not in (None, ""):
            attrs["thread"] = str(obj["thread"])
            attrs["thread_id"] = stable_id("chat:jsonl", channel, str(obj["thread"]))
        attrs.update({k: v for k, v in obj.items() if k not in _KNOWN})
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


__all__ = ["ChatJsonlSource", "SlackSource", "WhatsAppSource", "parse_ts"]
