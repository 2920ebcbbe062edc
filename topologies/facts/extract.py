"""Deterministic fact and identity extraction (DCPM System 1, step ii, without an LLM).

An event's text is split into sentences; each sentence goes through ordered rules and yields at
most one item:

1. **Identity items** (long-lived user attributes), first person: home city ("I live in / moved
   to / relocated to / am based in X", "my home town is X"), employer ("I work at / for X",
   "I joined X", "I started at X", "my employer is X"), diet ("I am vegetarian", "I went vegan",
   "I eat no meat"), family ("my wife / husband / partner / daughter / son ... is X",
   "I have N kids"). Key ``identity:<attribute>``; the value is the captured object.
2. **Stances and preferences**, first person: "I (really) prefer / like / love / enjoy / hate /
   dislike / can't stand X", "I switched to X", "I now think X", "I decided to X", "I've come to
   X", "I'm (no longer / back) into X", "I find X ...". Key ``stance:<topic>`` where the topic is
   the first topic family (see ``TOPICS``) whose words occur in the sentence, else the head
   (last content word) of the object.
3. **Possessive attributes** "my X is / are Y" -> key ``attr:<X>``, value Y.
4. **Atomic facts**: any other declarative sentence with at least ``min_content_words`` content
   words (no question, no greeting, no boilerplate) -> an unkeyed fact.

Revision markers ("now", "switched", "no longer", "changed my mind", "anymore", "instead",
"decided", "these days", "back to") flag an item as a revision: the reconciler then accepts a
weaker semantic match as the same subject. Every rule is a pure function of the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from topologies.facts.slots import attributes_of, cue_of
from topologies.text import STOPWORDS, is_content_word, tokens

ItemKind = Literal["identity", "stance", "attribute", "fact"]

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_WS = re.compile(r"\s+")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# topic families: a stance about any of these words is a stance about the family
TOPICS: dict[str, frozenset[str]] = {
    "fitness": _words(
        "fitness gym workout workouts working exercise exercising zumba yoga pilates hiking "
        "hike running run runs jogging cycling swimming crossfit classes class training spin"
    ),
    "food": _words(
        "food eat eating cooking cuisine meat vegetarian vegan restaurant restaurants dinner "
        "lunch breakfast sushi pizza pasta spicy"
    ),
    "drinks": _words("coffee tea espresso latte beer wine alcohol drinks"),
    "work_style": _words("remote office hybrid commute meetings standups pairing deep-work focus"),
    "programming": _words(
        "python rust golang java javascript typescript language languages framework editor vim "
        "emacs vscode ide"
    ),
    "music": _words("music jazz rock pop classical concerts playlist podcasts"),
    "reading": _words("books reading novels fiction audiobooks kindle"),
    "travel": _words("travel trips flying trains beach mountains city-breaks"),
    "social": _words("parties crowds people friends socialising socializing alone"),
    "sleep": _words("sleep sleeping bedtime early-riser night-owl mornings"),
    "money": _words("saving savings investing budget spending stocks crypto"),
}

_I = r"(?:i|i've|i'm|i am|i have)"
_IDENTITY_RULES: list[tuple[str, re.Pattern[str]]] = [
    (
        "home_city",
        re.compile(  # case-insensitive but for the value: a place is a capitalised name
            r"\b(?i:i(?:'ve| have)?\s+(?:just\s+|recently\s+|finally\s+)?"
            r"(?:live|lived|moved|relocated|am based|'m based|am living|'m living)\s+(?:back\s+)?"
            r"(?:in|to)\s+)(?P<v>[A-Z][\w'\- ]{1,40})",
        ),
    ),
    ("home_city", re.compile(r"\bmy (?:home ?town|home city|city) is (?P<v>[\w'\- ]{2,40})", re.I)),
    (
        "employer",
        re.compile(  # an employer is a capitalised name ("I joined a gym" is no employer)
            r"\b(?i:i(?:'ve| have)?\s+(?:just\s+|recently\s+)?(?:work|worked|started|joined|"
            r"am working|'m working)\s+(?:at|for|with)?\s*)(?P<v>[A-Z][\w&'\-. ]{1,40})",
        ),
    ),
    ("employer", re.compile(r"\bmy (?:employer|company) is (?P<v>[\w&'\-. ]{2,40})", re.I)),
    (
        "diet",
        re.compile(
            r"\bi(?:'m| am| went| became| have become|'ve become)\s+(?:now\s+|fully\s+)?"
            r"(?:a\s+)?(?P<v>vegetarian|vegan|pescatarian|gluten[- ]free|lactose[- ]intolerant|"
            r"keto|omnivore)",
            re.I,
        ),
    ),
    (
        "diet",
        re.compile(r"\bi (?:don't|do not|no longer) eat (?P<v>meat|fish|dairy|gluten|pork)", re.I),
    ),
    (
        "family",
        re.compile(
            r"\bi have (?P<v>(?:a|one|two|three|four|\d+) "
            r"(?:kids?|children|child|sons?|daughters?|siblings?))",
            re.I,
        ),
    ),
    (
        "family",
        re.compile(
            r"\bmy (?P<v>(?:wife|husband|partner|daughter|son|mother|father|mum|mom|"
            r"dad|sister|brother)(?:'s name)? is [\w'\- ]{2,40})",
            re.I,
        ),
    ),
    (
        "job_title",
        re.compile(
            r"\bi(?:'m| am) (?:now )?(?:a|an) (?P<v>[\w\- ]{3,40}?"
            r"(?:engineer|developer|designer|teacher|nurse|doctor|manager|student|"
            r"reporter|researcher|lawyer|consultant|analyst|lead))\b",
            re.I,
        ),
    ),
]

_STANCE = re.compile(
    rf"\b{_I}?\s*(?:really\s+|much\s+|now\s+|still\s+|honestly\s+|definitely\s+|actually\s+)*"
    r"(?P<verb>prefer|like|love|enjoy|hate|dislike|can't stand|cannot stand|don't like|"
    r"do not like|switched to|now think|think|decided(?: to)?|came to|have come to|'ve come to|"
    r"find|found|am into|'m into|am back to|'m back to|went back to|am done with|'m done with|"
    r"gave up|quit|stopped)\s+(?P<v>.{3,160})",
    re.I,
)
_FIRST_PERSON = re.compile(
    r"^\s*(?:\w+\s*,\s*)?(?:i|i'm|i've|i'd|i'll|honestly,? i|lately,? i)\b", re.I
)
_POSSESSIVE = re.compile(r"\bmy (?P<a>[\w\- ]{2,30}?) (?:is|are) (?:now )?(?P<v>[^,;]{2,80})", re.I)
_REVISION = re.compile(
    r"\b(?:now|switched|no longer|changed my mind|anymore|any more|instead|decided|these days|"
    r"back to|went back|used to|turns out|actually)\b",
    re.I,
)
_NEGATIVE = re.compile(
    r"\b(?:hate|dislike|can't stand|cannot stand|don't like|do not like|"
    r"done with|gave up|quit|stopped|no longer)\b",
    re.I,
)
_SKIP = re.compile(r"^(?:hi|hello|hey|dear|thanks|thank you|cheers|best|regards|sent from)\b", re.I)

_STANCE_VERB_POLARITY = {"hate": -1, "dislike": -1, "can't stand": -1, "cannot stand": -1}


@dataclass(frozen=True)
class ExtractedItem:
    """One atomic fact or identity item, before reconciliation."""

    text: str
    kind: ItemKind
    key: str | None = None  # subject/attribute: "identity:home_city", "stance:fitness", None
    value: str = ""  # normalised value the key maps to
    polarity: int = 1  # +1 positive stance, -1 negative
    revision: bool = False  # the sentence says it revises an earlier belief
    salience: float = 0.5
    topic: str = ""
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ExtractorConfig:
    max_items: int = 8  # per event
    min_content_words: int = 4  # an unkeyed fact needs this many content words
    min_slot_words: int = 2  # ... or this many words when it sets an attribute or says it changed
    max_chars: int = 400  # longer sentences are cut


def normalise(text: str) -> str:
    """Lower case, single spaces, no trailing punctuation: the exact-duplicate form."""
    return _WS.sub(" ", text.strip().lower()).rstrip(" .!?;:")


def split_sentences(text: str) -> list[str]:
    out: list[str] = []
    for part in _SENTENCE.split(text):
        part = part.strip(" \t-*•>")
        if part:
            out.append(part)
    return out


def topic_of(text: str) -> str:
    """The first topic family named in the text, else the object's head word, else ''."""
    words = [w.lower() for w in tokens(text)]
    for topic, lexicon in TOPICS.items():
        if any(w in lexicon for w in words):
            return topic
    content = [w for w in words if is_content_word(w)]
    return content[-1] if content else ""


