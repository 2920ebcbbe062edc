"""MIME helpers: header decoding, charset fallbacks, body text and attachment listing."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from email.header import Header, decode_header
from email.message import Message
from typing import Any

from connectors.text import html_to_text, tidy, trim_reply, unflow

# Charset labels that mail clients write but Python does not know (None: guess).
_CHARSET_ALIASES: dict[str, str | None] = {
    "unknown-8bit": None,
    "x-unknown": None,
    "unknown": None,
    "8bit": None,
    "iso-8859-8-i": "iso-8859-8",
    "iso-8859-6-i": "iso-8859-6",
    "x-mac-roman": "mac_roman",
    "macintosh": "mac_roman",
    "gb2312": "gb18030",
    "x-gbk": "gb18030",
    "ansi_x3.4-1968": "ascii",
    "us-ascii": "utf-8",  # 8-bit bytes under a us-ascii label are nearly always utf-8
    "ascii": "utf-8",
}
_MSGID = re.compile(r"<([^<>\s]+)>")


def decode_bytes(data: bytes, charset: str | None = None) -> str:
    """Decode with the declared charset, then utf-8, then cp1252, then with replacement."""
    label = (charset or "").strip().strip('"').lower() or None
    declared = _CHARSET_ALIASES.get(label, label) if label else None
    for candidate in (declared, "utf-8", "cp1252"):
        if not candidate:
            continue
        try:
            return data.decode(candidate)
        except (LookupError, UnicodeDecodeError):
            continue
    try:
        return data.decode(declared or "utf-8", errors="replace")
    except LookupError:
        return data.decode("utf-8", errors="replace")


def decode_header_value(value: Any) -> str:
    """A header as text: RFC 2047 encoded words and raw 8-bit bytes decoded, space collapsed."""
    if value is None:
        return ""
    try:
        chunks = decode_header(value if isinstance(value, Header | str) else str(value))
    except Exception:  # malformed encoded words
        return re.sub(r"\s+", " ", str(value)).strip()
    out = []
    for chunk, charset in chunks:
        if isinstance(chunk, bytes):
            out.append(decode_bytes(chunk, charset))
        else:
            out.append(chunk)
    text = "".join(out)
    # Surrogate-escaped bytes (8-bit headers parsed as str) become U+FFFD.
    text = text.encode("utf-8", errors="replace").decode("utf-8")
    return re.sub(r"\s+", " ", text).strip()


def message_ids(value: Any) -> list[str]:
    """Message ids of a Message-ID / In-Reply-To / References header, without brackets."""
    text = decode_header_value(value)
    found = _MSGID.findall(text)
    if not found and text and " " not in text:
        found = [text.strip("<>")]
    return found


@dataclass
class Body:
    text: str = ""
    from_html: bool = False
    attachments: list[dict[str, Any]] = field(default_factory=list)


def extract_body(msg: Message) -> Body:
    """Readable body (plain text preferred over HTML), replies/signature trimmed, attachments."""
    body = Body()
    texts = _collect(msg, body)
    body.from_html = bool(texts) and all(kind == "html" for kind, _ in texts)
    body.text = trim_reply("\n\n".join(text for _, text in texts if text.strip()))
    return body


def _collect(part: Message, body: Body) -> list[tuple[str, str]]:
    """(kind, text) pieces of `part`, kind 'plain' or 'html'; attachments go to `body`."""
    ctype = part.get_content_type()
    disposition = (part.get_content_disposition() or "").lower()
    filename = _filename(part)
    if ctype == "message/rfc822" or disposition == "attachment":
        _attach(part, body, filename)
        return []
    if part.is_multipart():
        children = [c for c in part.get_payload() if isinstance(c, Message)]
        if ctype == "multipart/alternative":
            options = [_collect(child, body) for child in children]
            options = [o for o in options if any(t.strip() for _, t in o)]
            plain = [o for o in options if all(kind == "plain" for kind, _ in o)]
            return plain[0] if plain else (options[-1] if options else [])
        pieces: list[tuple[str, str]] = []
        for child in children:
            pieces.extend(_collect(child, body))
        return pieces
    maintype = part.get_content_maintype()
    if maintype == "multipart":  # no boundary found: the payload is the raw text
        ctype, maintype = "text/plain", "text"
    if maintype != "text" or (filename and ctype not in ("text/plain", "text/html")):
        _attach(part, body, filename)
        return []
    raw = part.get_payload(decode=True)
    data = raw if isinstance(raw, bytes) else str(part.get_payload()).encode("utf-8", "replace")
    text = decode_bytes(data, part.get_content_charset()).replace("\r\n", "\n")
    if ctype == "text/html":
        return [("html", html_to_text(text, skip_quotes=True))]
    if ctype != "text/plain" and filename:
        _attach(part, body, filename)
        return []
    if "flowed" in str(part.get("Content-Type", "")).lower():
        text = unflow(text, delsp=str(part.get_param("delsp", "")).lower() == "yes")
    return [("plain", tidy(text))]


def _filename(part: Message) -> str | None:
    headers = f"{part.get('Content-Disposition', '')} {part.get('Content-Type', '')}"
    if "name" not in headers.lower():
        return None  # cheap exit: most text parts carry no file name
    name = part.get_filename() or part.get_param("name")
    if not name:
        return None
    if isinstance(name, tuple):  # RFC 2231 triple
        name = str(name[2])
    return decode_header_value(name) or None


def _attach(part: Message, body: Body, filename: str | None) -> None:
    ctype = part.get_content_type()
    if ctype == "message/rfc822" and not filename:
        inner = part.get_payload()
        if isinstance(inner, list) and inner and isinstance(inner[0], Message):
            filename = decode_header_value(inner[0].get("Subject")) or "forwarded message"
    payload = part.get_payload(decode=True)
    size = len(payload) if isinstance(payload, bytes) else None
    body.attachments.append({"filename": filename or "", "content_type": ctype, "size": size})
