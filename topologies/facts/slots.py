"""Subject and attribute slots of a statement: whom it is about, which attribute, its topic.

A belief is revised when the same holder says something new about the same attribute of the
same topic, whatever the wording: "three espressos a day, minimum" and, months later,
"swapped the decaf for matcha". Whole-sentence similarity misses that; these slots catch it:

- **holder**: who the statement is about. A sentence with a first-person word (I, my, we, ...)
  or with no subject of its own ("cutting down to one cup") is about its author: the event's
  sender (``attrs.from``, a chat participant) or, without one, the stream's owner. "My sister
  ..." is about the author's sister; a sentence opening on a name ("Priya left Stripe") is
  about that name; one opening on he / she / they / you is about someone unresolved and never
  revises anything.
- **attributes**: which attribute of the holder the statement sets, from a small general
  taxonomy of life attributes that hold one value at a time (where one lives, work, studies,
  relationship, what one eats or drinks, exercise, sleep, commute, health, possessions,
  money, plans, the date or status of a thing, tastes). A statement may set several.
- **topic**: the sentence without function words, revision cues, quantities and dates
  ("three espressos a day, minimum" -> "espressos"); the reconciler compares topics, not
  sentences.
- **cue**: how strongly the sentence says something changed (2: "switched", "instead", "no
  longer", "moved to", "postponed"; 1: "now", "these days"; 0: none).
- **mode**: a question, a hypothetical ("if", "maybe one day", "I'd love to"), a past habit
  ("used to", "back in school") or a dated happening without a change cue ("I joined a gym
  last week") states no current belief: such items never revise one.

Every function is a pure function of its input (no model); the word families are closed-class
English, not tuned to particular statements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from topologies.text import extract_entities, is_content_word, tokens, zipf

Mode = Literal["", "question", "hypothetical", "past", "episode"]

SELF = "self"


@dataclass(frozen=True)
class Slots:
    author: str  # who wrote the event ('' = the stream's owner)
    holder: str  # "self:<author>", "rel:<author>:<relation>", "name:<name>", "" (unresolved)
    attributes: frozenset[str]
    topic: str
    cue: int  # 0 none, 1 weak, 2 strong
    mode: Mode
    names: frozenset[str]  # proper names and rare words: strong evidence of the same subject

    @property
    def asserts(self) -> bool:
        """A current belief of a known holder (not a question, hypothetical or past habit)
        about something ("I love it!" names nothing)."""
        return bool(self.holder) and not self.mode and bool(self.topic)

    def to_attrs(self) -> dict[str, Any]:
        return {
            "author": self.author,
            "holder": self.holder,
            "attributes": sorted(self.attributes),
            "topic_phrase": self.topic,
            "cue": self.cue,
            "mode": self.mode,
            "names": sorted(self.names),
        }

    @classmethod
    def from_attrs(cls, attrs: dict[str, Any]) -> Slots | None:
        if "holder" not in attrs:
            return None
        return cls(
            author=str(attrs.get("author", "")),
            holder=str(attrs.get("holder", "")),
            attributes=frozenset(attrs.get("attributes") or ()),
            topic=str(attrs.get("topic_phrase", "")),
            cue=int(attrs.get("cue", 0)),
            mode=attrs.get("mode", "") or "",
            names=frozenset(attrs.get("names") or ()),
        )


def _family(*words: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(words) + r")\b", re.I)


# ------------------------------------------------------------------------- holder

_LEAD = re.compile(
    r"^(?:(?:oh|ok|okay|so|well|btw|also|and|but|update|news|anyway|honestly|lately|yeah|yes|"
    r"no|wow|haha|lol|fyi|ps|quick update|small update|big news|guess what)\b[\s,:;!.\-]*)+",
    re.I,
)
_FIRST_PERSON = _family(
    r"i", r"i'm", r"i've", r"i'd", r"i'll", r"im", r"me", r"my", r"mine", r"myself", r"we",
    r"we're", r"we've", r"we'll", r"we'd", r"our", r"ours", r"us", r"the user", r"the user's",
)  # fmt: skip
_RELATIONS = (
    r"sister|brother|sibling|siblings|mum|mom|mother|dad|father|parents|wife|husband|partner|"
    r"boyfriend|girlfriend|fianc[ée]e?|son|daughter|kids|kid|children|child|baby|friend|"
    r"best friend|boss|manager|colleague|coworker|co-worker|roommate|flatmate|housemate|"
    r"neighbou?r|grandma|grandmother|grandpa|grandfather|granny|aunt|uncle|cousin|niece|nephew|"
    r"in-laws|stepdad|stepmom|stepmother|stepfather|ex"
)
_RELATION_SUBJECT = re.compile(
    r"^(?:my|our|the user's)\s+(?:(?:older|younger|little|big|best|old|new|eldest|youngest)\s+)?"
    rf"(?P<rel>{_RELATIONS})\b(?:,?\s+(?P<name>[A-Z][\w'\-]+))?"
)
# a capitalised first word followed by one of these is a verb ("Upped the budget"), not a name
_VERB_OBJECT = frozenset(
    {"the", "a", "an", "my", "our", "his", "her", "their", "this", "that", "these", "those"}
    | {"it", "them", "up", "out", "off", "down"}
)
_SECOND_PERSON = _family(r"you", r"your", r"you're", r"you've", r"you'll", r"yours", r"u", r"ur")
# an impersonal sentence that says how things are in general, not how the author's are
_GENERIC = re.compile(
    r"^(?i:it|it's|that|that's|this|there|there's|what|how|such|everyone|everybody|people|"
    r"nothing|something|life|must|sounds|looks|seems)\b|\b(?i:can|could|must|should)\b|\bmay\b",
)  # case-sensitive "may": "2 May" is a date
_BRACKETED = re.compile(r"\[[^\]]*\]")
_OTHER_SUBJECT = re.compile(
    r"^(?:he|she|they|his|her|their|he's|she's|they're|they've|you|your|you're|you've|you'll|"
    r"u|ur)\b",
    re.I,
)


def author_of(source: str, participants: list[str], attrs: dict[str, Any]) -> str:
    """Who wrote an event: its sender (``attrs.from``, a chat's first participant), else ''
    (the stream's owner: notes, calendar entries, the owner's own chat without a name)."""
    sender = attrs.get("from")
    if isinstance(sender, str) and sender.strip():
        return _person_key(sender)
    if source == "chat" and participants:
        return _person_key(participants[0])
    return ""


def _person_key(name: str) -> str:
    name = re.sub(r"<[^>]*>", " ", name).strip(" \"'")
    return " ".join(name.lower().split())[:60]


def strip_lead(sentence: str) -> str:
    return _LEAD.sub("", sentence.strip()).strip()


def names_in(sentence: str) -> frozenset[str]:
    """Proper names of a sentence (single words, lower case): "Halcyon", "Priya", "TU Delft"."""
    out: set[str] = set()
    for entity in extract_entities(sentence):
        kind, _, value = entity.partition(":")
        if kind in {"name", "ticket", "mention"}:
            out.update(value.split())
    return frozenset(w for w in out if len(w) > 1)


def holder_of(sentence: str, author: str) -> str:
    """Whom the sentence is about (see the module docstring)."""
    text = strip_lead(sentence)
    relation = _RELATION_SUBJECT.match(text) or _RELATION_SUBJECT.match(text[:1].lower() + text[1:])
    if relation:
        rel = relation.group("rel").lower()
        name = relation.group("name")
        return f"rel:{author}:{rel}" + (f":{name.lower()}" if name else "")
    if _FIRST_PERSON.search(text):
        return f"{SELF}:{author}"
    if _OTHER_SUBJECT.match(text) or _SECOND_PERSON.search(text) or _GENERIC.search(text):
        return ""
    first = tokens(text[:60])
    if first and text.startswith(first[0]) and first[0][:1].isupper():
        word = first[0].lower()
        verb_first = len(first) > 1 and first[1].lower() in _VERB_OBJECT
        if not verb_first and word in names_in(text) and zipf(word) < 3.5:
            return f"name:{word}"
    return f"{SELF}:{author}"


def holders_compatible(a: Slots, b: Slots) -> bool:
    """Same holder, or a named holder the other (first-person or named) statement mentions."""
    if not a.holder or not b.holder:
        return False
    if a.holder == b.holder:
        return True
    return any(
        x.holder.startswith("name:") and not y.holder.startswith("rel:") and x.holder[5:] in y.names
        for x, y in ((a, b), (b, a))
    )


# --------------------------------------------------------------------------- mode

_QUESTION_START = re.compile(
    r"^(?:(?:what|when|where|who|why|how|which)\s+(?:\w+\s+)?"
    r"(?:do|does|did|is|are|was|were|should|would|can|could|will)|"
    r"(?:should|would|could|can|do|does|did|is|are|was|were|will|shall|isn't|aren't|don't|"
    r"doesn't|wouldn't|shouldn't)\s+(?:i|you|we|they|he|she|it|there|that|this|the|my|your|our|"
    r"a|an|anyone|anybody|moving|switching|going))\b",
    re.I,
)
_HYPOTHETICAL = _family(
    r"if", r"unless", r"whether", r"would", r"wouldn't", r"i'd (?:love|like|probably|rather)",
    r"we'd (?:love|like|probably|rather)", r"might", r"someday",
    r"some day", r"one day", r"thinking (?:of|about)", r"considering", r"wondering", r"hope to",
    r"hoping to", r"wish", r"dream(?:ing)? (?:of|about)", r"in theory", r"imagine",
)  # fmt: skip
_PAST = _family(
    r"used to", r"back when", r"back in (?:school|college|uni|university|the day|the days|\d{4})",
    r"when i was", r"when we were", r"as a (?:kid|child|teenager|student)", r"years ago",
    r"in (?:high school|college|my twenties|my teens)", r"growing up", r"at uni",
)  # fmt: skip


# a dated past happening ("I joined a gym last week") reports an event, not a changed state;
# it revises a belief only when it says so ("moved to Leeds last week")
_EPISODE = _family(
    r"yesterday",
    r"last (?:week|weekend|month|night|year|time|summer|winter|spring|autumn|"
    r"fall|(?:mon|tues|wednes|thurs|fri|satur|sun)day|tues?)",
    r"ago",
    r"the other day",
    r"this morning",
    r"earlier today",
    r"since we last",
)


def mode_of(sentence: str) -> Mode:
    text = strip_lead(sentence)
    if text.rstrip().endswith("?") or _QUESTION_START.match(text):
        return "question"
    if _PAST.search(text):
        return "past"
    if _HYPOTHETICAL.search(text):
        return "hypothetical"
    if _EPISODE.search(text) and cue_of(text) < 2:
        return "episode"
    return ""


# ---------------------------------------------------------------------------- cue

_OBJECT_PRONOUN = r"(?:me|us|him|her|them|myself|ourselves|you|it)"
_STRONG_CUE = _family(
    r"switch(?:ed|ing)?(?! off| on| up| it up)", r"swap(?:ped|ping)?", r"instead",
    r"no longer", r"not anymore", r"anymore", r"any more", r"changed my mind", r"gave up",
    r"give up", r"giving up", r"quit", r"stopped", r"dropped(?! off| by| in)", r"ditched",
    r"cancel(?:l)?ed", r"scrapped", r"called off", r"is off", r"moved to", r"moving to",
    r"moves to", r"relocat\w*", r"postponed?", rf"pushed(?! {_OBJECT_PRONOUN})",
    r"reschedul\w*", r"delayed", r"slipped", r"brought forward", r"cut(?:ting)? (?:down|back)",
    r"down to (?=\d|a |an |one |two |three |just |only |about |around )", r"upped",
    r"(?<!give )(?<!gave )(?<!get )(?<!got )(?<!me )(?<!thinking )(?<!looking )"
    r"back to(?! normal| life| you| me| us)",
    r"(?<!look )(?<!looking )back on", r"back in", r"replaced", r"(?<=\w )after all",
    r"from now on",
    r"new (?:target|date|plan|rule)", r"resigned", r"handed in my notice", r"sold", r"paused",
    r"resumed", r"broke up", r"split up", r"not even", r"these days", r"now",
)  # fmt: skip
_WEAK_CUE = _family(
    r"now", r"these days", r"lately", r"currently", r"right now", r"at the moment", r"started",
    r"starting",
)  # fmt: skip
_NEGATED = re.compile(
    r"\b(?:not|never|won't|don't|didn't|can't|cannot|wouldn't)\s+(?:\w+\s+)?$", re.I
)


# an elliptic return at the head of a sentence: "Coffee again, but decaf", "Relocated again"
_RETURN = re.compile(r"^\W*[\w'\-]+(?:\s[\w'\-]+)?\s+again\b", re.I)


def cue_of(sentence: str) -> int:
    """2: says something changed ("switched", "instead"); 1: says how things are now; 0."""
    if _RETURN.match(strip_lead(sentence)):
        return 2
    strong = {
        m.group(0).lower()
        for m in _STRONG_CUE.finditer(sentence)
        if not _NEGATED.search(sentence[: m.start()])  # "I won't quit" changes nothing
    }
    strong -= {"now", "these days"}
    if strong:
        return 2
    return 1 if _WEAK_CUE.search(sentence) else 0


# ---------------------------------------------------------------------- attributes

ATTRIBUTES: dict[str, re.Pattern[str]] = {
    "residence": _family(
        r"live[sd]?",
        r"living",
        r"moved",
        r"moving",
        r"relocat\w*",
        r"based in",
        r"home ?town",
        r"neighbou?rhood",
    ),
    "work": _family(
        r"job",
        r"jobs",
        r"work(?:s|ing|ed)? (?:at|for|as)",
        r"employ\w*",
        r"hired",
        r"resign\w*",
        r"fired",
        r"laid off",
        r"promot\w*",
        r"career",
        r"company",
        r"intern\w*",
        r"freelanc\w*",
        r"unemploy\w*",
        r"retire\w*",
        r"handed in (?:my|his|her|their) notice",
    ),
    "studies": _family(
        r"major\w*",
        r"degree",
        r"universit\w*",
        r"college",
        r"studying",
        r"studies",
        r"semester",
        r"enrol\w*",
        r"graduat\w*",
        r"phd",
    ),
    "relationship": _family(
        r"single",
        r"dating",
        r"boyfriend",
        r"girlfriend",
        r"partner",
        r"fianc\w*",
        r"engaged",
        r"married",
        r"marry",
        r"divorc\w*",
        r"broke up",
        r"break ?up",
        r"split up",
        r"separated",
        r"relationship",
    ),
    "consumption": _family(
        r"vegetarian",
        r"vegan",
        r"pescatarian",
        r"plant-based",
        r"keto",
        r"diet",
        r"gluten",
        r"dairy",
        r"meat",
        r"sugar",
        r"carbs?",
        r"calories",
        r"fasting",
        r"meals?",
        r"eat(?:s|ing)?",
        r"ate",
        r"breakfast",
        r"lunch",
        r"dinner",
        r"food",
        r"snacks?",
        r"coffee",
        r"espressos?",
        r"lattes?",
        r"tea",
        r"caffeine",
        r"cups?",
        r"alcohol",
        r"drink(?:s|ing)?",
        r"drank",
        r"wine",
        r"beers?",
        r"sober",
        r"cigarettes?",
        r"smok\w*",
    ),
    "exercise": _family(
        r"run",
        r"runs",
        r"running",
        r"jog\w*",
        r"gym",
        r"workouts?",
        r"swim\w*",
        r"cycling",
        r"yoga",
        r"pilates",
        r"climbing",
        r"training",
        r"football",
        r"tennis",
        r"hik\w*",
        r"sports?",
        r"exercis\w*",
    ),
    "sleep": _family(
        r"sleep\w*",
        r"slept",
        r"bed",
        r"bedtime",
        r"alarm",
        r"wake",
        r"woke",
        r"naps?",
        r"insomnia",
    ),
    "commute": _family(
        r"commut\w*",
        r"to work",
        r"to the office",
        r"bus",
        r"tram",
        r"subway",
        r"metro",
        r"train",
        r"working from home",
        r"remote",
    ),
    "health": _family(
        r"injur\w*",
        r"surgery",
        r"healed",
        r"heal\w*",
        r"recover\w*",
        r"sick",
        r"ill",
        r"diagnos\w*",
        r"pregnan\w*",
        r"pain",
        r"therapy",
        r"medication",
    ),
    "possession": _family(
        r"car",
        r"drive a",
        r"bike",
        r"phone",
        r"laptop",
        r"house",
        r"flat",
        r"apartment",
        r"dog",
        r"cat",
        r"pet",
        r"bought",
        r"sold",
        r"got a",
        r"own",
    ),
    "money": _family(
        r"sav(?:e|es|ing|ings)",
        r"budget",
        r"deposit",
        r"loan",
        r"invest\w*",
        r"salary",
        r"debt",
        r"a month",
        r"per month",
        r"euros?",
        r"dollars?",
        r"pounds",
    ),
    "plan": _family(
        r"going to",
        r"plan(?:s|ned|ning)?",
        r"trip",
        r"holiday",
        r"vacation",
        r"travel\w*",
        r"visit\w*",
        r"flights?",
        r"booked",
    ),
    "schedule": _family(
        r"scheduled",
        r"planned for",
        r"booked for",
        r"set for",
        r"moved to",
        r"moves to",
        r"postpon\w*",
        r"pushed",
        r"reschedul\w*",
        r"delay\w*",
        r"slipp\w*",
        r"brought forward",
        r"deadline",
        r"due",
        r"target",
        r"launch\w*",
        r"appointment",
        r"meeting",
        r"review",
        r"wedding",
        r"date",
        r"(?:mon|tues|wednes|thurs|fri|satur|sun)day",
        r"january|february|march|april|may|june|july|august|september|october|november|december",
        r"\d{1,2}(?::\d{2})?\s?(?:am|pm)",
        r"\d{1,2}:\d{2}",
    ),
    "status": _family(
        r"approved",
        r"rejected",
        r"denied",
        r"accepted",
        r"pending",
        r"submitted",
        r"filed",
        r"waiting",
        r"cancel(?:l)?ed",
        r"called off",
        r"on hold",
        r"paused",
        r"finished",
        r"done",
        r"complete\w*",
        r"in progress",
        r"fixed",
        r"broken",
        r"signed off",
    ),
    "taste": _family(
        r"like",
        r"likes",
        r"love",
        r"loves",
        r"prefer\w*",
        r"favou?rite",
        r"hate",
        r"hates",
        r"dislike",
        r"into",
        r"hooked",
        r"obsess\w*",
        r"fan of",
        r"enjoy\w*",
        r"can't stand",
        r"tired of",
        r"sick of",
        r"listening",
        r"watching",
        r"reading",
        r"music",
        r"hobby",
    ),
}


# attributes a person has one value of at a time: any new value revises the old one
SINGLE_VALUED = frozenset({"residence", "work", "studies", "relationship", "sleep", "commute"})
# attributes a thing has one value of at a time (an event's date, an application's status):
# a new value revises the old one when the topic says it is the same thing
ONE_PER_THING = frozenset({"schedule", "status"})


def attributes_of(sentence: str) -> frozenset[str]:
    return frozenset(name for name, pattern in ATTRIBUTES.items() if pattern.search(sentence))


# -------------------------------------------------------------------------- topic

_FRAME = _family(
    r"[a-z]+days?",
    r"weekly",
    r"daily",
    r"nightly",
    r"rather",
    r"habit",
    r"minimum",
    r"maximum",
    r"least",
    r"most",
    r"usually",
    r"always",
    r"never",
    r"often",
    r"sometimes",
    r"basically",
    r"pretty",
    r"much",
    r"totally",
    r"fully",
    r"completely",
    r"officially",
    r"finally",
    r"entirely",
    r"guess",
    r"honestly",
    r"lately",
    r"currently",
    r"moment",
    r"single",
    r"zero",
    r"every",
    r"month",
    r"months",
    r"year",
    r"years",
    r"time",
    r"times",
    r"thing",
    r"things",
    r"stuff",
    r"bit",
    r"lot",
    r"lots",
    r"ones?",
    r"first",
    r"second",
    r"third",
    r"half",
    r"couple",
    r"dozen",
    r"hundred",
    r"thousand",
    r"fourteen",
    r"fifteen",
    r"twenty",
    r"thirty",
    r"ten",
    r"eight",
    r"nine",
    r"seven",
    r"like[sd]?",
    r"love[sd]?",
    r"enjoy\w*",
    r"prefer\w*",
    r"hate[sd]?",
    r"really",
    r"awesome",
    r"great",
    r"cool",
    r"nice",
    r"amazing",
    r"glad",
    r"happy",
    r"sure",
    r"wow",
)


_THE_USER = re.compile(r"\bthe user(?:'s)?\b", re.I)  # how the LLM extractor says "I"


def topic_of_sentence(sentence: str) -> str:
    """Content words without cues, quantities, dates and frame words ('' when none: the
    statement names nothing it could be a belief about)."""
    cleaned = _STRONG_CUE.sub(" ", _THE_USER.sub(" ", sentence))
    words = [w for w in tokens(cleaned) if is_content_word(w) and not _FRAME.fullmatch(w)]
    return " ".join(words)


def rare_words(sentence: str) -> frozenset[str]:
    """Names and uncommon content words ("Halcyon", "decaf", "meniscus")."""
    words = {
        w.lower()
        for w in tokens(sentence)
        if is_content_word(w) and not _STRONG_CUE.fullmatch(w) and zipf(w.lower()) < 3.6
    }
    return frozenset(words) | names_in(sentence)


def slots_of(sentence: str, author: str) -> Slots:
    sentence = _BRACKETED.sub(" ", sentence).strip()  # "[shares a photo of ...]" states nothing
    return Slots(
        author=author,
        holder=holder_of(sentence, author),
        attributes=attributes_of(sentence),
        topic=topic_of_sentence(sentence),
        cue=cue_of(sentence),
        mode=mode_of(sentence),
        names=rare_words(sentence),
    )
