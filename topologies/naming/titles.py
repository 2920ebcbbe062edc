"""Intent titles and descriptions: a to-do item and the plain reason it came up.

The title is an action of the evidence, in its own words: a verb and its object ("Renew the
passport before the flight"), chosen among the evidence's actions by how central the action
is to the evidence (cosine to the centroid of their vectors), how many evidence events speak
of its object, whether a supporting concept's label names the object, and how firmly its
sentence commits to it (a modal, an imperative, a date); then the deadline, "(by 18 Dec)".
With no action in the evidence, the title is its most central noun phrase said with the verb
the evidence does to it ("Prepare the Kessler Logistik demo"); when no event acts on it, with a
verb of what a person does about such a thing: prepare for a dated occasion the deadline's own
events name ("Prepare for the Spreeufer 10k"), follow up on anything else. A title is always
an action, never a bare noun phrase. Unless a sentence states an action as the person's goal
and an event that names the deadline's day speaks of its object, the thing the deadline's day
is written against ("Moving the demo to Tuesday 28 April") is the goal the other actions are
steps to, by the particular name an event or its heading gives it ("Prepare for the Kessler
multi-depot demo", "Prepare for the SoCML 2026 full paper").

The description says in sentences which events made the intent emerge, by title and date.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import cache, partial
from typing import Any, NamedTuple

import numpy as np

from schemas.graph import Node
from schemas.intents import title_without_deadline
from topologies.graph import raw_attr
from topologies.lexicon import CALENDAR_WORDS, MONTH_ABBREVIATIONS, STOPWORDS
from topologies.naming.activities import activity_labels, lexicon
from topologies.naming.labels import Embed, Matrix, surface
from topologies.naming.occasions import local_day
from topologies.naming.phrases import (
    CARRY_VERBS,
    LIGHT_VERBS,
    WRITER,
    Action,
    Analysis,
    Phrase,
    is_informative_title,
    is_own,
    name_words,
)
from topologies.text import find_dates, zipf

MAX_CANDIDATES = 6  # actions embedded per title (the best by coverage first)
MAX_DOINGS = 1  # doings ("Rent reduction") embedded per title
COVERAGE_WEIGHT = 0.3  # share of evidence events that speak of the object
COMMITMENT_WEIGHT = 0.2
GOAL_WEIGHT = 0.3  # per unit of goal: "I need to renew the passport" 1, "Please confirm" 0.5
LABEL_WEIGHT = 0.15  # the object is named by a supporting concept's label
REPEAT_BONUS = 0.05  # the same action in two or more events
OWN_BONUS = 0.1  # the user wrote it (a note, a sent message): their own to-do
GOAL_CANDIDATES = 4  # noun phrases embedded per title (the most used first)
NAMED_BONUS = 0.1  # the phrase names a particular thing ("Kessler Logistik demo")
GOAL_HANDICAP = 0.1  # an action stated in the evidence is preferred to a noun phrase
ANCHOR_BONUS = 0.15  # used by an event that names the deadline's day
MAX_HEADING_WORDS = 3  # a heading that names whose a dated thing is: "SoCML 2026: ..."
MAX_DATE_GAP = 2  # words (stopwords only) between a dated thing and its date: "demo to Tue"
TITLE_BONUS = 0.05  # a noun phrase in an event's title ("Leonie's 40th - surprise party")
CARRY_PENALTY = 0.2  # "bring the passport": a step towards the goal, not the goal
NAME_ZIPF = 3.0  # a capitalised first word rarer than this names something ("Kessler")
MAX_TITLE_WORDS = 14
MIN_VERB_EVENTS = 2  # events that must do the same thing to a goal for its verb to name it
MAX_GOAL_WORDS = 6  # a noun-phrase goal is as short as a folder name
TITLE_BASE_CHARS = 280  # room left for the suffix within the schema's label bound
MAX_CITED = 4  # events named in a description
# the verbs of a noun-phrase goal no evidence event acts on: what a person does about a dated
# occasion (a race, a party, a demo: the deadline's own events name it), and about anything else
OCCASION_VERB = "prepare for"
FOLLOW_UP_VERB = "follow up on"

_FINITE = frozenset({"VBD", "VBZ", "VBP", "MD"})
DETERMINERS = frozenset({"the", "a", "an", "my", "our", "your", "his", "her", "their", "its"})
_DUE_SENTENCE = re.compile(r"(^|\n)(Due by|Deadline:) [^\n]*$")


def _short_date(when: datetime) -> str:
    return f"{when.day} {MONTH_ABBREVIATIONS[when.month - 1]}"


def _long_date(when: datetime) -> str:
    return f"{when.day} {MONTH_ABBREVIATIONS[when.month - 1]} {when.year}"


def with_deadline(title: str, deadline: datetime) -> str:
    """The title with its "(by 18 Dec)" suffix set to this deadline (English month names
    whatever the process locale, so the suffix is always recognised and replaced)."""
    base = without_deadline(title)[:TITLE_BASE_CHARS]
    return f"{base} (by {_short_date(deadline)})"


def with_occasion(title: str, occasion: str | None) -> str:
    """The goal set against its occasion ("Get a new passport before the Thailand flight"),
    unless the title already speaks of it or would grow past a to-do item. A thing to
    prepare for is a step of the occasion its deadline is the day of: the occasion is what
    the person prepares for ("Prepare for the Spreeufer 10k", not "Prepare for the Bib
    pickup before the Spreeufer 10k", the pickup being the day before)."""
    if not occasion:
        return title
    words = {w.lower() for w in title.split()} - STOPWORDS
    if words & ({w.lower() for w in occasion.split()} - STOPWORDS):
        return title
    if title.lower().startswith(f"{OCCASION_VERB} "):
        return f"{_capitalised(OCCASION_VERB)} {with_article(occasion)}"
    if len(title.split()) + len(occasion.split()) + 2 > MAX_TITLE_WORDS:
        return title
    return f"{title} before the {occasion}"


def without_deadline(title: str) -> str:
    return title_without_deadline(title)


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


def mentions_day(deadline: datetime | None, node: Node) -> bool:
    """The event names the deadline's day: it is where the goal's date comes from (the
    demo, the appointment, the flight), so its words say what the goal is for."""
    if deadline is None or node.ts is None:
        return False
    day = local_day(deadline, node)
    start = calendar_start(node)
    if start is not None and start.date() == day:
        return True  # a calendar entry is the occasion on the day it starts, said or not
    text = f"{node.title}\n{node.text}" if node.text else node.title
    return any(m.when.date() == day for m in find_dates(text, node.ts))


_CLAUSE_END = re.compile(r"[.!?;:|(\n]")


def dated_heads(
    nodes: Sequence[Node],
    analyses: Sequence[Analysis],
    deadline: datetime | None,
    parse: Callable[[str], Any] | None = None,
) -> frozenset[str]:
    """Head nouns of the things the deadline's day is written against (``dated_things``)."""
    return frozenset(p.head for p in dated_things(nodes, analyses, deadline, parse))


def dated_things(
    nodes: Sequence[Node],
    analyses: Sequence[Analysis],
    deadline: datetime | None,
    parse: Callable[[str], Any] | None = None,
) -> list[Phrase]:
    """The things the deadline's day is written against: in a title or a sentence that
    names the day, the noun phrase right before the date, with at most a preposition
    between ("Moving the multi-depot demo to Tuesday 28 April", "full paper Thu 14 May"):
    what is due or what happens that day, the goal the other events' steps serve. Not a
    phrase of another clause ("Budget request: ..."), nor one a verb stands between ("a
    staging copy, so I'd like to propose Tuesday"), nor one only a single event speaks of
    ("Good luck on Tuesday"): the evidence keeps coming back to what is due. A parser may
    read the date as the head of the phrase before it ("full paper Thu 14 May" as one
    noun chunk of "May"), so the event's phrases lack it: with ``parse``, the words right
    before the date (after the clause's last comma) are parsed by themselves. A calendar
    entry that starts on the day names what happens then by its title, date or not ("Team
    offsite - day 1": the offsite)."""
    if deadline is None:
        return []
    found: dict[str, Phrase] = {}
    for node, analysis in zip(nodes, analyses, strict=True):
        if node.ts is None:
            continue
        day = local_day(deadline, node)
        phrases = [*analysis.phrases, *analysis.named]
        entry = entry_thing(node, analysis, parse) if _entry_on(node, day) else None
        if entry is not None:  # what the calendar holds that day: "Team offsite - day 1"
            found.setdefault(entry.key, entry)
        for text, in_title in ((node.title, True), (node.text or "", False)):
            for mention in find_dates(text, node.ts):
                if mention.when.date() != day:
                    continue
                before = text[: max(0, text.find(mention.phrase))]
                clause = before[max((m.end() for m in _CLAUSE_END.finditer(before)), default=0) :]
                phrase = _last_phrase(clause, phrases)
                if phrase is None and parse is not None:
                    phrase = _parsed_phrase(clause.rsplit(",", 1)[-1], parse, in_title)
                if phrase is not None:
                    found.setdefault(phrase.key, phrase)
    texts = [f"{n.title}\n{n.text}" for n in nodes]
    return [p for p in found.values() if spoken_of(p.head, analyses, texts) >= 2]


_ENTRY_PARTS = re.compile(r"\s[–—-]\s|[:|\n]")  # brackets are cut off before


def _entry_on(node: Node, day: date) -> bool:
    """The event is a calendar entry of an occasion that starts on the day (its ``start``,
    else its time: a calendar entry is stamped with its start); a recurring entry is a
    routine (the weekly sync), no occasion."""
    if node.source != "calendar" or node.ts is None or raw_attr(node, "recurrence"):
        return False
    start = calendar_start(node) or node.ts
    return start.date() == day


def held_on(deadline: datetime | None, node: Node) -> bool:
    """The event is the calendar entry of the deadline's day: what the goal was for is
    happening (the offsite's first day, the meeting itself)."""
    if deadline is None or node.ts is None:
        return False
    day = local_day(deadline, node)
    return _entry_on(node, day)


def entry_thing(
    node: Node, analysis: Analysis, parse: Callable[[str], Any] | None = None
) -> Phrase | None:
    """What a calendar entry's title says happens ("Data Platform offsite" of "Data Platform
    offsite - day 1", "multi-depot routing demo" of "Kessler Logistik - multi-depot routing
    demo"): the common noun phrase ending the first part of the title that ends in one (who
    or where may come first: a name is no common noun phrase), as the event's phrases have
    it, else parsed alone; nothing in brackets ("(Jonas at home)": a detail)."""
    for part in _ENTRY_PARTS.split(node.title.split("(", 1)[0]):
        part = part.strip().rstrip(",")
        if not part:
            continue
        phrase = _last_phrase(part, analysis.phrases)
        if phrase is None and parse is not None:
            phrase = _parsed_phrase(part.rsplit(",", 1)[-1], parse, in_title=True)
        if phrase is not None:
            return phrase
    return None


def spoken_of(head: str, analyses: Sequence[Analysis], texts: Sequence[str]) -> int:
    """Events that speak of the thing named by ``head``: a phrase of theirs has its head, or
    their words do (the parser may read "paper ID 2291" as an ID, not a paper)."""
    word = head_word(head)
    return sum(
        head in a.heads or head in {p.head for p in a.named} or word.search(t) is not None
        for a, t in zip(analyses, texts, strict=True)
    )


@cache
def head_word(head: str) -> re.Pattern[str]:
    """The head as a word of a text, singular or with a plural "s" ("paper", "papers"): a
    text that writes it speaks of the thing, whatever its parse (``spoken_of``)."""
    return re.compile(r"(?<![\w-])" + re.escape(head) + r"s?(?![\w-])", re.IGNORECASE)


_THING_POS = frozenset({"ADJ", "NOUN", "PROPN"})


def _parsed_phrase(words: str, parse: Callable[[str], Any], in_title: bool) -> Phrase | None:
    """The noun phrase that ends the words, parsed by themselves ("full paper"): a common
    noun with the modifiers right before it; None when they do not end in one."""
    tokens = [t for t in parse(words.strip()) if not t.is_space]
    if not tokens or tokens[-1].pos_ != "NOUN" or tokens[-1].lower_ in STOPWORDS:
        return None
    run = [tokens[-1]]
    for token in reversed(tokens[:-1]):
        if token.pos_ not in _THING_POS or token.lower_ in STOPWORDS or token.like_num:
            break
        run.insert(0, token)
    head = str(tokens[-1].lemma_ or tokens[-1].text).lower()
    key = " ".join(str(t.lemma_ or t.text).lower() for t in run)
    return Phrase(key=key, text=" ".join(t.text for t in run), head=head, in_title=in_title)


def _last_phrase(clause: str, phrases: Sequence[Phrase]) -> Phrase | None:
    """The phrase that ends last in the clause (the longest of those ending there), when
    only stopwords stand between it and the clause's end."""
    best: tuple[int, int] | None = None
    found = None
    for phrase in phrases:
        if phrase.counted or not phrase.text:
            continue
        at = clause.rfind(phrase.text)
        if at < 0:
            continue
        rank = (at + len(phrase.text), len(phrase.text))
        if best is None or rank > best:
            best, found = rank, phrase
    if best is None:
        return None
    gap = re.findall(r"[\w'’-]+", clause[best[0] :])
    if len(gap) > MAX_DATE_GAP or any(w.lower() not in STOPWORDS for w in gap):
        return None
    return found


def by_its_name(
    thing: str, texts: Sequence[str], names: frozenset[str], known: Sequence[str] = ()
) -> str | None:
    """The thing as an evidence text writes it with the name of whose or which it is right
    before it ("Dry run: Kessler multi-depot demo" for "multi-depot demo"): words the
    evidence writes as names (``written_as_name``), no person's name. Of several such names
    (and the ``known`` ones: the thing as already named), the one most texts write (the
    "Lisbon offsite" of the agenda and the travel, not the calendar's "Data Platform
    offsite"): how the person speaks of it. None when no text names it so."""
    pattern = re.compile(
        r"(?<![\w-])((?:[\w&-]+\s+){1,3})" + re.escape(thing) + r"(?![\w-])", re.IGNORECASE
    )
    found: dict[str, str] = {}  # the name -> the thing as written with it
    is_name = cache(partial(written_as_name, texts=texts, names=names))  # each word once
    for known_name in known:
        words = known_name.split()
        found.setdefault(" ".join(words[: len(words) - len(thing.split())]), known_name)
    for text in texts:
        for match in pattern.finditer(text):
            words = match.group(1).split()
            while words and not is_name(words[0]):
                words = words[1:]  # "the Kessler": from the first word that names
            if words and all(is_name(w) for w in words):
                name = " ".join(words)
                found.setdefault(name, " ".join([name, match.group(0)[len(match.group(1)) :]]))
    if not found:
        return None
    return found[max(found, key=lambda name: _written_by(name, texts))]  # the first of a tie


def _written_by(name: str, texts: Sequence[str]) -> int:
    """Texts that write the name, as written (its capitals: a name)."""
    pattern = re.compile(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])")
    return sum(pattern.search(text) is not None for text in texts)


