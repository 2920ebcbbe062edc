"""What other nodes' texts say of their member events: a concept's summary line, and the short
quote of an event that plans' reasons give.

A concept's text reads "Recurring: <line>; <line>; ..." (``concept_text``), one line per
distinct member, newest first. A person reads it beside the concept's name in query answers
and in the explorer, so a line says what its member is about:

- a chat message's title is its chat (a person or a channel), the same for every message of
  it, so its line is the chat and the opening words of what was said ("Jonas Weber: Flights
  to BKK on 18 Dec went up again…");
- a mail, meeting or note is said by its title ("Go/No-Go for Flux Tariffs: Thu 19 Nov");
- a line that several members would write (a newsletter resent with its subject, a chat
  message said twice) is written once, with their count ("... (×2)").

The text is written when the concept forms (``HeuristicPlanner._cluster``, a split's new
concept) and when a split or a merge renames it from its members (``Boundaries``: they re-embed
it anyway), not as members join. The concept's vector encodes its title and text, and that
vector is what naming compares a label with the neighbouring concepts by, what completion links
neighbours by and what compression merges near-duplicates by: a text that followed its members
would move it. Rewritten at each naming (4, 8, 16, ... members) on the structural benchmark,
it renamed a sample concept ("Christmas market" -> "Flea market") and replaced an intent of a
dev scenario; written only as the concept forms, the sample's concepts, names and intents
stay those of the titles-only text and the dev scenarios' intents too. A join also costs no
embedding.

A deletion scrubs the lines of the deleted events from the texts that quote them
(``topologies.privacy.quotes_of`` asks ``member_line``), so what a deleted message said does
not outlive it in a concept's summary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from schemas.graph import Node

PREFIX = "Recurring: "
SUMMARY_LINES = 4  # distinct member lines in a concept's text
LINE_SIZE = 72  # characters of one member line
CHAT_SIZE = 32  # characters of a chat's name before what was said
MAX_TEXT = 2000
ELLIPSIS = "…"


def clip(text: str, size: int) -> str:
    """``text`` on one line, at most ``size`` characters: cut at the last word that fits
    (within a word only when one word fills most of the room) and marked with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) <= size:
        return flat
    room = flat[: size - 1]
    space = room.rfind(" ")
    if space >= size // 2:
        room = room[:space]
    return room.rstrip(" .,;:-–") + ELLIPSIS


def short(node: Node, size: int = 60) -> str:
    """The node's title (its text when it has none), clipped: how reasons quote a node."""
    return clip(node.title or node.text, size)


def member_line(node: Node) -> str:
    """What a concept's text says of one member event: a chat message by its chat and the
    opening words of what was said, any other event by its title."""
    said = " ".join(node.text.split())
    if node.source != "chat" or not said:
        return short(node, LINE_SIZE)
    if not node.title.strip():
        return clip(said, LINE_SIZE)
    chat = clip(node.title, CHAT_SIZE)
    return f"{chat}: {clip(said, max(LINE_SIZE - len(chat) - 2, CHAT_SIZE))}"


def legacy_line(node: Node) -> str:
    """The line a concept's text wrote of the event before member lines (stores folded before
    2026-12-05): its title, or its text without one, cut at 59 characters with an ellipsis
    whatever the words. A deletion looks for it too."""
    flat = (node.title or node.text).replace("\n", " ").strip()
    return flat if len(flat) <= 60 else flat[:59] + ELLIPSIS


def concept_text(members: Iterable[Node]) -> str:
    """A concept's text from its member events, the newest first: each distinct line once,
    with the number of members that write it when more than one, at most ``SUMMARY_LINES``."""
    newest = sorted(members, key=lambda n: (n.ts or n.created_at, n.id), reverse=True)
    counts = Counter(member_line(node) for node in newest)
    lines = [
        line if count == 1 else f"{line} (×{count})"
        for line, count in list(counts.items())[:SUMMARY_LINES]
    ]
    return f"{PREFIX}{'; '.join(lines)}"[:MAX_TEXT]
