"""Pick the source for a path (file or folder) from its name and content; `kind` overrides."""

from __future__ import annotations

import inspect
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import orjson
import structlog

from connectors.base import Source
from connectors.calendar import IcsSource
from connectors.chat import ChatJsonlSource, looks_like_chat
from connectors.email import EmlSource, MaildirSource, MboxSource
from connectors.errors import ConnectorError
from connectors.imap import ImapSource
from connectors.jsonl import JsonlSource
from connectors.slack import SlackSource
from connectors.whatsapp import WhatsAppSource, parse_header

log = structlog.get_logger(__name__)

SOURCES: dict[str, Callable[..., Source]] = {
    "jsonl": JsonlSource,
    "chat-jsonl": ChatJsonlSource,
    "calendar": IcsSource,
    "eml": EmlSource,
    "mbox": MboxSource,
    "maildir": MaildirSource,
    "slack": SlackSource,
    "whatsapp": WhatsAppSource,
}
ALIASES = {
    "ics": "calendar",
    "ical": "calendar",
    "events": "jsonl",
    "email": "eml",
    "chat": "chat-jsonl",
}
_HEADER_LINE = re.compile(rb"^[A-Za-z][A-Za-z0-9-]{1,60}:[ \t]")
_MAIL_HEADERS = (b"from:", b"to:", b"subject:", b"date:", b"message-id:", b"received:",
                 b"return-path:", b"mime-version:", b"delivered-to:")  # fmt: skip


def open_source(path: str | Path, tenant: str, kind: str | None = None, **options: Any) -> Source:
    """The source for `path` (detected, or `kind`); options a source does not take are ignored.

    Kinds: jsonl (RawEvents), chat-jsonl, calendar, eml, mbox, maildir, slack, whatsapp,
    imap (path `imap[s]://user@host[:port]/FOLDER`, options password, checkpoint_path).
    """
    text = str(path)
    if (kind or "").lower() == "imap" or text.startswith(("imap://", "imaps://")):
        return _imap(text, tenant, options)
    target = Path(path)
    if not target.exists():
        raise ConnectorError(f"{target}: no such file or folder")
    chosen = ALIASES.get(kind.lower(), kind.lower()) if kind else detect_kind(target)
    if chosen not in SOURCES:
        raise ConnectorError(
            f"unknown source kind {kind!r}; known: {', '.join(sorted(SOURCES))}, imap"
        )
    if chosen == "mbox" and target.is_dir():  # Apple Mail export: Name.mbox/mbox
        target = target / "mbox"
    if chosen == "whatsapp" and target.is_dir():  # unpacked iOS export: folder/_chat.txt
        target = target / "_chat.txt"
    factory = SOURCES[chosen]
    return factory(target, tenant, **_accepted(factory, options))


def detect_kind(path: Path) -> str:
    """The source kind of a file or folder; ConnectorError if it is not recognised."""
    kind = _detect_dir(path) if path.is_dir() else _detect_file(path)
    if kind is None:
        raise ConnectorError(
            f"{path}: cannot tell the source type (supported: .ics calendars, .eml/.emlx, mbox, "
            "Maildir, Slack export zip/folder, WhatsApp .txt, JSONL of events or chat); "
            "pass the kind explicitly"
        )
    log.debug("source_detected", path=str(path), kind=kind)
    return kind


def _detect_dir(path: Path) -> str | None:
    if all((path / sub).is_dir() for sub in ("cur", "new")):
        return "maildir"
    if (path / "users.json").is_file() or (path / "channels.json").is_file():
        return "slack"
    if (path / "mbox").is_file():
        return "mbox"
    if (path / "_chat.txt").is_file():
        return "whatsapp"
    if any(p.suffix.lower() in (".eml", ".emlx") for p in path.rglob("*")):
        return "eml"
    return None


def _detect_file(path: Path) -> str | None:
    suffix = path.suffix.lower()
    with path.open("rb") as fh:
        head = fh.read(64 * 1024)
    if suffix == ".zip" or head.startswith(b"PK\x03\x04"):
        return _detect_zip(path)
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if suffix in (".ics", ".ical", ".ifb") or stripped.upper().startswith(b"BEGIN:VCALENDAR"):
        return "calendar"
    if suffix in (".jsonl", ".ndjson", ".json") or stripped.startswith(b"{"):
        return _detect_jsonl(stripped)
    if suffix == ".emlx":
        return "eml"
    if stripped.startswith(b"From "):
        return "mbox"
    if suffix == ".eml" or _looks_like_mail(stripped):
        return "eml"
    if suffix == ".mbox":
        return "mbox"
    if _looks_like_whatsapp(head):
        return "whatsapp"
    return None


def _detect_zip(path: Path) -> str | None:
    try:
        with zipfile.ZipFile(path) as archive:
            names = [Path(n).name for n in archive.namelist()]
    except zipfile.BadZipFile:
        return None
    return "slack" if "users.json" in names or "channels.json" in names else None


def _detect_jsonl(head: bytes) -> str | None:
    for line in head.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(obj, dict):
            continue
        if "source" in obj and "ts" in obj and "id" in obj:
            return "jsonl"
        if looks_like_chat(obj):
            return "chat-jsonl"
    return None


def _looks_like_mail(head: bytes) -> bool:
    lines = head.split(b"\n", 40)[:40]
    headers = [ln for ln in lines if _HEADER_LINE.match(ln)]
    known = [ln for ln in headers if ln.lower().startswith(_MAIL_HEADERS)]
    return len(headers) >= 2 and len(known) >= 1 and bool(_HEADER_LINE.match(lines[0]))


def _looks_like_whatsapp(head: bytes) -> bool:
    lines = head.decode("utf-8", errors="replace").splitlines()[:20]
    found = sum(1 for ln in lines if parse_header(ln.lstrip("\u200e\u200f\ufeff")) is not None)
    return found >= 1 and found >= len([ln for ln in lines if ln.strip()]) // 3


def _accepted(factory: Callable[..., Any], options: dict[str, Any]) -> dict[str, Any]:
    params = inspect.signature(factory).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return options
    taken = {k: v for k, v in options.items() if k in params}
    ignored = sorted(set(options) - set(taken))
    if ignored:
        log.debug(
            "source_options_ignored", source=getattr(factory, "__name__", "?"), options=ignored
        )
    return taken


def _imap(url: str, tenant: str, options: dict[str, Any]) -> Source:
    parsed = urlparse(url)
    if parsed.scheme not in ("imap", "imaps") or not parsed.hostname:
        raise ConnectorError(f"not an IMAP url: {url!r} (imaps://user@host[:port]/FOLDER)")
    opts = dict(options)
    if parsed.username:
        opts.setdefault("user", unquote(parsed.username))
    if parsed.password:
        opts.setdefault("password", unquote(parsed.password))
    if "user" not in opts or "password" not in opts:
        raise ConnectorError("IMAP needs a user and a password (options user=, password=)")
    folder = unquote(parsed.path.lstrip("/")) or "INBOX"
    opts.setdefault("folder", folder)
    opts.setdefault("ssl", parsed.scheme == "imaps")
    opts.setdefault("port", parsed.port)
    return ImapSource(parsed.hostname, tenant, **_accepted(ImapSource, opts))
