"""Goal signals: what in a person's events says they have a goal, not just a topic.

An intent (docs/DESIGN.md section 5) is something the person means to get done. The words of
one event say little, but three kinds of evidence are hard to mistake, in any register (a
calendar entry, a formal email, a chat message):

- **a date ahead**: the event names a date after its own time (a deadline cue such as "by",
  "due", "before" makes it a deadline);
- **a commitment**: first-person obligation, plan or goal ("I will", "I'll", "we need to", "have
  to", "must", "going to", "plan to", "we're planning", "I hope to", "my goal is to"), an
  arrangement made (a booking, an appointment, a reservation, a registration, something
  scheduled or confirmed; "book" and "register" only as verbs: "a book" is something to
  read), or a request to act ("please confirm", "can you send", "remind me", "don't
  forget"); not an inference ("that must have taken a lot of skill"), nor what reminds
  someone ("moments like these remind us"), nor a negated one ("I don't have to");
- **a problem**: something broken, failing, late, hurting, blocked or complained about, or a
  symptom of the body (swollen, sore, a flare, an injury, a fever). Once is an incident;
  coming back on other days, it is a problem the person keeps returning to.

A social formula (what friends say to part, thank, reassure or encourage: "I have to go!",
"take care", "no problem", "I'll keep you posted", "keep it up, you'll make a difference";
``lexicon.SOCIAL_FORMULAS``) is neither: its words are left out before the cues are read
(``without_formulas``), and a verb inside one is no to-do (``naming/phrases.py``).

Three more cues say how a goal stands (``topologies/intents.py`` reads them in an event about
an intent's goal):

- **done** ("sent", "submitted", "paid", "finished", "went well", "thank you all"): dated on or
  after the intent's deadline, the occasion has come and the evidence says it happened, so the
  intent is resolved; in the person's own words before it, beside the day the rest happens
  ("Done! Ready for pick-up from 24 Nov"), their step is done and the rest is scheduled
  (``done_reports``: what the event reports done, to tell whose goal's step it was);
- **decided**: a decision was taken ("GO for 1 Dec", "approved", "decided"): on or after the
  deadline, what was due (a review, a go/no-go) has its outcome, whatever it set for later;
- **moved**: a date was moved ("postponed to", "rescheduled", "moving ... to"): a deadline that
  has passed moves on only with such an event, not to a later date of the same theme; one
  still ahead moves to the day such a sentence names after its cue (``date_move``) when it is
  the goal's day or thing that was moved.

``event_signals`` reads one event (a few regular expressions over a bounded text); the engine
computes it once, at ingest, and keeps it with the EVENT node (``attrs["goal_cues"]``, like the
content fingerprint), so intent emergence reads cues without parsing text again
(``cached_signals``; nodes stored before this existed are parsed on demand). ``GoalEvidence``
aggregates the cues of a cluster's evidence events into the score intent emergence requires
(``topologies/intents.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING

from schemas.graph import Node
from topologies.lexicon import CALENDAR_WORDS, SOCIAL_FORMULAS, STOPWORDS
from topologies.text import find_dates

if TYPE_CHECKING:
    from spacy.tokens import Token

MAX_TEXT = 4000  # characters of an event read for cues

_COMMIT = re.compile(
    r"\b(?:(?:i|we)\s*(?:'ll|’ll|will|shall|must|should|need to|needs to|have to|has to|"
    r"'ve got to|’ve got to|got to|gotta|am going to|'m going to|’m going to|are going to|"
    r"'re going to|’re going to|plan to|intend to|hope to|promised to|agreed to|want to get|"
    r"am planning|'m planning|’m planning|are planning|'re planning|’re planning)|"
    r"(?:my|our) goal (?:is to|of)|"
    r"need to|needs to|have to|has to|must|going to|plan to|planning to|"
    r"plan is to|"
    r"to-?do|action items?|follow[- ]up|remind(?:er|ed)?|don't forget|do not forget|"
    r"make sure|deadline|due|sign[- ]?up|signed up|register(?:ed)?|registration|enrol(?:l)?ed|"
    r"book(?:ed|ing)?|reserv(?:ed|ation)|appointment|scheduled|rescheduled|"
    r"confirm(?:s|ed|ing)?|please [a-z]+|"
    r"(?:can|could|would) you (?:please )?(?:send|confirm|review|sign|book|approve|pay|"
    r"submit|check|call|look))\b",
    re.IGNORECASE,
)
_PROBLEM = re.compile(
    r"\b(?:problems?|issues?|broken|broke|breaks|fail(?:s|ed|ing|ure)?|errors?|bugs?|"
    r"leak(?:s|ed|ing)?|damaged?|pain(?:ful)?|hurts?|hurting|ache|aching|cracked|"
    r"swelling|swollen|swells|sore(?:ness)?|flare(?:s|d|-ups?)?|inflam(?:ed|mation)|"
    r"injur(?:y|ies|ed)|sprain(?:ed|s)?|fever|nause(?:a|ous)|infect(?:ed|ion)|insomnia|"
    r"blocked|blockers?|stuck|overdue|late|delay(?:ed|s)?|slipp(?:ed|ing)|complain(?:t|ed|ts)?|"
    r"urgent|risk(?:s|y)?|outage|down again|not working|doesn't work|still not|escalat(?:e|ed|ion)|"
    r"conflict|dispute|worse|worried|stalled|missed|flaky|timed out|time-?outs?|"
    r"crash(?:es|ed|ing)?|regressions?|(?:went|turned) red|incidents?|sev-?[0-9]|"
    r"roll(?:ed|ing)? ?back|rollbacks?)\b",
    re.IGNORECASE,
)

# a social formula ("I have to go!", "take care", "no problem", "I'll keep you posted"):
# politeness, not a goal or a problem of anyone's (``without_formulas``)
_FORMULA = re.compile(r"\b(?:" + "|".join(SOCIAL_FORMULAS) + r")\b", re.IGNORECASE)

_DONE = re.compile(
    r"\b(?:done|finished|completed|sent|submitted|filed|delivered|paid|signed|"
    r"handed (?:in|over)|took place|went (?:well|great|fine|smoothly)|was (?:great|a success)|"
    r"(?:we|i) (?:did it|made it|got it|finished|passed)|passed|thanks? (?:you )?(?:all|everyone|"
    r"so much)|thank you)\b",
    re.IGNORECASE,
)


# a decision taken: "GO" written as a verdict (in capitals), "approved", "decided"
_DECIDED = re.compile(
    r"\bGO\b|(?i:\b(?:approved|decided|decision (?:is|was) (?:taken|made)|green light|"
    r"it'?s a go)\b)"
)
# a sentence that only weighs a decision: a recommendation, a proposal, a condition
_TENTATIVE = re.compile(
    r"\b(?:recommend\w*|propos\w*|suggest\w*|if|unless|whether|would|should|could|means|"
    r"might|may|expect\w*|hope\w*)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"[^.!?;\n]+")
_MOVED = re.compile(
    r"\b(?:moved|moves|moving|postponed?|postponing|rescheduled|rescheduling|pushed back|"
    r"pushed to|extended|delayed to|"
    r"new date|now due|instead of)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Signals:
    """Goal cues of one event."""

    ahead: datetime | None = None  # the latest date mentioned after the event time
    deadline: bool = False  # a deadline cue precedes a date ahead
    commitment: bool = False
    problem: bool = False
    done: bool = False  # says something was reached or happened (not a goal cue by itself)
    decided: bool = False  # says a decision was taken ("GO for 1 Dec", "approved")
    moved: bool = False  # says a date was moved ("postponed to 30 Nov")

    @property
    def any(self) -> bool:
        return self.ahead is not None or self.commitment or self.problem


def event_signals(node: Node) -> Signals:
    """Goal cues in one EVENT node's title and text, dates resolved against its time."""
    text = f"{node.title}\n{node.text}"[:MAX_TEXT]
    ahead: datetime | None = None
    deadline = False
    if node.ts is not None:
        for mention in find_dates(text, node.ts):
            if mention.when.date() > node.ts.date():
                ahead = mention.when if ahead is None else max(ahead, mention.when)
                deadline = deadline or mention.deadline
    meant = without_formulas(text)
    return Signals(
        ahead=ahead,
        deadline=deadline,
        commitment=_commits(meant),
        problem=_PROBLEM.search(meant) is not None,
        done=_DONE.search(text) is not None,
        decided=_decided(text),
        moved=_MOVED.search(text) is not None,
    )