def the_thing_named(text: str) -> str:
    """What a named thing is without its name ("offsite" of "Data Platform offsite", "full
    paper" of "SoCML 2026 full paper"): the words after the last capitalised one and any
    number after it; the whole text when nothing is left."""
    words = text.split()
    start = 0
    for index, word in enumerate(words):
        if word[:1].isupper() or (start and start == index and word[:1].isdigit()):
            start = index + 1
    return " ".join(words[start:]) or text


def by_its_heading(thing: str, texts: Sequence[str], names: frozenset[str]) -> str | None:
    """The thing as the heading of its line or sentence says whose it is ("SoCML 2026:
    abstract Thu 7 May, full paper Thu 14 May" makes "SoCML 2026 full paper"): the nearest
    heading before it, of at most ``MAX_HEADING_WORDS`` words before a colon, written as a name
    (``written_as_name``; a number may follow a name: a year, an edition), no person's
    name. None when no text heads it so."""
    pattern = re.compile(
        r"(?:^|[.!?\n:]\s*)([^.!?\n:]{1,60}):[^.!?\n:]*?(?<![\w-])("
        + re.escape(thing)
        + r")(?![\w-])",
        re.IGNORECASE,
    )
    for text in texts:
        for found in pattern.finditer(text):
            words = found.group(1).split()
            if not words or len(words) > MAX_HEADING_WORDS:
                continue
            if not written_as_name(words[0], texts, names):
                continue
            if all(w.isdigit() or written_as_name(w, texts, names) for w in words[1:]):
                return f"{' '.join(words)} {found.group(2)}"  # the thing as written
    return None


