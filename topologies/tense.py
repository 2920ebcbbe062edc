"""Whether a date's own clause speaks of what already happened, read from its verbs.

The date reader (:func:`topologies.text.find_dates`) resolves a date without a year, or a
weekday, to the coming one: what a person writes about a day ahead is a plan or a deadline.
Three readings are in the past although the words name no year: a past-tense verb directly
before the date ("we met on 20 Nov", "I started Nov 20"), a date that opens the clause of a
past-tense verb ("On Friday, I got great news") and a weekday that owns the thing a
past-tense clause tells of ("Friday's demo went well"). They are read from spaCy's tags and
dependencies (the naming layer's parser, its cache shared), only for dates that would
otherwise be read ahead.

A verb that changes or sets a plan's day says nothing of the day itself having passed
("Friday's standup moved to Thursday", "booked on 20 Nov", "the review was cancelled"),
nor does one that reports what was said ("the post office lady said Thursday"): such verbs
never make a date past.
"""

from __future__ import annotations

import re
from typing import Any

from topologies.lexicon import NOT_VERBS, REPORTING_VERBS, SCHEDULING_VERBS

# the sentence (or line) a date is read in: a verb of another sentence is not its verb
_CLAUSE_END = re.compile(r"[.!?;\n]")
_WORD_BEFORE = re.compile(r"([^\W\d_][\w'’]*)\s+(?:on\s+)?$")
_WINDOW = 40  # characters before a date searched for its verb


def past_verb_before(text: str, start: int) -> bool:
    """Whether the word directly before the date at ``start`` (an "on" between them aside)
    is a verb in the past tense that is not a plan's ("we met on 20 Nov", "the party was on
    Friday"). Words that cannot be verbs ("by", "for", "the") are not parsed."""
    window = max(0, start - _WINDOW)
    before = _WORD_BEFORE.search(text, window, start)
    if before is None:
        return False
    word = before.group(1).lower()
    if word in NOT_VERBS:
        return False
    doc, offset = _clause_doc(text, start)
    token = _token_ending_at(doc, before.end(1) - offset)
    return token is not None and _past_tense(token)


def fronted_on_past_verb(text: str, start: int, end: int) -> bool:
    """Whether the date at ``start``:``end`` opens the clause of a verb in the past tense it
    is the time of ("On Friday, I got great news", "Friday I went to the castle"): said
    before its verb, it tells when that happened. A date after its verb is not read here ("I
    got a slot on 17 Nov": the slot's day, ahead)."""
    doc, offset = _clause_doc(text, start)
    date = next((t for t in doc if t.idx == start - offset), None)
    while date is not None and start <= date.head.idx + offset < end and date.head.i != date.i:
        date = date.head  # "17" of "17 Nov" -> "Nov"
    if date is None:
        return False
    verb = date.head.head if date.dep_ == "pobj" and date.head.dep_ == "prep" else date.head
    if date.dep_ not in ("pobj", "npadvmod") or verb.pos_ not in ("VERB", "AUX"):
        return False
    return verb.i > date.i and _past_tense(verb)


def possessive_in_past_clause(text: str, start: int) -> bool:
    """Whether the weekday at ``start`` owns ("Friday's demo") the subject or object of a
    clause told in the past tense ("Friday's demo went well", "Thursday's call was great"),
    not one that moves or sets its day ("Friday's standup moved to Thursday")."""
    doc, offset = _clause_doc(text, start)
    day = next((t for t in doc if t.idx == start - offset), None)
    if day is None or day.dep_ != "poss":
        return False
    verb = _governing_verb(day.head)
    return verb is not None and _past_tense(verb)


def _clause_doc(text: str, start: int) -> tuple[Any, int]:
    """The parsed sentence around ``start`` and its offset in ``text``."""
    from topologies.naming.phrases import shared_parser  # the naming layer reads text too

    ends = [m.end() for m in _CLAUSE_END.finditer(text, 0, start)]
    first = ends[-1] if ends else 0
    after = _CLAUSE_END.search(text, start)
    last = after.start() if after is not None else len(text)
    return shared_parser().parse(text[first:last]), first


def _token_ending_at(doc: Any, end: int) -> Any | None:
    return next((t for t in doc if t.idx + len(t.text) == end), None)


def _governing_verb(token: Any) -> Any | None:
    """The verb whose clause the token is part of: the nearest verb among its heads."""
    while True:
        if token.pos_ in ("VERB", "AUX"):
            return token
        if token.head.i == token.i:  # the root: spaCy makes a new Token at each access
            return None
        token = token.head


def _past_tense(verb: Any) -> bool:
    """A finite verb in the past tense ("went", "was"), or a participle with a past
    auxiliary ("was cemented", "got fixed"); not one that sets or moves a plan, nor one that
    reports what was said ("she said Thursday": the day said is ahead)."""
    if verb.lemma_.lower() in SCHEDULING_VERBS | REPORTING_VERBS:
        return False
    if verb.tag_ == "VBD":
        return True
    return verb.tag_ == "VBN" and any(
        child.dep_ in ("aux", "auxpass") and child.tag_ == "VBD" for child in verb.children
    )