def _commits(text: str) -> bool:
    """A commitment cue in the text, a word English writes both as a noun and as a verb
    counting only where it is the verb: "I need to book a table" is an arrangement, "a
    book with a red cover" or "Harry Potter is my favorite book" is none; and not a cue
    the writer asks the person addressed about: "So, where are you going to stay?" is
    their plan, if any, and no commitment of anyone's (a request, "Can you send ...?",
    stays one). A word that needs the parse is parsed only when no other cue commits."""
    cues = [
        cue
        for cue in _COMMIT.finditer(text)
        if not _asked_of_you(text, cue) and not _negated(text, cue)
    ]
    return any(_cue_holds(text, cue) for cue in sorted(cues, key=_needs_parse))


# a negation right before a cue, an adverb at most between: "I don't have to stress about
# it", "we do not need to book", "I'm not going to", "you never have to"
_NOT_BEFORE = re.compile(
    r"\b(?:not|never|no longer|(?:do|does|did|wo|would|should|could)n['’]?t|cannot|can['’]?t)"
    r"\s+(?:\w+ly\s+)?$",
    re.IGNORECASE,
)


def _negated(text: str, cue: re.Match[str]) -> bool:
    """The cue is negated: no obligation, plan or need ("Finally, I don't have to stress
    about it, so I can just enjoy my movies and games": a relief, and no goal of the
    games). A cue that is itself a negated imperative ("don't forget") stays a request."""
    return _NOT_BEFORE.search(text[: cue.start()]) is not None