def written_as_name(word: str, texts: Sequence[str], names: frozenset[str]) -> bool:
    """The texts never write the word in lower case, and it is no English word (a noun,
    verb or adjective of the lexicon: "Kessler", not "Partner") or they write it with a
    capital inside a sentence ("flights to Lisbon"); not a person's name."""
    if not word[:1].isupper() or word.lower() in names:
        return False
    lower = re.compile(r"(?<![\w-])" + re.escape(word.lower()) + r"(?![\w-])")
    if any(lower.search(t) for t in texts):
        return False
    known = lexicon()
    key = word.lower()
    if key not in known.nouns and key not in known.adjectives and key not in known.verbs:
        return True
    inside = re.compile(r"\b[a-z][\w'-]*,?\s+" + re.escape(word) + r"(?![\w-])")
    return any(inside.search(t) for t in texts)


def calendar_start(node: Node) -> datetime | None:
    """When a calendar entry starts (its ``start`` attribute, in its own time zone); None for
    any other event or an entry without a readable start."""
    if node.source != "calendar":
        return None
    start = raw_attr(node, "start")
    if not isinstance(start, str):
        return None
    try:
        return datetime.fromisoformat(start)
    except ValueError:
        return None


def written_by(node: Node) -> bool | None:
    """Whether the user wrote the event (``is_own``: a note, a message they sent), None when
    the event does not say who sent it: a chat turn known only by its speaker, in a
    conversation the user is not known to take part in (months of chat between two friends,
    each "I" a person of that memory). "I hope to build my own family" is then a goal of
    the one who said it, not another person's doing left out (``_theirs``)."""
    if node.source == "note":
        return True
    if not (raw_attr(node, "from") or raw_attr(node, "sender")):
        return None
    return is_own(node)


