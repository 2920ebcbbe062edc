"""The occasion of a goal: what its deadline is the date of, in the evidence's own words.

A goal is often set against an occasion ("Renew the passport before the Thailand flight",
"Stabilise the release before the Kessler Logistik demo"). The evidence that names the
deadline's day usually says what happens that day: the date hangs on a noun ("the flight on
18 Dec", "Registration confirmed - Spreeufer 10k, Sun 29 Nov", "the PUC emergency meeting on
27 July"). That noun's phrase is the occasion. A date hanging on a verb ("we fly on 18 Dec",
"send it by Friday") names no occasion, nor does a phrase that is a date, a time, an amount or
a person, nor a common noun alone ("the appointment" of which day?): an occasion is named.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from schemas.graph import Node
from topologies.lexicon import STOPWORDS
from topologies.text import find_dates

MAX_OCCASION_WORDS = 5
MIN_AGREEING = 2  # events that must give the same occasion for a day
MAX_HOPS = 3  # dependency steps from the date up to the noun it belongs to
_ATTACH = frozenset({"prep", "pobj", "appos", "npadvmod", "nmod", "compound", "dep", "punct"})
_MODIFIER_POS = frozenset({"NOUN", "PROPN", "ADJ", "NUM"})
_MODIFIER_DEPS = frozenset({"compound", "amod", "nmod", "nummod"})
_NOT_OCCASION = frozenset({"TIME", "MONEY", "PERSON", "PERCENT"})


def local_day(deadline: datetime, node: Node) -> date:
    """The deadline's day in the event's own time zone (an event that has a time)."""
    if node.ts is not None and node.ts.tzinfo is not None:
        return deadline.astimezone(node.ts.tzinfo).date()
    return deadline.date()


def occasion(node: Node, deadline: datetime, parse: Any, names: frozenset[str]) -> str | None:
    """The occasion the event names for the deadline's day ("Thailand flight"), None when
    it names none. ``parse`` is a spaCy pipeline call on a text; ``names`` are lower-cased
    words of people (never an occasion)."""
    if node.ts is None:
        return None
    text = f"{node.title}\n{node.text}"[:600] if node.text else node.title
    day = local_day(deadline, node)
    spans = [m.phrase for m in find_dates(text, node.ts) if m.when.date() == day]
    if not spans:
        return None
    doc = parse(text)
    for phrase in spans:
        start = text.find(phrase)
        span = doc.char_span(start, start + len(phrase), alignment_mode="expand")
        if span is None:
            continue
        found = _noun_of(span.root, span, names)
        if found:
            return found
    return None


def _noun_of(token: Any, span: Any, names: frozenset[str]) -> str | None:
    """Walk up from the date to the first noun outside it; its noun chunk is the occasion."""
    current = token
    for _ in range(MAX_HOPS):
        if current.dep_ not in _ATTACH or current.head is current:
            return None
        current = current.head
        if current.i >= span.start and current.i < span.end:
            continue
        if current.sent.start != span.sent.start:  # a parse across two sentences
            return None
        if current.pos_ in ("NOUN", "PROPN"):
            return _chunk_text(current, names)
        if current.pos_ == "AUX" and current.lemma_ == "be":  # "the demo is on 28 April"
            subject = next((c for c in current.children if c.dep_ == "nsubj"), None)
            return _chunk_text(subject, names) if subject is not None else None
        if current.pos_ not in ("ADP", "PUNCT"):
            return None
    return None


def _chunk_text(noun: Any, names: frozenset[str]) -> str | None:
    words: list[Any] = [noun]  # the noun and the words that modify it right before it
    index = noun.i - 1
    while index >= 0:
        token = noun.doc[index]
        if token.pos_ not in _MODIFIER_POS or token.dep_ not in _MODIFIER_DEPS:
            break
        if token.ent_type_ == "DATE" or token.is_punct:
            break
        words.insert(0, token)
        index -= 1
    if len(words) > MAX_OCCASION_WORDS:
        return None
    if noun.ent_type_ in _NOT_OCCASION or noun.like_num or noun.pos_ not in ("NOUN", "PROPN"):
        return None
    if noun.ent_type_ == "DATE" and len(words) == 1:
        return None
    if any(t.lower_ in names for t in words) or noun.lower_ in STOPWORDS:
        return None
    if not any(t.pos_ == "PROPN" for t in words):  # a named occasion, not "the appointment"
        return None
    if all(t.is_stop for t in words):
        return None
    return " ".join(t.text for t in words)


def agreed_occasion(
    nodes: Sequence[Node], deadline: datetime, parse: Any, names: frozenset[str]
) -> str | None:
    """The occasion that at least ``MIN_AGREEING`` of the events (with different titles: a
    forwarded copy is no second voice) give for the deadline's day; the most given first."""
    votes: dict[str, set[str]] = {}
    forms: dict[str, str] = {}
    for node in nodes:
        found = occasion(node, deadline, parse, names)
        if found:
            key = found.lower()
            votes.setdefault(key, set()).add(" ".join(node.title.lower().split()))
            forms.setdefault(key, found)
    agreed = [k for k, titles in votes.items() if len(titles) >= MIN_AGREEING]
    if not agreed:
        return None
    return forms[min(agreed, key=lambda k: (-len(votes[k]), k))]