def _needs_parse(cue: re.Match[str]) -> bool:
    """The cue word says what it means only in its sentence's parse (``_cue_holds``)."""
    word = cue.group().lower()
    return bool(_NOUN_OR_VERB.fullmatch(word)) or word.endswith("must") or word in _REMIND_VERBS


def _cue_holds(text: str, cue: re.Match[str]) -> bool:
    """The cue word says what English means by it here: "book" or "register" as a verb
    (``_is_verb_at``), "must" as an obligation (``_obliges``), "remind" as a request
    (``_asks_to_remind``); any other cue as it is written."""
    word = cue.group().lower()
    if _NOUN_OR_VERB.fullmatch(word):
        return _is_verb_at(text, cue.start())
    if word.endswith("must"):
        return _obliges(text, cue.end() - len("must"))
    if word in _REMIND_VERBS:
        return _asks_to_remind(text, cue.start())
    return True


# the end of a question's words before its cue that make "you" its subject: "are you
# going to", "do you really need to"
_YOU_BEFORE = re.compile(r"\byou\s+(?:\w+\s+)?$", re.IGNORECASE)
# ... unless a modal of request asks it: "Can you remind me to renew the passport?", "could
# you please register us": what the writer asks the person addressed to do for them
_REQUEST_BEFORE = re.compile(r"\b(?:can|could|would|will)\s+you\s+(?:\w+\s+)?$", re.IGNORECASE)


def _asked_of_you(text: str, cue: re.Match[str]) -> bool:
    """The cue is in a question, with "you" as its subject ("Are you going to ...?"), and
    the question asks for their plan, not a favour ("Can you remind me to ...?")."""
    start = max(text.rfind(mark, 0, cue.start()) for mark in ".!?;\n") + 1
    end = min((at for at in (text.find(m, cue.end()) for m in ".!?;\n") if at >= 0), default=-1)
    if end < 0 or text[end] != "?":
        return False
    before = text[start : cue.start()]
    return _YOU_BEFORE.search(before) is not None and _REQUEST_BEFORE.search(before) is None


# commitment cues that are nouns as often as verbs: the parse tells which (``_is_verb_at``)
_NOUN_OR_VERB = re.compile(r"book|register", re.IGNORECASE)


def _is_verb_at(text: str, start: int) -> bool:
    """The word at ``start`` is a verb in its sentence: by spaCy's part-of-speech tag, or
    as English has it where the small tagger errs on imperatives ("Book the flights" read
    as a name): a noun is never followed directly by an article, a possessive or an object
    pronoun, a verb takes its object so ("book a table", "book our tickets", "book it"); a
    word the parse gives a subject or an auxiliary is a verb whatever its tag ("Should I just
    book tonight?", tagged a noun); and a note opening with the word is an order, whose
    object a note writes without its article (``_opens_note``)."""
    word = _word_at(text, start)
    if word is None:
        return False
    after = word.nbor() if word.i + 1 < len(word.doc) else None
    takes_object = after is not None and (
        after.tag_ in ("DT", "PRP$") or after.lower_ in _OBJECT_PRONOUNS
    )
    clause = any(c.dep_ in ("aux", "nsubj") for c in word.children)
    verb = word.pos_ in ("VERB", "AUX") or clause or takes_object
    return verb or _opens_note(word)