def _clean_value(value: str) -> str:
    value = re.split(r"\b(?:because|since|but|and then|which|so that)\b|[,;]", value, maxsplit=1)[0]
    return normalise(value)[:120]


def _identity(sentence: str) -> ExtractedItem | None:
    for attribute, pattern in _IDENTITY_RULES:
        match = pattern.search(sentence)
        if match:
            value = _clean_value(match.group("v"))
            if not value:
                continue
            return ExtractedItem(
                text=sentence,
                kind="identity",
                key=f"identity:{attribute}",
                value=value,
                revision=bool(_REVISION.search(sentence)),
                salience=0.9,
                topic=attribute,
            )
    return None


def _stance(sentence: str) -> ExtractedItem | None:
    if not _FIRST_PERSON.search(sentence) and not sentence.lower().startswith(
        ("honestly", "lately")
    ):
        return None
    match = _STANCE.search(sentence)
    if match is None:
        return None
    obj = match.group("v")
    topic = topic_of(obj) or topic_of(sentence)
    if not topic:
        return None
    verb = match.group("verb").lower()
    polarity = -1 if _NEGATIVE.search(sentence) or verb in _STANCE_VERB_POLARITY else 1
    return ExtractedItem(
        text=sentence,
        kind="stance",
        key=f"stance:{topic}",
        value=_clean_value(f"{verb} {obj}"),
        polarity=polarity,
        revision=bool(_REVISION.search(sentence)),
        salience=0.8,
        topic=topic,
    )