def chat_turn(node: Node) -> bool:
    """A chat message that says only who spoke (``written_by`` None): a turn of a talk
    between persons of this memory, each of whom may have goals of their own."""
    return node.source == "chat" and written_by(node) is None


def _theirs(action: Action, own: bool | None, chat: bool = False) -> bool:
    """The action is the person's: "I need to" in their own note or mail, "you must" in
    what others write to them; "I will ..." in another's message is the writer's own doing
    (``own`` None: unknown, as for a nightly schema's facts). In a chat turn that says only
    who spoke (``chat``: ``chat_turn``), the speaker's, unless the turn tells the
    other what to do or does it for them (``Action.for_reader``): "Reach for your goals",
    "I'll give you that boost" or "I can send you a link" is advice, cheer or the chat
    itself, no errand of either friend's."""
    if chat and action.for_reader:
        return False
    if own is None or not action.speaker:
        return True
    return (action.speaker == WRITER) == own


class Ranked(NamedTuple):
    score: float
    text: str
    goal: float = 0.0  # how far its clause states it as the person's goal
    base: float = 0.0  # centrality and coverage alone (no commitment, no bonus)
    verb: str = ""  # an action's verb (lemma)
    head: str = ""  # an action's object head (lemma)


def as_action(verb: str, thing: str, named: bool = False) -> str:
    """The to-do of doing ``verb`` to ``thing``: "Prepare the Kessler Logistik demo",
    "Renew the passport" (a common noun in lower case, a name as written; ``named``: its
    first word is a name, "Lisbon spend forecast")."""
    if not thing.split() or named or _is_name(thing):
        return f"{_capitalised(verb)} the {thing}"
    kept = thing[:1].lower() + thing[1:]
    return f"{_capitalised(verb)} the {kept}"


def with_article(name: str) -> str:
    """A name after a verb or "for": "the Data Platform offsite", "the Spreeufer 10k", but
    "Harbourside Dental Group" (a proper name, capitalised to its last word, takes no
    article)."""
    words = name.split()
    if (
        words
        and words[-1][:1].isupper()
        and all(w[:1].isupper() or not w[:1].isalpha() for w in words)
    ):
        return name
    return f"the {name}"


def derived_action(thing: str, occasion: bool, named: bool = False) -> str:
    """The to-do of a noun-phrase goal that no evidence event acts on: prepare for an
    occasion ("Prepare for the Spreeufer 10k"), follow up on anything else ("Follow up on
    the insurance claim"): general verbs of what a person does about such a thing, so the
    title is an action whatever the noun. ``named``: the phrase names a particular thing
    ("Spreeufer 10k") and keeps its capital."""
    verb = OCCASION_VERB if occasion else FOLLOW_UP_VERB
    kept = thing if named or _is_name(thing) else thing[:1].lower() + thing[1:]
    return f"{_capitalised(verb)} {with_article(kept)}"


