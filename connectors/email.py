"""E-mail: .eml/.emlx files, mbox (Gmail, Thunderbird, Apple Mail) and Maildir."""

from __future__ import annotations

import hashlib
import mailbox
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from email.message import Message
from email.parser import BytesParser
from email.policy import compat32
from email.utils import getaddresses, parsedate_to_datetime
from pathlib import Path
from typing import Any

import structlog

from connectors.base import Item, aware, bad, make_event, participant, resolve_tz, stable_id
from connectors.mime import decode_header_value, extract_body, message_ids
from schemas.events import RawEvent

log = structlog.get_logger(__name__)

_HEADER_FIELDS = ("from", "to", "date", "subject", "message-id")
_FROM_LINE_DATE = re.compile(
    r"(?:\w{3},?\s+)?(\w{3})\s+(\d{1,2})\s+(\d{1,2}:\d{2}:\d{2})(?:\s+([+-]\d{4}))?\s+(\d{4})"
)
_MBOXRD_FROM = re.compile(rb"^>(>*From )", re.MULTILINE)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def parse_bytes(data: bytes) -> Message:
    """Parse raw message bytes (compat32 policy: tolerant and fast)."""
    return BytesParser(policy=compat32).parsebytes(data)


class EmailMapper:
    """Maps one parsed message to a RawEvent (source 'email')."""

    def __init__(self, tenant: str, default_tz: str | tzinfo = "UTC") -> None:
        self.tenant = tenant
        self.default_tz = resolve_tz(default_tz)

    def from_bytes(
        self,
        data: bytes,
        location: str,
        *,
        fallback_ts: datetime | None = None,
        extra: dict[str, Any] | None = None,
    ) -> Item:
        try:
            return self.to_event(parse_bytes(data), location, fallback_ts=fallback_ts, extra=extra)
        except Exception as exc:  # one odd message must not stop the import
            log.exception("email_mapping_failed", location=location)
            return bad(location, f"cannot read message: {type(exc).__name__}: {exc}")

    def to_event(
        self,
        msg: Message,
        location: str,
        *,
        fallback_ts: datetime | None = None,
        extra: dict[str, Any] | None = None,
    ) -> Item:
        present = {k.lower() for k in msg}
        if not present.intersection(_HEADER_FIELDS):
            return bad(location, "not an e-mail message: no From/To/Date/Subject/Message-ID header")
        ts = self._date(msg) or fallback_ts
        if ts is None:
            return bad(location, "no usable date (Date header missing or invalid, no fallback)")
        subject = decode_header_value(msg.get("Subject"))
        body = extract_body(msg)
        own = message_ids(msg.get("Message-ID"))
        parents = message_ids(msg.get("In-Reply-To"))
        refs = message_ids(msg.get("References"))
        senders = self._addresses(msg, "From")
        if own:
            message_id = own[0]
            event_id = stable_id("email", message_id)
        else:
            digest = hashlib.sha256(str(msg.get_payload()).encode("utf-8", "replace")).hexdigest()
            message_id = ""
            event_id = stable_id(
                "email", "no-message-id", ",".join(senders), ts.isoformat(), subject, digest
            )
        root = refs[0] if refs else (parents[0] if parents else message_id)
        attrs: dict[str, Any] = {
            "message_id": message_id or None,
            "thread_id": root or None,
            "thread_event_id": stable_id("email", root) if root else event_id,
            "from": senders[0] if senders else None,
        }
        if parents:
            attrs["in_reply_to"] = parents[0]
        if refs:
            attrs["references"] = refs[-10:]
        if body.attachments:
            attrs["attachments"] = body.attachments[:30]
        if body.from_html:
            attrs["from_html"] = True
        labels = decode_header_value(msg.get("X-Gmail-Labels"))
        if labels:
            attrs["labels"] = [x.strip() for x in labels.split(",") if x.strip()]
        if msg.get("X-GM-THRID"):
            attrs["gmail_thread_id"] = decode_header_value(msg.get("X-GM-THRID"))
        defects = sorted({type(d).__name__ for part in msg.walk() for d in part.defects})
        if defects:
            attrs["defects"] = defects
        attrs.update(extra or {})
        people = senders + self._addresses(msg, "To") + self._addresses(msg, "Cc")
        return make_event(
            location,
            id=event_id,
            tenant=self.tenant,
            source="email",
            ts=ts,
            title=subject,
            body=body.text,
            participants=people,
            attrs=attrs,
        )

    def _date(self, msg: Message) -> datetime | None:
        candidates = [msg.get("Date")]
        received = msg.get("Received")
        if received is not None:
            candidates.append(str(received).rpartition(";")[2])
        for value in candidates:
            text = decode_header_value(value)
            if not text:
                continue
            try:
                parsed = parsedate_to_datetime(text)
            except (TypeError, ValueError, IndexError):
                continue
            if parsed is not None:
                return aware(parsed, UTC)  # "-0000" (no zone) means UTC
        return None

    @staticmethod
    def _addresses(msg: Message, name: str) -> list[str]:
        values = [
            decode_header_value(v) if not isinstance(v, str) else v for v in msg.get_all(name, [])
        ]
        people = []
        for display, address in getaddresses(values):
            person = participant(decode_header_value(display), address)
            if person:
                people.append(person)
        return people