def _possessive(sentence: str) -> ExtractedItem | None:
    match = _POSSESSIVE.search(sentence)
    if match is None:
        return None
    attribute = normalise(match.group("a")).replace(" ", "_")
    value = _clean_value(match.group("v"))
    if not value or attribute in {"name"}:
        return None
    return ExtractedItem(
        text=sentence,
        kind="attribute",
        key=f"attr:{attribute}",
        value=value,
        revision=bool(_REVISION.search(sentence)),
        salience=0.7,
        topic=attribute,
    )


def _atomic(sentence: str, config: ExtractorConfig) -> ExtractedItem | None:
    if sentence.endswith("?") or _SKIP.match(sentence):
        return None
    content = [w for w in tokens(sentence) if is_content_word(w)]
    if len(content) < config.min_content_words:
        # a short statement still counts when it sets an attribute or says it changed
        # ("Swapped the decaf for matcha", "Going to Portugal in August")
        words = [w for w in tokens(sentence) if len(w) > 2 and w.lower() not in STOPWORDS]
        slotted = cue_of(sentence) == 2 or attributes_of(sentence)
        if len(words) < config.min_slot_words or not slotted:
            return None
    return ExtractedItem(text=sentence, kind="fact", salience=min(1.0, 0.3 + 0.05 * len(content)))


def extract_items(text: str, config: ExtractorConfig | None = None) -> list[ExtractedItem]:
    """Facts and identity items of one event text, in reading order, deduplicated."""
    cfg = config or ExtractorConfig()
    items: list[ExtractedItem] = []
    seen: set[str] = set()
    for sentence in split_sentences(text):
        sentence = sentence[: cfg.max_chars]
        if sentence.rstrip().endswith("?"):
            continue  # a question states no fact
        item = (
            _identity(sentence)
            or _stance(sentence)
            or _possessive(sentence)
            or _atomic(sentence, cfg)
        )
        if item is None:
            continue
        norm = normalise(item.text)
        if norm in seen:
            continue
        seen.add(norm)
        items.append(item)
        if len(items) >= cfg.max_items:
            break
    return items
