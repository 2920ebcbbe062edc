"""Is the model's concept label a theme and not a copy, its intent title a goal?

:func:`copy_problem` catches what a grammar check does not see: a label copied from an event's
title or the prompt's example, an identifier, a label with no word of its event. The planner
applies it before the engine's naming rules (``topologies.naming.Namer``: noun phrases and
actions). :func:`label_problem` and :func:`title_problem` are small stand-ins for those rules
when a planner is built without a Namer; :func:`heuristic_label` then names a concept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from topologies.lexicon import CALENDAR_WORDS, DAY_WORDS, STOPWORDS
from topologies.text import is_content_word, label_from_texts, tokens

MAX_LABEL_WORDS = 5
MAX_LABEL_CHARS = 60
MAX_TITLE_WORDS = 14
MAX_TITLE_CHARS = 120
_CLAUSE = re.compile(r"[.;!?:]\s|[.;!?]$|\n")
_IDENTIFIER = re.compile(r"\w_\w|[/\\@#=(){}\[\]]|\w\.\w")
_NUMBERISH = re.compile(r"^[\d:./,\-]+(?:am|pm|h|st|nd|rd|th)?$", re.IGNORECASE)
_CALENDAR = CALENDAR_WORDS | DAY_WORDS


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def _placeholder(text: str) -> bool:
    return text.startswith("<") or text.endswith(">")


def name_words(participants: Iterable[str]) -> frozenset[str]:
    """Lower-cased words of people's names and addresses ("Dan Ortiz <dan@x.org>")."""
    words: set[str] = set()
    for person in participants:
        for word in re.split(r"[^\w]+", person.split("@")[0]):
            if len(word) > 1 and word.lower() not in ("me", "the", "and"):
                words.add(word.lower())
    return frozenset(words)


def word_stem(word: str) -> str:
    """A crude stem that forgives plurals and endings (the first five letters)."""
    word = word.lower()
    return word[:5] if len(word) > 5 else word.rstrip("s")


def content_stems(text: str) -> frozenset[str]:
    """The stems of the text's content words."""
    return frozenset(word_stem(w) for w in tokens(text) if is_content_word(w))


def shares_a_word(label: str, text: str) -> bool:
    """Does the label use a content word of the text (forgiving plurals and endings)?"""
    return bool(content_stems(label) & content_stems(text))


def adds_a_detail(label: str, rival: str, member_texts: Sequence[str]) -> bool:
    """Whether ``label`` is ``rival`` narrowed to a detail not every member has: every word
    of the rival and more, the more missing from at least one member ("System design
    interview" for "Interview" when the debrief of the same folder is about no system
    design). A folder's name holds for everything in it: the model sees one event and names
    the folder for it; the rules' label names them all."""
    words, rival_words = content_stems(label), content_stems(rival)
    extra = words - rival_words
    if not rival_words or not extra or not rival_words <= words:
        return False
    saying = sum(1 for text in member_texts if extra <= content_stems(text))
    return saying < len(member_texts)


def _size_problem(text: str, chars: int, words: int, what: str) -> str | None:
    if not text:
        return "empty"
    if _placeholder(text):
        return "a placeholder of the example"
    if len(text) > chars or len(text.split()) > words:
        return f"longer than {what}"
    return None


def copy_problem(label: str, titles: Iterable[str] = (), source: str = "") -> str | None:
    """Why ``label`` is a copy rather than a theme (None when it is not): a placeholder of the
    prompt's example, an identifier, an event's title, or (``source``: the text of a new
    concept's event) no word of that text. The engine's naming rules check the grammar."""
    text = label.strip()
    if _placeholder(text):
        return "a placeholder of the example"
    if _IDENTIFIER.search(text):
        return "an identifier, not a theme"
    if any(title and _normal(text) == _normal(title) for title in titles):
        return "an event's title, not a theme"
    if source and not shares_a_word(text, source):
        return "no word of the event"
    return None


def label_problem(
    label: str,
    titles: Iterable[str] = (),
    names: frozenset[str] = frozenset(),
    source: str = "",
) -> str | None:
    """Why ``label`` is not a concept label (a short noun phrase), None when it is one.
    ``titles``: event titles it must not copy (the event's, the past events shown);
    ``names``: lower-cased words of people's names; ``source``: the text the theme comes from
    (a new concept's event): the label must use one of its words."""
    text = label.strip()
    problem = _size_problem(text, MAX_LABEL_CHARS, MAX_LABEL_WORDS, "a short noun phrase")
    if problem is not None:
        return problem
    if _CLAUSE.search(text):
        return "a sentence, not a noun phrase"
    words = [w.lower() for w in tokens(text)]
    if not words or all(w in STOPWORDS for w in words):
        return "no topic word"
    if all(_NUMBERISH.match(w) or w in _CALENDAR for w in words):
        return "a date or a number"
    if names and all(w in names or w in STOPWORDS for w in words):
        return "a person's name"
    return copy_problem(text, titles, source)


def title_problem(title: str) -> str | None:
    """Why ``title`` is not an intent title (a goal in a few words), None when it is one."""
    text = title.strip()
    problem = _size_problem(text, MAX_TITLE_CHARS, MAX_TITLE_WORDS, "a goal")
    if problem is not None:
        return problem
    if _CLAUSE.search(text.rstrip(")")):
        return "more than one sentence"
    words = [w.lower() for w in tokens(text)]
    if not words or all(w in STOPWORDS or _NUMBERISH.match(w) for w in words):
        return "no goal words"
    return None


def heuristic_label(texts: list[str], exclude: Iterable[str] = ()) -> str:
    """The heuristic planner's label for these texts (its shared-phrase labeller)."""
    return label_from_texts(texts, exclude=exclude)
