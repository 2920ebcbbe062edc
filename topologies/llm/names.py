"""Is the model's concept label a short noun phrase, its intent title a goal?

A small stand-in, kept in this one module so it can give way to the engine's own naming rules
(spaCy-based noun phrases and actions) when those exist: :func:`label_problem` and
:func:`title_problem` say why a name is not fit (None when it is); the planner then uses the
heuristic's name for the same evidence (:func:`heuristic_label`) or leaves the intent to the
engine's intent emergence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from topologies.text import STOPWORDS, is_content_word, label_from_texts, tokens

MAX_LABEL_WORDS = 5
MAX_LABEL_CHARS = 60
MAX_TITLE_WORDS = 14
MAX_TITLE_CHARS = 120
_CLAUSE = re.compile(r"[.;!?:]\s|[.;!?]$|\n")
_IDENTIFIER = re.compile(r"\w_\w|[/\\@#=(){}\[\]]|\w\.\w")
_NUMBERISH = re.compile(r"^[\d:./,\-]+(?:am|pm|h|st|nd|rd|th)?$", re.IGNORECASE)
_CALENDAR_WORDS = (
    "mon tue wed thu fri sat sun monday tuesday wednesday thursday friday saturday sunday "
    "jan feb mar apr jun jul aug sep sept oct nov dec january february march april may june "
    "july august september october november december today tomorrow yesterday week weekend "
    "morning evening night am pm"
)
_CALENDAR = frozenset(_CALENDAR_WORDS.split())


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


def _stem(word: str) -> str:
    word = word.lower()
    return word[:5] if len(word) > 5 else word.rstrip("s")


def shares_a_word(label: str, text: str) -> bool:
    """Does the label use a content word of the text (forgiving plurals and endings)?"""
    stems = {_stem(w) for w in tokens(text) if is_content_word(w)}
    return any(_stem(w) in stems for w in tokens(label) if is_content_word(w))


def _size_problem(text: str, chars: int, words: int, what: str) -> str | None:
    if not text:
        return "empty"
    if _placeholder(text):
        return "a placeholder of the example"
    if len(text) > chars or len(text.split()) > words:
        return f"longer than {what}"
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
    if _IDENTIFIER.search(text):
        return "an identifier, not a theme"
    if any(title and _normal(text) == _normal(title) for title in titles):
        return "an event's title, not a theme"
    words = [w.lower() for w in tokens(text)]
    if not words or all(w in STOPWORDS for w in words):
        return "no topic word"
    if all(_NUMBERISH.match(w) or w in _CALENDAR for w in words):
        return "a date or a number"
    if names and all(w in names or w in STOPWORDS for w in words):
        return "a person's name"
    if source and not shares_a_word(text, source):
        return "no word of the event"
    return None


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
