"""Readable text from HTML, and e-mail/chat text without quoted replies and signatures."""

from __future__ import annotations

import re
from html.parser import HTMLParser

_SKIP_TAGS = frozenset({"script", "style", "head", "title", "template", "noscript"})
_VOID_TAGS = frozenset(
    {"br", "img", "hr", "meta", "link", "input", "area", "base", "col", "wbr", "source"}
)
_BLOCK_TAGS = frozenset(
    {
        "p", "div", "section", "article", "header", "footer", "ul", "ol", "li", "table",
        "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "hr", "br", "dl",
        "dt", "dd", "address", "center", "form", "fieldset", "figure",
    }
)  # fmt: skip
_ITEM_TAGS = frozenset({"li", "tr", "dt", "dd"})  # one line each, no blank line between
# Containers that mail clients use for the quoted message of a reply.
_QUOTE_CLASSES = ("gmail_quote", "moz-cite-prefix", "yahoo_quoted", "protonmail_quote")
_QUOTE_IDS = ("divrplyfwdmsg", "appendonsend", "mail-editor-reference-message-container")


class _TextExtractor(HTMLParser):
    def __init__(self, *, keep_links: bool, skip_quotes: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.keep_links = keep_links
        self.skip_quotes = skip_quotes
        self.parts: list[str] = []
        self.stack: list[tuple[str, bool]] = []  # (tag, hides its content)
        self.pre = 0
        self.href: str | None = None
        self.link_text: list[str] = []

    @property
    def hidden(self) -> bool:
        return any(hide for _, hide in self.stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: (v or "") for k, v in attrs}
        if tag in _VOID_TAGS:
            if tag in ("br", "hr") and not self.hidden:
                self.parts.append("\n")
            return
        hide = tag in _SKIP_TAGS
        if self.skip_quotes and not hide:
            classes = values.get("class", "").lower()
            ident = values.get("id", "").lower()
            hide = (
                tag == "blockquote"
                or any(c in classes for c in _QUOTE_CLASSES)
                or any(ident.startswith(i) for i in _QUOTE_IDS)
            )
        self.stack.append((tag, hide))
        if self.hidden:
            return
        if tag == "pre":
            self.pre += 1
        if tag in _BLOCK_TAGS:
            self.parts.append("\n")
        if tag == "li":
            self.parts.append("- ")
        elif tag in ("td", "th"):
            self.parts.append(" ")
        elif tag == "a":
            self.href = values.get("href") or None
            self.link_text = []

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID_TAGS or not any(t == tag for t, _ in self.stack):
            return
        was_hidden = self.hidden
        while self.stack:
            open_tag, _ = self.stack.pop()
            if open_tag == "pre":
                self.pre = max(0, self.pre - 1)
            if open_tag == tag:
                break
        if was_hidden:
            return
        if tag == "a" and self.href is not None:
            text = "".join(self.link_text).strip()
            href = self.href
            if href.startswith(("http://", "https://")) and (self.keep_links or not text):
                if text and text != href:
                    self.parts.append(f" <{href}>")
                elif not text:
                    self.parts.append(href)
            self.href = None
        if tag in _BLOCK_TAGS and tag not in _ITEM_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.hidden:
            return
        if not self.pre:
            data = re.sub(r"\s+", " ", data)
        self.parts.append(data)
        if self.href is not None:
            self.link_text.append(data)


def html_to_text(html: str, *, keep_links: bool = False, skip_quotes: bool = False) -> str:
    """Readable plain text from HTML (blocks become lines; scripts and styles dropped)."""
    parser = _TextExtractor(keep_links=keep_links, skip_quotes=skip_quotes)
    parser.feed(html)
    parser.close()
    return tidy("".join(parser.parts))


def looks_like_html(text: str) -> bool:
    return bool(re.search(r"<(br|p|div|a|b|i|span|html|body|ul|li|table)\b[^>]*>", text, re.I))


def tidy(text: str) -> str:
    """Strip trailing spaces per line and collapse runs of blank lines."""
    lines = [line.strip() if line.strip() else "" for line in text.split("\n")]
    text = "\n".join(lines)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()


def unflow(text: str, *, delsp: bool = False) -> str:
    """Join the soft line breaks of format=flowed text (RFC 3676)."""
    out: list[str] = []
    buffer = ""
    for line in text.split("\n"):
        if line != "-- " and line.endswith(" ") and not line.startswith(">"):
            buffer += line[:-1] if delsp else line
            continue
        out.append(buffer + line)
        buffer = ""
    if buffer:
        out.append(buffer)
    return "\n".join(out)


_ATTRIBUTION = re.compile(
    r"^(on\b.{0,200}\bwrote:?"  # Gmail, Apple Mail, Thunderbird
    r"|le\b.{0,200}\ba écrit\s?:"
    r"|am\b.{0,200}\bschrieb.{0,120}:"
    r"|el\b.{0,200}\bescribió:"
    r"|.{0,120}<[^<>\s]+@[^<>\s]+>\s+wrote:)$",
    re.IGNORECASE,
)
_FORWARD_HEADER = re.compile(
    r"^(-{3,}\s*(original message|ursprüngliche nachricht|message d'origine)\s*-{3,}"
    r"|_{20,}|-{5,}\s*forwarded message\s*-{5,})$",
    re.IGNORECASE,
)
_OUTLOOK_FIELDS = re.compile(r"^(from|von|de):\s", re.IGNORECASE)
_WROTE = ("wrote:", "a écrit :", "a écrit:", "schrieb:", "escribió:")
_SENT_FROM = re.compile(
    r"^(sent from my \w+|sent from mail for windows.*|get outlook for \w+.*"
    r"|von meinem \w+ gesendet)$",
    re.IGNORECASE,
)


def trim_reply(text: str) -> str:
    """Text without quoted lines ('>'), 'On ... wrote:' lines, quoted originals and signature."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kept: list[str] = []
    wrapped_attribution = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if wrapped_attribution:
            wrapped_attribution = False
            continue
        if stripped == "--" and line.rstrip("\n") in ("--", "-- "):
            break  # signature delimiter
        if _FORWARD_HEADER.match(stripped):
            # Outlook-style original message: everything from here on is the quoted mail.
            following = [x.strip() for x in lines[i + 1 : i + 4] if x.strip()]
            if stripped.startswith("_") and not (following and _OUTLOOK_FIELDS.match(following[0])):
                kept.append(line)
                continue
            break
        if stripped.startswith(">") or _ATTRIBUTION.match(stripped):
            continue
        # An attribution wrapped over two lines: "On Mon, 8 Jan 2024 ... Bob <b@x>" / "wrote:"
        nxt = lines[i + 1].strip().lower() if i + 1 < len(lines) else ""
        if nxt in _WROTE and stripped.lower().startswith(("on ", "le ", "am ", "el ")):
            wrapped_attribution = True
            continue
        kept.append(line)
    while kept and (not kept[-1].strip() or _SENT_FROM.match(kept[-1].strip())):
        kept.pop()
    return tidy("\n".join(kept))
