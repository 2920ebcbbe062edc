"""Intent titles and descriptions: a to-do item and the plain reason it came up.

The title is an action of the evidence, in its own words: a verb and its object ("Renew the
passport before the flight"), chosen among the evidence's actions by how central the action
is to the evidence (cosine to the centroid of their vectors), how many evidence events speak
of its object, whether a supporting concept's label names the object, and how firmly its
sentence commits to it (a modal, an imperative, a date); then the deadline, "(by 18 Dec)".
With no action in the evidence, the title follows up on its most central noun phrase.

The description says in sentences which events made the intent emerge, by title and date.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime

import numpy as np

from schemas.graph import Node
from topologies.naming.labels import Embed, Matrix
from topologies.naming.phrases import Action, Analysis, is_informative_title, name_words
from topologies.text import STOPWORDS

MAX_CANDIDATES = 8  # actions embedded per title (the best by coverage first)
COVERAGE_WEIGHT = 0.3  # share of evidence events that speak of the object
COMMITMENT_WEIGHT = 0.2
LABEL_WEIGHT = 0.15  # the object is named by a supporting concept's label
REPEAT_BONUS = 0.05  # the same action in two or more events
OWN_BONUS = 0.1  # the user wrote it (a note, a sent message): their own to-do
MAX_TITLE_WORDS = 14
TITLE_BASE_CHARS = 280  # room left for the suffix within the schema's label bound
MAX_CITED = 4  # events named in a description

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_BY_SUFFIX = re.compile(r" \(by \d{1,2} [A-Z][a-z]{2}\)$")
_DUE_SENTENCE = re.compile(r"(^|\n)(Due by|Deadline:) [^\n]*$")


def _short_date(when: datetime) -> str:
    return f"{when.day} {_MONTHS[when.month - 1]}"


def _long_date(when: datetime) -> str:
    return f"{when.day} {_MONTHS[when.month - 1]} {when.year}"


def with_deadline(title: str, deadline: datetime) -> str:
    """The title with its "(by 18 Dec)" suffix set to this deadline (English month names
    whatever the process locale, so the suffix is always recognised and replaced)."""
    base = _BY_SUFFIX.sub("", title)[:TITLE_BASE_CHARS]
    return f"{base} (by {_short_date(deadline)})"


def without_deadline(title: str) -> str:
    return _BY_SUFFIX.sub("", title)


def due_sentence(deadline: datetime) -> str:
    return f"Due by {_long_date(deadline)}."


def redate(text: str, deadline: datetime) -> str:
    """The description with its due sentence set to this deadline."""
    line = due_sentence(deadline)
    if _DUE_SENTENCE.search(text):
        return _DUE_SENTENCE.sub(lambda m: f"{m.group(1)}{line}", text)
    return f"{text}\n{line}"


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def rank_actions(
    analyses: Sequence[Analysis],
    vectors: Matrix,
    embed: Embed,
    labels: Sequence[str] = (),
    own: Sequence[bool] = (),
) -> list[tuple[float, str]]:
    """(score, action text) of the evidence's actions, best first; ``own[i]`` tells whether
    the user wrote evidence event i."""
    n = max(1, len(analyses))
    object_df: Counter[str] = Counter()
    for analysis in analyses:
        object_df.update(analysis.heads | {a.object_head for a in analysis.actions})
    best: dict[tuple[str, str], Action] = {}
    seen: Counter[tuple[str, str]] = Counter()
    mine: set[tuple[str, str]] = set()
    for index, analysis in enumerate(analyses):
        for action in analysis.actions:
            key = (action.verb, action.object_key)
            seen[key] += 1
            if index < len(own) and own[index]:
                mine.add(key)
            held = best.get(key)
            if held is None or (action.commitment, -len(action.text)) > (
                held.commitment,
                -len(held.text),
            ):
                best[key] = action
    label_words = {w.lower() for label in labels for w in label.split()} - STOPWORDS
    candidates = sorted(
        best.values(),
        key=lambda a: (-object_df[a.object_head], -seen[(a.verb, a.object_key)], a.text),
    )[:MAX_CANDIDATES]
    if not candidates:
        return []
    texts = [_capitalised(a.text) for a in candidates]
    action_vectors = embed(texts)
    centroid = vectors.mean(axis=0) if len(vectors) else np.zeros(action_vectors.shape[1])
    norm = float(np.linalg.norm(centroid))
    central = action_vectors @ (centroid / norm) if norm else np.zeros(len(texts))
    scored = []
    for i, action in enumerate(candidates):
        key = (action.verb, action.object_key)
        score = (
            float(central[i])
            + COVERAGE_WEIGHT * (object_df[action.object_head] - 1) / max(1, n - 1)
            + COMMITMENT_WEIGHT * action.commitment
            + (LABEL_WEIGHT if action.object_head in label_words else 0.0)
            + (REPEAT_BONUS if seen[key] > 1 else 0.0)
            + (OWN_BONUS if key in mine else 0.0)
        )
        scored.append((score, texts[i]))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return scored


def follow_up(label: str) -> str:
    """The title when the evidence states no action: follow up on what it is about."""
    if not label:
        return "Follow up"
    first = label.split()[0]
    if first[1:].islower() or len(first) == 1:  # not an acronym or a mixed-case name
        label = label[:1].lower() + label[1:]
    return f"Follow up on {label}"


# ----------------------------------------------------------------- the check
def title_problem(title: str, doc: object) -> str | None:
    """Why ``title`` (without its deadline suffix) is not a to-do item, None when it is one.
    ``doc`` is the spaCy parse of the title with a lower-case first letter."""
    text = without_deadline(title).strip()
    if not text:
        return "empty"
    if "\n" in text or len(text.split()) > MAX_TITLE_WORDS:
        return "longer than a to-do item"
    tokens = [t for t in doc if not t.is_punct and not t.is_space]  # type: ignore[attr-defined]
    if len(tokens) < 2:
        return "an action needs an object"
    first = tokens[0]
    if first.pos_ not in ("VERB", "AUX") or first.tag_ not in ("VB", "VBP"):
        return "does not start with an action"
    if first.lower_ in STOPWORDS and first.lower_ not in ("get", "make", "take", "go"):
        return "does not start with an action"
    return None


# ----------------------------------------------------------------- description
def _event_name(node: Node) -> str:
    """How a person recognises an event: its title, or the start of its text when the title
    is a channel or a sender."""
    title = " ".join(node.title.split())
    names = name_words(node.participants, node.tenant)
    if is_informative_title(title, names) and len(title.split()) >= 2:
        text = title
    else:
        words = " ".join((node.text or node.title).split()).split(" ")
        text = " ".join(words[:10]) + ("…" if len(words) > 10 else "")
    return text if len(text) <= 90 else text[:89] + "…"


def _when(node: Node) -> datetime:
    return node.ts or node.created_at


def describe(
    evidence: Sequence[Node],
    labels: Sequence[str],
    deadline: datetime | None,
    deadline_source: Node | None = None,
) -> str:
    """Plain sentences: how many events, over which days, about which concepts, which ones
    (by title and date), and the deadline with where it came from."""
    events = sorted(evidence, key=lambda n: (_when(n), n.id))
    if not events:
        return due_sentence(deadline) if deadline is not None else "No evidence recorded."
    first, last = _when(events[0]), _when(events[-1])
    span = (
        f"on {_long_date(first)}"
        if first.date() == last.date()
        else f"between {_short_date(first)} and {_long_date(last)}"
    )
    about = ", ".join([label for label in labels if label][:3])
    sentences = [
        f"This came up because {len(events)} events {span} point to the same goal"
        + (f" ({about})." if about else ".")
    ]
    cited = [events[0], *events[1:][-(MAX_CITED - 1) :]] if len(events) > MAX_CITED else events
    quoted = [f'"{_event_name(e)}" ({_short_date(_when(e))})' for e in cited]
    if len(events) == 1:
        sentences.append(f"It is {quoted[0]}.")
    else:
        sentences.append(f"It started with {quoted[0]}")
        middle = quoted[1:-1]
        if middle:
            sentences[-1] += f", then {_join(middle)}"
        sentences[-1] += f"; the latest is {quoted[-1]}."
    text = " ".join(sentences)
    if deadline is not None:
        line = due_sentence(deadline)
        if deadline_source is not None:
            line = line[:-1] + f', from "{_event_name(deadline_source)}".'
        text = f"{text}\n{line}"
    return text


def _join(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"