def is_derived(title: str) -> bool:
    """The title's verb was not the evidence's own (``derived_action``)."""
    text = without_deadline(title).lower()
    return text.startswith((f"{OCCASION_VERB} ", f"{FOLLOW_UP_VERB} "))


def is_follow_up(title: str) -> bool:
    """The title follows up on a thing no event acts on ("Follow up on the insurance claim"):
    the namer's verb, where the evidence gave none."""
    return without_deadline(title).lower().startswith(f"{FOLLOW_UP_VERB} ")


# how a noun a sentence acts on stands in its parse: the object of a verb ("fix the car"),
# what a verb's preposition takes ("work on the car"), the subject of a passive ("the claim
# is not settled")
_ACTED_ON = frozenset({"dobj", "obj", "nsubjpass", "pobj"})


def acted_on(doc: Any, head: str) -> bool:
    """Whether the parsed sentence acts on, or reports a problem with, the thing named by
    ``head`` (a lemma): an object of a verb with an action of its own ("I need to fix the
    car", "the claim is still not settled"), the preposition's object of a verb ("take it to
    the garage"), or the subject of a sentence that reports a problem ("the car broke down
    again"), or the whole a compound of it names ("the sunset photo is broken"). Not a thing
    in a noun's modifier ("everyone in the crowd is going to be pumped up"), nor what a light
    verb has ("such fond memories"): a "Follow up on" the crowd or on the memories is no
    to-do of anyone's."""
    from topologies.goals import reports_problem  # the goals module reads the parser's

    problem = reports_problem(doc.text)
    for word in doc:
        if word.lemma_.lower() != head and word.lower_ != head:
            continue
        thing = word
        while thing.dep_ == "compound" and thing.head is not thing:
            thing = thing.head  # the thing a compound names: "the sunset photo"
        verb = thing.head.head if thing.dep_ == "pobj" else thing.head
        acting = verb.lemma_.lower() not in LIGHT_VERBS or thing.dep_ == "nsubjpass"
        if thing.dep_ in _ACTED_ON and verb.pos_ in ("VERB", "AUX") and acting:
            return True
        if thing.dep_ == "nsubj" and problem:
            return True
    return False


def object_verb(analyses: Sequence[Analysis], heads: frozenset[str]) -> str | None:
    """The verb the evidence keeps doing to the thing named by ``heads`` (lower-cased
    lemmas): in the most events, and at least ``MIN_VERB_EVENTS`` ("prepare" the demo,
    "renew" the passport), in any tense or voice; None when none does (what one message
    says another did, "the embassy received the application", is no goal's verb). What to
    bring is a step, not the goal's verb."""
    events = verb_events(analyses, heads)
    best = min(events, key=lambda verb: (-events[verb], verb), default=None)
    return best if best is not None and events[best] >= MIN_VERB_EVENTS else None


def committed_verb(analyses: Sequence[Analysis], texts: Sequence[str], head: str) -> str | None:
    """The verb that a sentence committing to the thing named by ``head`` does to it ("we're
    planning a big family reunion next summer": "plan"), for a goal no two events do the
    same thing to (``object_verb``): one event that states it as a plan says what the goal
    is, where "Follow up on the family reunion" says nothing. What to bring is a step."""
    from topologies.goals import commits, sentences  # the goals module reads the parser's

    word = head_word(head)
    for analysis, text in zip(analyses, texts, strict=False):
        done = {a.verb for a in analysis.actions if a.object_head == head}
        done |= {a.verb for a in analysis.activities if a.object_head == head}
        verbs = sorted(done - CARRY_VERBS)
        if not verbs:
            continue
        for sentence in sentences(text):
            if word.search(sentence) is None or not commits(sentence):
                continue
            said = next((v for v in verbs if _writes_verb(v, sentence)), None)
            if said is not None:
                return said
    return None


# verbs a title takes from the namer, not from a sentence: a goal no event acts on ("Follow up
# on", "Prepare for"), a thing needed or an obligation on a thing ("need a new passport", "the
# crown must be cemented": "Get ..."), a thing that is due ("Finish ...")
SUPPLIED_VERBS = frozenset({OCCASION_VERB.split()[0], FOLLOW_UP_VERB.split()[0], "get", "finish"})


def writes_the_action(title: str, sentence: str) -> bool:
    """The sentence writes the title's verb ("I hope to build my own family" for "Build a
    family"), unless the namer supplied the verb (``SUPPLIED_VERBS``): the goal a cue
    states is the action done to its thing, not any word of it nearby ("We'll definitely
    have a great time on our hike" commits to no "Plan a hike")."""
    words = without_deadline(title).split()
    verb = words[0].lower() if words else ""
    return not verb or verb in SUPPLIED_VERBS or _writes_verb(verb, sentence)


def _writes_verb(verb: str, sentence: str) -> bool:
    """The sentence writes the verb in one of its forms ("planning" for "plan")."""
    from lemminflect import getAllInflections

    forms = {verb, *(f for group in getAllInflections(verb, upos="VERB").values() for f in group)}
    pattern = r"(?<![\w-])(?:" + "|".join(map(re.escape, sorted(forms))) + r")(?![\w-])"
    return re.search(pattern, sentence, re.IGNORECASE) is not None


