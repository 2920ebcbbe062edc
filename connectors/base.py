"""The source contract: sources yield RawEvents and report bad items individually."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, tzinfo
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import orjson
import structlog
from pydantic import ValidationError

from connectors.errors import ConnectorError
from schemas.events import RawEvent
from schemas.limits import (
    MAX_ATTRS_BYTES,
    MAX_BODY_BYTES,
    MAX_PARTICIPANT_CHARS,
    MAX_PARTICIPANTS,
    MAX_TITLE_BYTES,
)

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class BadItem:
    """An input item that could not become a RawEvent; `location` is e.g. 'mail.mbox:message 12'."""

    location: str
    reason: str
    items: int = 1  # a whole refused file stands for all of its items


Item = RawEvent | BadItem


@runtime_checkable
class Source(Protocol):
    """Anything that yields RawEvents (and BadItems) from one file, folder or account."""

    name: str

    def read(self) -> Iterator[RawEvent | BadItem]: ...


def bad(location: str, reason: str) -> BadItem:
    """Log and return a BadItem."""
    log.warning("bad_item", location=location, reason=reason)
    return BadItem(location=location, reason=reason)


@dataclass
class RefusalTally:
    """What one pass over a source yielded: whether the file was refused as a whole."""

    name: str
    events: int = 0
    bad: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    first: str = ""

    def count(self, item: Item) -> None:
        if isinstance(item, BadItem):
            self.bad += 1
            self.reasons[item.reason] += 1
            self.first = self.first or item.location
        else:
            self.events += 1

    @property
    def refused(self) -> bool:
        """No item could be read, and there were several: the file, not a line, is wrong."""
        return self.events == 0 and self.bad >= 2

    def summary(self) -> BadItem:
        """One BadItem for the whole file, its commonest reasons with their counts."""
        top = "; ".join(f"{reason} ({n}x)" for reason, n in self.reasons.most_common(3))
        more = len(self.reasons) - 3
        return BadItem(
            items=self.bad,
            location=Path(self.name).name,
            reason=f"file refused: none of its {self.bad} items could be read (first at "
            f"{self.first}): {top}" + (f"; and {more} other reasons" if more > 0 else ""),
        )


def refusing_whole_files(name: str, items: Iterable[Item], keep: int = 10_000) -> Iterator[Item]:
    """The items of a source, except that a file none of whose items could be read is reported
    once (:meth:`RefusalTally.summary`) instead of item by item.

    Bad items are held back until the first event shows the file is readable (then they pass
    through); past ``keep`` held items they pass through anyway (bounded memory), followed by
    the summary if no event ever came.
    """
    tally = RefusalTally(name)
    held: list[BadItem] | None = []
    for item in items:
        tally.count(item)
        if held is not None:
            if isinstance(item, BadItem):
                held.append(item)
                if len(held) <= keep:
                    continue
                yield from held
                held = None
                continue
            yield from held
            held = None
        yield item
    if tally.refused:
        log.warning("file_refused", source=name, items=tally.bad)
        yield tally.summary()
    elif held:
        yield from held


def stable_id(kind: str, *parts: str) -> str:
    """A deterministic id `kind:<hash of parts>`."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
    return f"{kind}:{digest[:32]}"


def resolve_tz(value: str | tzinfo | None) -> tzinfo:
    """A tzinfo from a zone name (default UTC)."""
    if value is None:
        return UTC
    if isinstance(value, tzinfo):
        return value
    if value.upper() in ("UTC", "Z", "GMT"):
        return UTC
    try:
        return ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConnectorError(f"unknown time zone {value!r}") from exc


def aware(value: datetime | date, default_tz: tzinfo) -> datetime:
    """A timezone-aware datetime: floating times and dates are placed in `default_tz`."""
    if not isinstance(value, datetime):
        value = datetime.combine(value, time(0, 0))
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        return value.replace(tzinfo=default_tz)
    return value


def json_problem(data: bytes, exc: Exception) -> str:
    """Why ``data`` is not a JSON value: bytes that are not UTF-8 are named as such, with the
    offset of the first bad byte (orjson would say "str is not valid UTF-8: surrogates not
    allowed"), and a lone surrogate escape as not Unicode."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"not valid UTF-8 (byte offset {bad.start})"
    if "surrogate" in str(exc):
        return f"invalid JSON: a lone UTF-16 surrogate escape is not Unicode text ({exc})"
    return f"invalid JSON: {exc}"


def clip_bytes(text: str, limit: int) -> str:
    """`text` cut to at most `limit` UTF-8 bytes, on a character boundary."""
    data = text.encode("utf-8", errors="replace")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore")


def _fit_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    def size(value: dict[str, Any]) -> int:
        return len(orjson.dumps(value, default=str))

    if size(attrs) <= MAX_ATTRS_BYTES:
        return attrs
    fitted: dict[str, Any] = {}
    for key, value in attrs.items():
        if isinstance(value, list) and len(value) > 20:
            value = value[:20]
        elif isinstance(value, str) and len(value) > 1024:
            value = clip_bytes(value, 1024)
        fitted[key] = value
    fitted["truncated"] = True
    # Still too big: drop the largest values until it fits.
    while size(fitted) > MAX_ATTRS_BYTES and len(fitted) > 1:
        largest = max(
            (k for k in fitted if k != "truncated"),
            key=lambda k: len(orjson.dumps(fitted[k], default=str)),
        )
        del fitted[largest]
    return fitted


def make_event(
    location: str,
    *,
    id: str,
    tenant: str,
    source: str,
    ts: datetime,
    title: str = "",
    body: str = "",
    participants: list[str] | None = None,
    attrs: dict[str, Any] | None = None,
) -> RawEvent | BadItem:
    """A RawEvent with over-long fields cut to the contract's bounds, or a BadItem."""
    people: list[str] = []
    for person in participants or []:
        person = person.strip()[:MAX_PARTICIPANT_CHARS]
        if person and person not in people:
            people.append(person)
    try:
        return RawEvent(
            id=id,
            tenant=tenant,
            source=source,
            ts=ts,
            title=clip_bytes(title.strip(), MAX_TITLE_BYTES),
            body=clip_bytes(body.strip(), MAX_BODY_BYTES),
            participants=people[:MAX_PARTICIPANTS],
            attrs=_fit_attrs(attrs or {}),
        )
    except ValidationError as exc:
        return bad(location, validation_reason(exc))


def validation_reason(exc: ValidationError) -> str:
    """A one-line summary of a pydantic error: 'field: message; ...'."""
    parts = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err.get("loc", ())) or "event"
        parts.append(f"{field}: {err.get('msg', 'invalid')}")
    return "; ".join(parts)


def participant(name: str | None, address: str | None) -> str:
    """'Name <addr>' or whichever of the two is present."""
    name = (name or "").strip().strip('"').strip()
    address = (address or "").strip()
    if address.lower().startswith("mailto:"):
        address = address[7:]
    address = address.lower()
    if name and address and name.lower() != address:
        return f"{name} <{address}>"
    return address or name