def _obliges(text: str, start: int) -> bool:
    """The "must" at ``start`` is the modal of obligation ("I must renew my passport", "the
    crown must be cemented", "all authors must have complete profiles"), not an inference
    about what has happened, its perfect ("That must have taken a lot of skill", "Seeing
    your old friend must have brought back so many memories") or a guess at a feeling
    (``_feeling_guessed``), nor the noun or the first
    part of a compound adjective ("Taking initiative is a must", "a must-visit city"). In
    LoCoMo-10 chat these made two days of small talk a commitment, and a topic a goal."""
    if text[start + len("must") : start + len("must") + 1] == "-":
        return False
    word = _word_at(text, start)
    if word is None or word.tag_ != "MD":
        return False
    verb = word.head
    perfect = verb.tag_ == "VBN" and any(
        aux.lemma_ == "have" and aux.i > word.i for aux in verb.children
    )
    return not perfect and not _feeling_guessed(verb)


def _feeling_guessed(verb: Token) -> bool:
    """A "must be" with an adjective of how one feels about a thing guesses at an
    experience ("imagining how your music affects others must be incredible", "you must be
    proud"), where an obligation sets a condition ("your passport must be valid for six
    months")."""
    from topologies.naming.phrases import EVALUATIVE  # the parser's module reads goals

    return verb.lemma_ == "be" and any(
        c.dep_ == "acomp" and c.lower_ in EVALUATIVE for c in verb.children
    )


def _asks_to_remind(text: str, start: int) -> bool:
    """The "remind" at ``start`` asks for a reminder, in its base form: an imperative
    ("Remind me to call the dentist") or asked of "you" ("Can you remind me ...?"); one
    that tells what reminds someone ("They always remind me to slow down", "Moments like
    these remind us ...") or that someone was reminded ("It's good to be reminded to
    appreciate the small things") reports, and asks nothing. A "reminder" is read as it
    is written."""
    word = _word_at(text, start)
    if word is None or word.tag_ != "VB":
        return False
    return all(
        child.lower_ in ("you", "i", "we")
        for child in word.children
        if child.dep_ in ("nsubj", "nsubjpass")
    )


def _word_at(text: str, start: int) -> Token | None:
    """The token that starts at ``start`` in the parse of its one sentence: only that
    sentence is parsed, and only for the few cue words that need it, so reading an event's
    cues stays a matter of regular expressions."""
    from topologies.naming.phrases import load_pipeline  # the parser's module reads goals

    for match in _SENTENCE.finditer(text):
        if match.start() <= start < match.end():
            doc = load_pipeline()(match.group(), disable=["ner"])
            at = start - match.start()
            return next((t for t in doc if t.idx == at), None)
    return None


def _opens_note(word: Token) -> bool:
    """The word opens its sentence (or the text after a "Note:" / "TODO:") and goes on as an
    order a note writes without articles: a plural ("Book flights to Lisbon", "Book
    tickets") or a thing and what it is for ("book restaurant for Mum's birthday"). The
    small tagger reads such a word as a noun, and a name of a thing ("Book club on
    Thursday", "My book club") goes on otherwise."""
    doc = word.doc
    before = [t for t in doc[: word.i] if not t.is_space]
    if before and not (before[-1].is_punct and before[-1].text != ","):
        return False
    rest = [t for t in doc[word.i + 1 :] if not t.is_space]
    if not rest:
        return False
    if rest[0].tag_ == "NNS":
        return True
    return rest[0].pos_ == "NOUN" and len(rest) > 1 and rest[1].lower_ == "for"


_OBJECT_PRONOUNS = frozenset({"it", "me", "us", "them", "him"})
_REMIND_VERBS = frozenset({"remind", "reminded"})  # "reminder" is read as it is written


def without_formulas(text: str) -> str:
    """The text with its social formulas blanked out: what friends say to part, thank,
    reassure or encourage ("Well, I have to go! Take care!", "No problem", "I'll keep you
    posted", "keep it up, you'll make a difference") states no commitment and no problem,
    however much its words look like one. Months of chat end every talk so: read as goal
    cues, the goodbyes of three days made "Take care" a goal (LoCoMo-10)."""
    return _FORMULA.sub(" ", text)


def formula_spans(text: str) -> list[tuple[int, int]]:
    """Where the text's social formulas are (start, end): an action inside one is
    politeness, no to-do ("Take care!", "make a difference")."""
    return [match.span() for match in _FORMULA.finditer(text)]


@dataclass(frozen=True)
class Move:
    """A date an event says something was moved to ("Moving the multi-depot demo to Tuesday
    28 April"): the new date, the day it was moved from when the sentence names it ("from
    Mon 9 Nov"), and the words of what was moved ("multi-depot", "demo")."""

    to: datetime
    from_day: date | None
    thing: frozenset[str]