def verb_events(analyses: Sequence[Analysis], heads: frozenset[str]) -> Counter[str]:
    """verb -> events that do it to the thing named by ``heads``, in any tense or voice (what
    to bring left out)."""
    events: Counter[str] = Counter()
    for analysis in analyses:
        verbs = {a.verb for a in analysis.actions if a.object_head in heads}
        verbs |= {a.verb for a in analysis.activities if a.object_head in heads}
        events.update(verbs - CARRY_VERBS)
    return events


def in_kept_verb(analyses: Sequence[Analysis], action: Ranked, texts: Sequence[str] = ()) -> str:
    """The action said with the verb the evidence keeps doing to its object, when its own verb
    comes from one message only: "Repair the bathroom ceiling" (the tenant's mail, the notes
    and the notice all speak of the repair), not "Repaint ..." (the landlord's one reply). Only
    for a verb with a direct object ("repaint the ceiling"), whose verb can be swapped, and
    for one that the ``texts`` never use with a preposition ("apply for a passport")."""
    words = action.text.split()
    if not action.verb or len(words) < 2 or words[1].lower() not in DETERMINERS:
        return action.text
    events = verb_events(analyses, frozenset({action.head}))
    kept = object_verb(analyses, frozenset({action.head}))
    if kept is None or kept == action.verb or events[action.verb] >= MIN_VERB_EVENTS:
        return action.text
    if _prepositional(kept, texts):
        return action.text
    return " ".join([_capitalised(kept), *words[1:]])


_BE_FORMS = ("be", "is", "are", "was", "were", "been", "being", "get", "got", "gets")


def _prepositional(verb: str, texts: Sequence[str]) -> bool:
    """Some text uses the verb with a preposition right after it ("applied for"), in the
    active: after a passive ("will be repaired on 17 Nov", "was fixed in May") the preposition
    starts a date, a place or an agent, not the verb's object."""
    from lemminflect import getAllInflections

    forms = {verb, *(f for group in getAllInflections(verb, upos="VERB").values() for f in group)}
    passive = "".join(rf"(?<!\b{aux} )" for aux in _BE_FORMS)
    pattern = re.compile(
        passive
        + r"\b(?:"
        + "|".join(map(re.escape, sorted(forms)))
        + r")\s+(?:for|to|with|on|at|in|about|into|from)\b",
        re.IGNORECASE,
    )
    return any(pattern.search(text) for text in texts)