class _MailSource:
    kind = "email"

    def __init__(self, path: str | Path, tenant: str, *, default_tz: str | tzinfo = "UTC") -> None:
        self.path = Path(path)
        self.name = str(path)
        self.tenant = tenant
        self.mapper = EmailMapper(tenant, default_tz)

    def _dedup(self, items: Iterator[Item]) -> Iterator[Item]:
        seen: set[str] = set()
        for item in items:
            if isinstance(item, RawEvent):
                if item.id in seen:
                    log.debug("email_duplicate", id=item.id)
                    continue
                seen.add(item.id)
            yield item

    def read(self) -> Iterator[Item]:
        return self._dedup(self._items())

    def _items(self) -> Iterator[Item]:
        raise NotImplementedError


class EmlSource(_MailSource):
    """One .eml (or Apple Mail .emlx) file, or a folder of them (recursive, sorted)."""

    def _items(self) -> Iterator[Item]:
        if self.path.is_dir():
            files = sorted(p for p in self.path.rglob("*") if p.suffix.lower() in (".eml", ".emlx"))
        else:
            files = [self.path]
        for file in files:
            location = str(file.relative_to(self.path)) if file != self.path else file.name
            data = file.read_bytes()
            if file.suffix.lower() == ".emlx":
                data = _emlx_payload(data)
            mtime = datetime.fromtimestamp(file.stat().st_mtime, UTC)
            yield self.mapper.from_bytes(data, location, fallback_ts=mtime)


class MboxSource(_MailSource):
    """An mbox file; the From_ line's date is the fallback when Date is missing."""

    def _items(self) -> Iterator[Item]:
        box = mailbox.mbox(self.path, create=False)
        try:
            for n, key in enumerate(box.iterkeys(), 1):
                raw = box.get_bytes(key, from_=True)
                from_line, _, data = raw.partition(b"\n")
                data = _MBOXRD_FROM.sub(rb"\1", data)
                yield self.mapper.from_bytes(
                    data, f"{self.path.name}:message {n}", fallback_ts=from_line_date(from_line)
                )
        finally:
            box.close()


class MaildirSource(_MailSource):
    """A Maildir (cur/new/tmp) and its Maildir++ subfolders; attrs folder names the subfolder."""

    def _items(self) -> Iterator[Item]:
        yield from self._folder(mailbox.Maildir(self.path, factory=None, create=False), "")

    def _folder(self, box: mailbox.Maildir, folder: str) -> Iterator[Item]:
        for key in sorted(box.iterkeys()):
            stamp = key.split(".", 1)[0]
            fallback = datetime.fromtimestamp(int(stamp), UTC) if stamp.isdigit() else None
            extra = {"folder": folder} if folder else None
            location = f"{self.path.name}:{folder + '/' if folder else ''}{key}"
            yield self.mapper.from_bytes(
                box.get_bytes(key), location, fallback_ts=fallback, extra=extra
            )
        for sub in sorted(box.list_folders()):
            yield from self._folder(box.get_folder(sub), f"{folder}/{sub}" if folder else sub)


def from_line_date(line: bytes) -> datetime | None:
    """The date of an mbox 'From sender date' line (asctime, optionally with a zone)."""
    match = _FROM_LINE_DATE.search(line.decode("ascii", errors="replace"))
    if not match:
        return None
    month, day, clock, zone, year = match.groups()
    zone = zone or "+0000"
    offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[3:5]))
    try:
        hour, minute, second = (int(x) for x in clock.split(":"))
        return datetime(
            int(year),
            _MONTHS.index(month.lower()) + 1,
            int(day),
            hour,
            minute,
            second,
            tzinfo=timezone(-offset if zone[0] == "-" else offset),
        )
    except ValueError:
        return None


def _emlx_payload(data: bytes) -> bytes:
    """The RFC 822 message inside an Apple Mail .emlx file (length line, message, plist)."""
    first, _, rest = data.partition(b"\n")
    if first.strip().isdigit():
        return rest[: int(first.strip())]
    return data