# a sentence that weighs a move rather than states it
_HEDGED = re.compile(
    r"\b(?:if|unless|whether|would|could|might|maybe|perhaps|possibly|worst case)\b",
    re.IGNORECASE,
)
_FROM = re.compile(r"\bfrom\s*$", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][\w'’-]+")
_PART = re.compile(r"[^,:(–—|]+")


def date_move(node: Node) -> Move | None:
    """The move of a date an event states in one sentence: a move cue, then the first date
    after the event time that follows the cue and is not the one moved from; not in a
    sentence that only weighs it ("if it slips", "worst case it moves to Mon 16 Nov": ``_HEDGED``).
    The moved thing is what the sentence names
    between the cue and the new date, else in its part before the cue ("the go/no-go review
    was postponed to 26 Nov")."""
    if node.ts is None:
        return None
    text = f"{node.title}\n{node.text}"[:MAX_TEXT]
    for sentence in sentences(text):
        cue = _MOVED.search(sentence)
        if cue is None or _HEDGED.search(sentence):
            continue
        moved_from: date | None = None
        for mention in find_dates(sentence, node.ts):
            at = sentence.find(mention.phrase, cue.end())
            if at < 0:
                continue
            if _FROM.search(sentence[:at]):
                moved_from = mention.when.date()
                continue
            if mention.when.date() <= node.ts.date():
                continue
            between = sentence[cue.end() : at]
            parts = _PART.findall(sentence[: cue.start()])
            thing = content_words(between) or content_words(parts[-1] if parts else "")
            return Move(mention.when, moved_from, thing)
    return None


def sentences(text: str) -> list[str]:
    """The text's sentences and lines (split at . ! ? ; and line ends)."""
    return _SENTENCE.findall(text)


def done_reports(node: Node) -> list[str]:
    """What an event reports done, one entry per sentence that says it ("Demo went well"); a
    cue that names nothing by itself ("Done!") reports what the next sentence names ("Express
    passport, ready from 24 Nov"). Which goal's step was done is read in these, not in the
    rest of the event (the partner demo's notes also speak of the feed and the load test)."""
    parts = sentences(f"{node.title}\n{node.text}"[:MAX_TEXT])
    reports: list[str] = []
    for at, sentence in enumerate(parts):
        cue = _DONE.search(sentence)
        if cue is None:
            continue
        bare = not content_words(sentence[: cue.start()] + " " + sentence[cue.end() :])
        reports.append((parts[at + 1] if bare and at + 1 < len(parts) else sentence).strip())
    return reports


def cue_sentences(node: Node) -> list[str]:
    """The event's sentences that carry a goal cue: a commitment or a problem in its words
    (social formulas left out), or a date after the event's time. What a goal is about is
    said there ("we're planning a big family reunion next summer"), not in the sentences
    around it ("I visited a veteran's hospital and met some amazing people" before "It made
    me appreciate ... the need to give back")."""
    found = []
    for sentence in sentences(f"{node.title}\n{node.text}"[:MAX_TEXT]):
        meant = without_formulas(sentence)
        if _COMMIT.search(meant) or _PROBLEM.search(meant) or _dated_ahead(sentence, node):
            found.append(sentence)
    return found


def reports_problem(sentence: str) -> bool:
    """The sentence reports a problem (``Signals.problem``), social formulas left out."""
    return _PROBLEM.search(without_formulas(sentence)) is not None


def commits(sentence: str) -> bool:
    """The sentence states a commitment (``Signals.commitment``), social formulas left out."""
    return _commits(without_formulas(sentence))


def _dated_ahead(sentence: str, node: Node) -> bool:
    """The sentence names a day after the event's own."""
    if node.ts is None:
        return False
    return any(m.when.date() > node.ts.date() for m in find_dates(sentence, node.ts))


def content_words(text: str) -> frozenset[str]:
    """Lower-cased words of a phrase that name a thing: no stopword, calendar word or cue."""
    words = {w.lower() for w in _WORD.findall(text)}
    return frozenset(w for w in words - STOPWORDS - CALENDAR_WORDS if _MOVED.fullmatch(w) is None)


def _decided(text: str) -> bool:
    """A sentence says a decision was taken ("We have a GO for Tue 1 Dec"), not only weighed
    ("Recommendation: GO for Tue 1 Dec", "All four green means GO")."""
    return any(
        _DECIDED.search(sentence) is not None and _TENTATIVE.search(sentence) is None
        for sentence in sentences(text)
    )


CUES_ATTR = "goal_cues"
# the rules' version the stored cues were read by: bumped whenever the cues read differently
# (2: social formulas are no commitment nor problem; 3: "book" or "register" as a noun, or a
# cue asked of "you" in a question, is no commitment; 4: a favour asked ("Can you remind me
# to ...?"), a note opening with "book" ("Book flights") and "the plan is to" are; 5: an
# inferring "must", the noun "a must" and a "remind" that reports are no commitment, "I hope
# to" and "my goal is to" are; 6: "we're planning" a thing is; 7: a negated cue, "I don't
# have to", is none); cues of another version are read again when a memory is loaded
# (``current_cues``), so an upgraded store never scores goals by cues the rules no longer give
CUES_VERSION = 7


def signals_attr(signals: Signals) -> dict[str, object]:
    """The JSON form kept in an EVENT node's attrs."""
    return {
        "version": CUES_VERSION,
        "ahead": None if signals.ahead is None else signals.ahead.isoformat(),
        "deadline": signals.deadline,
        "commitment": signals.commitment,
        "problem": signals.problem,
        "done": signals.done,
        "decided": signals.decided,
        "moved": signals.moved,
    }


def current_cues(node: Node) -> Node:
    """The node, with its goal cues read again when they were stored by other rules than
    today's (an EVENT stored before an upgrade); any other node as it is."""
    stored = node.attrs.get(CUES_ATTR)
    if not isinstance(stored, dict) or stored.get("version") == CUES_VERSION:
        return node
    cues = signals_attr(event_signals(node))
    return node.model_copy(update={"attrs": {**node.attrs, CUES_ATTR: cues}})


def cached_signals(node: Node) -> Signals:
    """The cues stored at ingest, or computed now for a node stored without them."""
    stored = node.attrs.get(CUES_ATTR)
    if not isinstance(stored, dict):
        return event_signals(node)
    ahead = stored.get("ahead")
    return Signals(
        ahead=datetime.fromisoformat(ahead) if isinstance(ahead, str) else None,
        deadline=bool(stored.get("deadline")),
        commitment=bool(stored.get("commitment")),
        problem=bool(stored.get("problem")),
        done=bool(stored.get("done")),
        decided=bool(stored.get("decided")),
        moved=bool(stored.get("moved")),
    )


def says_moved(node: Node) -> bool:
    """``cached_signals(node).moved``, read without the other cues: a goal's latest events
    are asked at every reinforcement whether they move a date."""
    stored = node.attrs.get(CUES_ATTR)
    if not isinstance(stored, dict):
        return event_signals(node).moved
    return bool(stored.get("moved"))


@dataclass
class GoalEvidence:
    """Goal cues over a set of evidence events."""

    events: int = 0
    ahead: set[str] = field(default_factory=set)  # events naming a date ahead
    deadlines: set[str] = field(default_factory=set)
    commitments: set[str] = field(default_factory=set)
    problems: set[str] = field(default_factory=set)
    problem_days: set[str] = field(default_factory=set)
    commitment_days: set[str] = field(default_factory=set)
    sources: set[str] = field(default_factory=set)

    def add(self, node: Node, signals: Signals) -> None:
        self.events += 1
        day = (node.ts or node.created_at).date().isoformat()
        if node.source:
            self.sources.add(node.source)
        if signals.ahead is not None:
            self.ahead.add(node.id)
            if signals.deadline:
                self.deadlines.add(node.id)
        if signals.commitment:
            self.commitments.add(node.id)
            self.commitment_days.add(day)
        if signals.problem:
            self.problems.add(node.id)
            self.problem_days.add(day)

    @property
    def score(self) -> float:
        """How strongly the evidence says "goal": planned (a date ahead and a commitment in
        one event: a dated schedule alone, "aspirin until May 14", is no goal), committed to
        on several days, or a problem returning on several days. Each kind counts 0-1; two
        sources or more add a quarter (several channels converge on it)."""
        committed_dates = self.ahead & self.commitments
        planned = min(1.0, len(committed_dates) / 2 + len(self.deadlines & committed_dates) / 2)
        committed = min(1.0, max(0, len(self.commitment_days) - 1) / 2)
        recurring = min(1.0, max(0, len(self.problem_days) - 1) / 2)
        converging = 0.25 if len(self.sources) >= 2 else 0.0
        return planned + committed + recurring + converging