def rank_actions(
    analyses: Sequence[Analysis],
    vectors: Matrix,
    embed: Embed,
    labels: Sequence[str] = (),
    own: Sequence[bool | None] = (),
    anchored: Sequence[bool] = (),
    chat: Sequence[bool] = (),
) -> list[Ranked]:
    """(score, action text) of the evidence's actions, best first; ``own[i]`` tells whether
    the user wrote evidence event i, ``anchored[i]`` whether it names the deadline's day,
    ``chat[i]`` whether it is a chat turn that says only who spoke (``chat_turn``)."""
    n = max(1, len(analyses))
    object_df: Counter[str] = Counter()
    for analysis in analyses:
        object_df.update(analysis.heads | {a.object_head for a in analysis.actions})
    best: dict[tuple[str, str], Action] = {}
    seen: Counter[tuple[str, str]] = Counter()
    mine: set[tuple[str, str]] = set()
    anchor_words = day_words(analyses, anchored)
    for index, analysis in enumerate(analyses):
        mine_here = own[index] if index < len(own) else None
        turn = index < len(chat) and chat[index]
        for action in analysis.actions:
            if not _theirs(action, mine_here, turn):
                continue
            key = (action.verb, action.object_key)
            seen[key] += 1
            if index < len(own) and own[index]:
                mine.add(key)
            held = best.get(key)
            if held is None or (action.goal, action.commitment, -len(action.text)) > (
                held.goal,
                held.commitment,
                -len(held.text),
            ):
                best[key] = action
    label_words = {w.lower() for label in labels for w in label.split()} - STOPWORDS
    candidates = sorted(
        best.values(),
        key=lambda a: (
            -a.goal,
            -object_df[a.object_head],
            -seen[(a.verb, a.object_key)],
            a.text,
        ),
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
        base = float(central[i]) + COVERAGE_WEIGHT * (object_df[action.object_head] - 1) / max(
            1, n - 1
        )
        score = (
            base
            + COMMITMENT_WEIGHT * action.commitment
            + GOAL_WEIGHT * action.goal
            + (LABEL_WEIGHT if action.object_head in label_words else 0.0)
            + (REPEAT_BONUS if seen[key] > 1 else 0.0)
            + (OWN_BONUS if key in mine else 0.0)
            + (ANCHOR_BONUS if action.object_head in anchor_words else 0.0)
            - (CARRY_PENALTY if action.verb in CARRY_VERBS else 0.0)
        )
        scored.append(Ranked(score, texts[i], action.goal, base, action.verb, action.object_head))
    scored.sort(key=lambda item: (-item.score, item.text))
    return scored


def rank_doings(analyses: Sequence[Analysis], vectors: Matrix, embed: Embed) -> list[Ranked]:
    """The evidence's doings as noun-phrase goals ("Rent reduction", "Passport
    application"), best first by centrality and coverage, as actions are ranked."""
    doings = activity_labels(analyses)[:MAX_DOINGS]
    if not doings:
        return []
    n = max(1, len(analyses))
    texts = [_capitalised(d.text) for d in doings]
    doing_vectors = embed(texts)
    centroid = vectors.mean(axis=0) if len(vectors) else np.zeros(doing_vectors.shape[1])
    norm = float(np.linalg.norm(centroid))
    central = doing_vectors @ (centroid / norm) if norm else np.zeros(len(texts))
    scored = []
    for i, doing in enumerate(doings):
        base = float(central[i]) + COVERAGE_WEIGHT * (doing.coverage - 1) / max(1, n - 1)
        scored.append(Ranked(base, texts[i], 0.0, base))
    scored.sort(key=lambda item: (-item.score, item.text))
    return scored


@dataclass(frozen=True)
class Goal:
    score: float
    text: str
    anchored: bool  # used by an event that names the deadline's day
    named: bool  # names a particular thing: a project, a product, a customer
    events: int = 1  # evidence events that use it
    key: str = ""  # lower-cased lemmas: "kessler logistik demo"
    titled: int = 0  # evidence events whose title names it: what they are about
    proper: bool = False  # written as a name throughout ("Willow Creek Care Center")
    capital: bool = False  # its first word is a name ("Lisbon spend forecast"): keeps its capital
    dated: bool = False  # the deadline's day is written against it: what is due that day


def day_words(analyses: Sequence[Analysis], anchored: Sequence[bool]) -> set[str]:
    """Head words of the phrases of the events that name the deadline's day."""
    return {
        word
        for analysis, anchor in zip(analyses, anchored, strict=False)
        if anchor
        for phrase in (*analysis.phrases, *analysis.named)
        for word in phrase.key.split()
    }


def rank_goals(
    analyses: Sequence[Analysis],
    vectors: Matrix,
    embed: Embed,
    labels: Sequence[str] = (),
    anchored: Sequence[bool] = (),
    dated: frozenset[str] = frozenset(),
    due: Sequence[Phrase] = (),
) -> list[Goal]:
    """Noun phrases of what the evidence is about, best first: the goal when no
    action is stated ("Passport renewal", "Kessler Logistik demo"). A phrase naming a
    particular thing (a project, a place, an event) is preferred: a goal has a target. A
    phrase of a thing the deadline's day is written against (``dated`` heads, see
    ``dated_heads``) is always among the candidates, and marked ``dated``; ``due`` are
    such phrases read apart from the events' own (``dated_things``: "full paper" of "full
    paper Thu 14 May"), candidates as an event that names the day uses them."""
    n = max(1, len(analyses))
    df: Counter[str] = Counter()
    forms: dict[str, Counter[str]] = {}
    lower_words: set[str] = set()
    in_anchor: set[str] = set()
    titled: Counter[str] = Counter()  # events whose title uses the phrase: what it is about
    for index, analysis in enumerate(analyses):
        phrases = (*analysis.phrases, *analysis.named)
        df.update({p.key for p in phrases})
        titled.update({p.key for p in phrases if p.in_title})
        if index < len(anchored) and anchored[index]:
            in_anchor.update(p.key for p in phrases)
        for phrase in phrases:
            forms.setdefault(phrase.key, Counter())[phrase.text] += 1
            lower_words.update(w for w in phrase.text.split() if w.islower())
    for phrase in due:
        if phrase.key not in df:  # a date read as its head: the events' phrases lack it
            df[phrase.key] = 1
            titled[phrase.key] += int(phrase.in_title)
            in_anchor.add(phrase.key)
            forms[phrase.key] = Counter({phrase.text: 1})
            lower_words.update(w for w in phrase.text.split() if w.islower())
    named_keys = {
        p.key
        for analysis in analyses
        for p in analysis.named
        if " " in p.key or not p.text[1:].islower()  # "Mika", "Lisbon": a person or a place
    }
    heads = {p.key: p.head for a in analyses for p in (*a.phrases, *a.named)}
    for phrase in due:
        heads.setdefault(phrase.key, phrase.head)
    candidates = sorted(
        (k for k in df if " " in k or k in named_keys),  # a lone common noun is no goal
        key=lambda k: (
            -(heads.get(k) in dated),
            -df[k] - (k in in_anchor) - titled[k],
            -len(k.split()),
            k,
        ),
    )[:GOAL_CANDIDATES]
    if not candidates:
        return []
    texts = [surface(forms[k].most_common(1)[0][0], lower_words) for k in candidates]
    goal_vectors = embed(texts)
    centroid = vectors.mean(axis=0) if len(vectors) else np.zeros(goal_vectors.shape[1])
    norm = float(np.linalg.norm(centroid))
    central = goal_vectors @ (centroid / norm) if norm else np.zeros(len(texts))
    label_words = _label_words(labels)
    scored = []
    for i, key in enumerate(candidates):
        first = texts[i].split()[0].lower()
        named = _is_name(texts[i]) or (first not in lower_words and zipf(first) < NAME_ZIPF)
        score = (
            float(central[i])
            + COVERAGE_WEIGHT * (df[key] - 1) / max(1, n - 1)
            + (NAMED_BONUS if named else 0.0)
            + (LABEL_WEIGHT if label_words & set(key.split()) else 0.0)
            + (ANCHOR_BONUS if key in in_anchor else 0.0)
            + (TITLE_BONUS if titled[key] else 0.0)
        )
        scored.append(
            Goal(
                score,
                texts[i],
                key in in_anchor,
                named,
                df[key],
                key,
                titled[key],
                _is_name(texts[i]),
                capital_first(texts[i], analyses),
                heads.get(key) in dated,
            )
        )
    scored.sort(key=lambda goal: (-goal.score, goal.text))
    return scored


def capital_first(text: str, analyses: Sequence[Analysis]) -> bool:
    """The phrase's first word is a name in the evidence's own writing: no phrase of the
    evidence has it in lower case, and some phrase has it capitalised where no sentence or
    title starts (after its first word: "Forecast for Lisbon", "Data Platform offsite"), or
    a name of a thing is it ("Lisbon"). "Budget request" at a title's start is no name."""
    words = text.split()
    if not words or not words[0][:1].isupper():
        return False
    first = words[0]
    lower = first.lower()
    inside = False
    for analysis in analyses:
        for phrase in (*analysis.phrases, *analysis.named):
            written = phrase.text.split()
            if lower in (w.lower() for w in written if w[:1].islower()):
                return False  # "the budget request": a common word
            inside = inside or first in written[1:]
        inside = inside or any(p.text == first for p in analysis.named)
    return inside


def _label_words(labels: Sequence[str]) -> set[str]:
    """The words of the supporting concepts' labels that say what a goal is about; a
    label that is a name of a thing ("Flux Tariffs", the project whose folder it is) says
    what the goal is for, which :meth:`Namer._with_target` adds to the title ("Send the
    review deck for Flux Tariffs"), not the goal itself ("Prepare for Flux Tariffs")."""
    words: set[str] = set()
    for label in labels:
        if _is_name(label) and all(w[:1].isupper() for w in label.split()):
            continue
        words.update(w.lower() for w in label.split())
    return words - STOPWORDS


def _is_name(text: str) -> bool:
    """Written as a name: an acronym or inner capitals first, or capitals further on
    ("GST refund", "Data Platform offsite")."""
    first, *rest = text.split()
    return (len(first) > 1 and not first[1:].islower()) or any(w[:1].isupper() for w in rest)


# ----------------------------------------------------------------- the check
def title_problem(title: str, doc: object) -> str | None:
    """Why ``title`` (without its deadline suffix) is not a to-do item, None when it is one:
    an action and its object ("Renew the passport") or a short noun phrase of a goal
    ("Passport renewal"). ``doc`` is the spaCy parse of the title with a lower-case first
    letter."""
    text = without_deadline(title).strip()
    if not text:
        return "empty"
    if "\n" in text or len(text.split()) > MAX_TITLE_WORDS:
        return "longer than a to-do item"
    if two_sentences(text):
        return "two sentences, not one to-do item"
    tokens = [t for t in doc if not t.is_punct and not t.is_space]  # type: ignore[attr-defined]
    if len(tokens) < 2:
        return "an action needs an object"
    if all(t.lower_ in CALENDAR_WORDS or t.like_num or t.lower_ in STOPWORDS for t in tokens[1:]):
        return "an action needs an object, not a date"
    first = tokens[0]
    action = first.pos_ in ("VERB", "AUX") and first.tag_ in ("VB", "VBP")
    if action and (first.lower_ not in STOPWORDS or first.lower_ in ("get", "make", "take", "go")):
        return None
    if _noun_goal(tokens):
        return None  # "Passport renewal", "Kessler Logistik demo"
    return "does not start with an action"


# a full stop after these is no sentence end ("Call Dr. Yilmaz", "Mon Dec. 7")
_ABBREVIATIONS = frozenset({"dr", "mr", "mrs", "ms", "st", "jr", "sr", "vs", "no", "prof"})
_SENTENCE_END = re.compile(r"(\w+)[.!?;:]\s+\S")


def two_sentences(text: str) -> bool:
    """A title that runs on past a sentence end ("Go for Tue Dec. Risk slide")."""
    for found in _SENTENCE_END.finditer(text):
        word = found.group(1).lower()
        if word not in _ABBREVIATIONS and word not in CALENDAR_WORDS:
            return True
        if word in CALENDAR_WORDS and text[found.end() - 1].isupper():
            return True
    return False


_GOAL_PREPS = frozenset({"of", "for"})  # "Renewal of the passport"; never "X before Y"


def _noun_goal(tokens: Sequence[Any]) -> bool:
    """A short noun phrase naming what to achieve ("Passport renewal", "Rent reduction"):
    no clause, no conjunction, and no preposition that glues two things ("before", "and")."""
    if len(tokens) > MAX_GOAL_WORDS:
        return False
    if any(t.tag_ in _FINITE or t.pos_ in ("CCONJ", "SCONJ", "PRON") for t in tokens):
        return False
    if any(t.pos_ == "ADP" and t.lower_ not in _GOAL_PREPS for t in tokens):
        return False
    last = tokens[-1]
    return last.pos_ in ("NOUN", "PROPN") or (last.pos_ == "VERB" and last.tag_ == "VBG")


# ----------------------------------------------------------------- description
def event_name(node: Node) -> str:
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
    quoted = [f'"{event_name(e)}" ({_short_date(_when(e))})' for e in cited]
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
            line = line[:-1] + f', from "{event_name(deadline_source)}".'
        text = f"{text}\n{line}"
    return text


def _join(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"
