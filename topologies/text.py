"""Deterministic text analysis for the heuristic planner (no model, no network).

- tokens and salient keywords (IDF from ``wordfreq``'s offline English word frequencies,
  a stopword list when the package is missing);
- concept labels drawn from a few texts (shared salient keywords or a shared noun phrase);
- a small category lexicon;
- entities (capitalised names, participants, ticket ids, emails, @mentions, threads);
- dates and deadlines relative to the event time;
- causal cues.

Everything here is a pure function of its input; nothing is loaded at import time.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from dateutil.relativedelta import relativedelta

from topologies.lexicon import CALENDAR_WORDS, LABEL_SKIP, MONTHS, STOPWORDS, WEEKDAYS, wordset
from topologies.tense import fronted_on_past_verb, past_verb_before, possessive_in_past_clause

# ------------------------------------------------------------------------- words


_TOKEN = re.compile(r"[^\W\d_][\w'\-]*[^\W_]|[^\W\d_]", re.UNICODE)


def tokens(text: str) -> list[str]:
    """Word tokens in order, with their surface form (letters first, hyphens kept inside)."""
    return _TOKEN.findall(text)


@lru_cache(maxsize=65536)
def zipf(word: str) -> float:
    """Zipf frequency of an English word (0 = unseen, 7+ = 'the'); 3.0 without wordfreq."""
    try:
        from wordfreq import zipf_frequency
    except ImportError:  # pragma: no cover - wordfreq is a declared dependency
        return 0.0 if word in STOPWORDS else 3.0
    return float(zipf_frequency(word, "en"))


def idf(word: str) -> float:
    """Salience of a word from its corpus rarity: common words ~0.5, rare words up to ~7."""
    return max(0.5, 7.5 - zipf(word.lower()))


@lru_cache(maxsize=65536)  # the same few thousand words, read by keywords, facts and slots
def is_content_word(word: str) -> bool:
    low = word.lower()
    return (
        len(low) > 2
        and low not in STOPWORDS
        and low not in CALENDAR_WORDS
        and not any(ch.isdigit() for ch in low)
    )


def keywords(text: str, k: int = 8, exclude: Iterable[str] = ()) -> list[str]:
    """The k most salient lower-cased content words (tf * idf), ties broken alphabetically."""
    skip = {w.lower() for w in exclude}
    counts = Counter(w.lower() for w in tokens(text) if is_content_word(w))
    scored = [(tf * idf(w), w) for w, tf in counts.items() if w not in skip]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [w for _, w in scored[:k]]


# ------------------------------------------------------------------------ labels


def _phrases(text: str) -> list[list[str]]:
    """Runs of content words not broken by a stopword, punctuation or a line break."""
    runs: list[list[str]] = []
    for chunk in re.split(r"[.,;:!?()\[\]\"\n/|]+", text):
        run: list[str] = []
        for word in chunk.split():
            word = word.strip("'\"*#-_")
            if word and _TOKEN.fullmatch(word) and is_content_word(word):
                run.append(word)
            else:
                if run:
                    runs.append(run)
                run = []
        if run:
            runs.append(run)
    return runs


def _surface(word: str) -> str:
    if word.isupper() and len(word) > 1:
        return word  # keep acronyms (FLX, EPEX)
    return word[:1].upper() + word[1:].lower() if word.islower() or word.istitle() else word


LABEL_IDF_CAP = 4.5  # very rare words (names, codes) should not outrank topical nouns
NAME_FACTOR = 0.3  # a word only ever seen capitalised mid-text is probably a name


def topicality(word: str) -> float:
    """How well a word names a topic: ordinary English nouns (Zipf 2.5-5.5: 'laptop',
    'budget', 'deployment') beat jargon, codes and foreign words (unseen or very rare), and
    very common words say little. Labels are read by people; 'Hiring' beats 'Agnieszka'."""
    low = word.lower()
    z = zipf(low)
    if z < 1.5:
        value = 0.25
    elif z < 2.5:
        value = 0.6
    elif z <= 5.5:
        value = 1.0
    else:
        value = 0.5
    if "-" in low or "'" in low:
        value *= 0.5
    return value


TITLE_FACTOR = 1.3  # words of a text's first line (its title) summarise it


def _label_stats(
    texts: Sequence[str], skip: set[str]
) -> tuple[Counter[str], Counter[str], Counter[tuple[str, str]], dict[str, str], set[str]]:
    doc_words: Counter[str] = Counter()
    in_title: Counter[str] = Counter()
    doc_pairs: Counter[tuple[str, str]] = Counter()
    surface: dict[str, str] = {}
    common: set[str] = set()  # words seen in lower case somewhere
    for text in texts:
        title = text.split("\n", 1)[0]
        seen_words: set[str] = set()
        seen_pairs: set[tuple[str, str]] = set()
        for run in _phrases(text):
            low = [w.lower() for w in run]
            for word, form in zip(low, run, strict=True):
                if word in skip or "_" in word:
                    continue
                surface.setdefault(word, form)
                seen_words.add(word)
                if form.islower():
                    common.add(word)
            seen_pairs.update(p for p in itertools.pairwise(low) if skip.isdisjoint(p))
        doc_words.update(seen_words)
        in_title.update({w.lower() for w in tokens(title)} & seen_words)
        doc_pairs.update(seen_pairs)
    return doc_words, in_title, doc_pairs, surface, common


def label_from_texts(texts: Sequence[str], max_words: int = 4, exclude: Iterable[str] = ()) -> str:
    """A short Title Case label: the best phrase shared by the texts, else shared keywords.

    A word scores document frequency x capped IDF, less for likely names, more when it is
    in a title; a two-word phrase found in at least two texts wins when it scores as well
    as the best single word. Ties keep the reading order of the first text.
    """
    skip = {w.lower() for w in exclude} | LABEL_SKIP
    doc_words, in_title, doc_pairs, surface, common = _label_stats(texts, skip)
    if not doc_words:
        return "Untitled"
    order = {word: i for i, word in enumerate(surface)}
    min_df = 2 if len(texts) > 1 and max(doc_words.values()) >= 2 else 1

    def score(word: str) -> float:
        value = doc_words[word] * (1.0 + 0.15 * min(idf(word), LABEL_IDF_CAP)) * topicality(word)
        if word not in common and not surface[word].isupper():
            value *= NAME_FACTOR
        if in_title[word]:
            value *= TITLE_FACTOR
        return value

    # every word competes (document frequency is part of the score), so a topical word of one
    # member can beat a name all members share
    words = sorted(doc_words, key=lambda w: (-score(w), order[w]))
    pairs = [p for p, df in doc_pairs.items() if df >= max(2, min_df) and p[0] != p[1]]
    pairs.sort(key=lambda p: (-(score(p[0]) + score(p[1])), order[p[0]], order[p[1]]))
    if pairs and score(pairs[0][0]) + score(pairs[0][1]) >= 1.2 * score(words[0]):
        chosen = list(pairs[0])
    else:
        second = words[1:2] if len(words) > 1 and score(words[1]) >= 0.8 * score(words[0]) else []
        chosen = sorted([words[0], *second][:max_words], key=lambda w: order[w])
    return " ".join(_surface(surface[w]) for w in chosen[:max_words])


# -------------------------------------------------------------------- categories

CATEGORY_LEXICON: dict[str, frozenset[str]] = {
    "work": wordset(
        "launch project meeting sync review deck deadline release roadmap client customer "
        "stakeholder sprint standup ticket bug deploy staging production migration manager "
        "team office quarterly okr presentation exec partner demo feature pricing contract"
    ),
    "health": wordset(
        "doctor dentist tooth teeth molar crown clinic appointment pain health hospital "
        "prescription physio therapy medication symptoms checkup vaccine insurance krankenkasse "
        "run running training pace marathon workout gym injury sleep"
    ),
    "travel": wordset(
        "flight flights airport hotel trip travel passport visa booking train luggage holiday "
        "vacation itinerary boarding check-in thailand bangkok journey"
    ),
    "finance": wordset(
        "invoice payment pay paid bank tax taxes refund budget salary rent transfer bill "
        "account paypal price cost costs euro eur savings loan"
    ),
    "family_social": wordset(
        "birthday party gift friends friend family mum mom dad mama papa sister brother kids "
        "dinner wedding celebration guests surprise drinks cinema"
    ),
    "home": wordset(
        "apartment flat landlord ceiling bathroom kitchen plumber leak repair heating "
        "hausverwaltung water damage renovation furniture cleaning garden"
    ),
    "admin": wordset(
        "form forms application appointment bürgeramt registration certificate document "
        "documents signature contract renewal paperwork office id license permit"
    ),
    "learning": wordset(
        "course class lesson study learn learning reading lecture exam homework tutorial "
        "language german spanish workshop"
    ),
}


def categorize(text: str) -> str:
    """The lexicon category with most hits (ties: lexicon order); 'general' when none."""
    counts = Counter(w.lower() for w in tokens(text))
    best, best_hits = "general", 0
    for category, lexicon in CATEGORY_LEXICON.items():
        hits = sum(n for word, n in counts.items() if word in lexicon)
        if hits > best_hits:
            best, best_hits = category, hits
    return best


# ---------------------------------------------------------------------- entities

_TICKET = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b")
_EMAIL = re.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+", re.UNICODE)
_MENTION = re.compile(r"(?<![\w@.])@([A-Za-z][\w.\-]{1,40}[A-Za-z0-9])")
_CHANNEL = re.compile(r"(?<![\w&])#([a-z][a-z0-9_\-]{2,40})\b")
_CAPWORD = re.compile(r"[A-ZÄÖÜ][\w'’\-]*", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?:\n]\s*$")
_AFTER_QUANTITY = re.compile(r"(?<![\w.,])\d[\d.,:]*\s$")  # "25.00 ", "10:00 " just before
_UNIT_CODE = re.compile(r"[A-Z]{2,5}")  # "EUR", "CEST", "GB": a unit when it follows a number
_NAME_SKIP = frozenset({"i", "re", "fwd", "fw", "ok", "dear", "hi", "hello", "hey", "thanks"})

ENTITY_WEIGHT = {"ticket": 2.0, "thread": 1.5, "email": 0.5, "person": 0.5, "name": 0.75,
                 "mention": 1.0, "channel": 0.5}  # fmt: skip


def _name_words(text: str) -> list[tuple[int, int, str]]:
    """Capitalised words that look like names: not a common word at a sentence start."""
    found = []
    for match in _CAPWORD.finditer(text):
        word = match.group(0).strip("'’-")
        low = word.lower()
        if len(low) < 2 or low in STOPWORDS or low in CALENDAR_WORDS or low in _NAME_SKIP:
            continue
        if _is_unit(text, match.start(), word):
            continue
        before = text[max(0, match.start() - 3) : match.start()]
        at_start = match.start() == 0 or bool(_SENTENCE_END.search(before))
        limit = 3.5 if at_start else 5.0
        if zipf(low) >= limit:
            continue
        found.append((match.start(), match.end(), word))
    return found


def _is_unit(text: str, start: int, word: str) -> bool:
    """An upper-case code written right after a number is the number's unit ("25.00 EUR",
    "10:00 CEST", "40 GB"): it names no one, and as a name it would link every price, every
    meeting time, every file size of a memory. The same code anywhere else stays a name."""
    if not _UNIT_CODE.fullmatch(word):
        return False
    return _AFTER_QUANTITY.search(text, max(0, start - 16), start) is not None


def _names(text: str) -> list[str]:
    """Runs of adjacent name words ("Farida Osei"), and each run's first word."""
    words = _name_words(text)
    runs: list[list[str]] = []
    last_end = -10
    for start, end, word in words:
        if runs and text[last_end:start] == " " and len(runs[-1]) < 3:
            runs[-1].append(word)
        else:
            runs.append([word])
        last_end = end
    out: list[str] = []
    for run in runs:
        out.append(" ".join(run).lower())
        if len(run) > 1:
            out.append(run[0].lower())
    return out


def _participant_entities(participant: str) -> list[str]:
    out = [f"email:{m.group(0).lower()}" for m in _EMAIL.finditer(participant)]
    name = _EMAIL.sub("", participant).strip(" <>\"'")
    name = re.sub(r"\s+", " ", name)
    if name and not name.startswith("@"):
        out.append(f"person:{name.lower()}")
        first = name.split(" ")[0].lower()
        if " " in name:
            out.append(f"name:{first}")
        else:
            out.append(f"name:{name.lower()}")
    return out


def extract_entities(
    text: str,
    participants: Sequence[str] = (),
    thread: str | None = None,
    owner: str | None = None,
) -> list[str]:
    """Typed entity keys ("ticket:flx-142", "name:farida osei", ...), sorted and unique.

    ``owner`` (the tenant) is dropped: the user is in every event and links nothing.
    Read once per input: an event's text is read at ingest, when it is planned, for its
    statements' names and again at each new version of its node (an access counted).
    """
    return list(_entities_of(text, tuple(participants), thread, owner))


@lru_cache(maxsize=4096)
def _entities_of(
    text: str, participants: tuple[str, ...], thread: str | None, owner: str | None
) -> tuple[str, ...]:
    """``extract_entities`` of one input (a tuple: the caller gets its own list)."""
    found: set[str] = set()
    found.update(f"ticket:{m.group(0).lower()}" for m in _TICKET.finditer(text))
    found.update(f"email:{m.group(0).lower()}" for m in _EMAIL.finditer(text))
    without_emails = _EMAIL.sub(" ", text)
    found.update(f"mention:{m.group(1).lower()}" for m in _MENTION.finditer(without_emails))
    found.update(f"name:{m.group(1).lower()}" for m in _MENTION.finditer(without_emails))
    found.update(f"channel:{m.group(1).lower()}" for m in _CHANNEL.finditer(without_emails))
    found.update(f"name:{name}" for name in _names(_TICKET.sub(" ", without_emails)))
    for participant in participants:
        found.update(_participant_entities(participant))
    if thread:
        found.add(f"thread:{thread.lower()}")
    if owner:
        own = owner.lower()
        found = {e for e in found if own not in re.split(r"[\W_]+", e.split(":", 1)[1])}
    return tuple(sorted(found))


def entity_weight(entity: str) -> float:
    return ENTITY_WEIGHT.get(entity.split(":", 1)[0], 1.0)


# ------------------------------------------------------------------ causal cues

_CAUSAL = re.compile(
    r"\b(because|due to|caused|causes|causing|so that|as a result|therefore|thus|hence|"
    r"consequently|led to|leads to|owing to|since the|after the [\w\s\-]{1,40}?"
    r"(failed|broke|crashed|slipped|was cancelled|was canceled))\b",
    re.IGNORECASE,
)


def has_causal_cue(text: str) -> bool:
    return _CAUSAL.search(text) is not None


# --------------------------------------------------------------------- dates


@dataclass(frozen=True)
class DateMention:
    """A date found in text, resolved against the event time."""

    when: datetime
    deadline: bool  # a deadline cue (by, due, until, before, ...) precedes it
    phrase: str
    has_time: bool = False
    until: datetime | None = None  # end (exclusive) of the period it names: a day, a week, ...


_MONTH_RE = "|".join(sorted(MONTHS, key=len, reverse=True))
_WEEKDAY_RE = "|".join(sorted(WEEKDAYS, key=len, reverse=True))
_DAY_FIRST = re.compile(
    rf"\b(?:(?:{_WEEKDAY_RE})\.?,?\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\.?\s+({_MONTH_RE})\.?"
    rf"(?:,?\s+(\d{{4}}))?\b",
    re.IGNORECASE,
)
_MONTH_FIRST = re.compile(
    rf"\b(?:(?:{_WEEKDAY_RE})\.?,?\s+)?({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"(?:,?\s+(\d{{4}}))?",
    re.IGNORECASE,
)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}))?\b")
_WEEKDAY = re.compile(rf"\b(?:(next|this|on|by|until|before)\s+)?({_WEEKDAY_RE})\b\.?", re.I)
_RELATIVE = re.compile(
    r"\b(tomorrow|day after tomorrow|next week|end of (?:the )?week|end of (?:the )?month|"
    r"in (\d{1,2}) (days?|weeks?))\b",
    re.IGNORECASE,
)
_PAST_RELATIVE = re.compile(
    r"\b(yesterday|day before yesterday|(?:last|this|past) (?:week(?:end)?|month|year)(?! of)|"
    r"(\d{1,2}|a|an|one|two|three|four|five|six) (days?|weeks?|months?|years?) ago)\b",
    re.IGNORECASE,
)
_MONTH_YEAR = re.compile(
    rf"\b(?:(in|during|since|from|of|until|before|after)\s+)?"
    rf"(?:(early|mid|late|(?:the )?(?:first|second|third|fourth|last) week of)[\s-]+)?"
    rf"({_MONTH_RE})\b\.?(?:,?\s+(\d{{4}}))?",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(in|during|since|of|from|until|before|after)\s+((?:19|20)\d{2})\b", re.I)
_SMALL_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_CLOCK = re.compile(r"^(?:,?\s*(?:at|from|,)?\s*)(\d{1,2})[:.](\d{2})\b(?!\s*/km)")
_DEADLINE_CUE = re.compile(
    r"\b(by|due|deadline|until|till|before|no later than|latest|expires?)\b"
    r"[^.!?\n]{0,24}$",
    re.IGNORECASE,
)
MAX_DATES = 4  # dates read from one text: what the planner anchors an event to
READ_DATES = 8  # dates kept per text read: the most a reader asks for (an intent's goal date)


def _resolve_year(month: int, day: int, year: int | None, ref: datetime) -> datetime | None:
    """Date without a year: the one nearest the event time, preferring the coming months."""
    try:
        if year is not None:
            return ref.replace(year=year, month=month, day=day, hour=0, minute=0, second=0,
                               microsecond=0)  # fmt: skip
        candidate = ref.replace(month=month, day=day, hour=0, minute=0, second=0, microsecond=0)
    except ValueError:
        return None
    if candidate < ref - timedelta(days=60):
        candidate = candidate.replace(year=candidate.year + 1)
    return candidate


def _with_clock(text: str, end: int, when: datetime) -> tuple[datetime, bool]:
    match = _CLOCK.match(text[end : end + 16])
    if match is None:
        return when, False
    hour, minute = int(match.group(1)), int(match.group(2))
    if hour > 23 or minute > 59:
        return when, False
    return when.replace(hour=hour, minute=minute), True


def _midnight(ref: datetime) -> datetime:
    return ref.replace(hour=0, minute=0, second=0, microsecond=0)


def _relative(phrase: str, amount: str | None, unit: str | None, ref: datetime) -> datetime:
    low = phrase.lower()
    day = _midnight(ref)
    if low == "tomorrow":
        return day + timedelta(days=1)
    if low == "day after tomorrow":
        return day + timedelta(days=2)
    if low == "next week":
        return day + relativedelta(days=1, weekday=0)  # next Monday
    if low.startswith("end of") and "week" in low:
        return day + relativedelta(weekday=4)  # Friday
    if low.startswith("end of"):
        return day + relativedelta(day=31)
    n = int(amount or 0)
    return day + (timedelta(weeks=n) if (unit or "").startswith("week") else timedelta(days=n))


def find_dates(
    text: str, ref: datetime, past: bool = False, limit: int = MAX_DATES
) -> list[DateMention]:
    """Dates and deadlines in text, resolved relative to ``ref`` (the event time), in order;
    the first ``limit`` distinct ones.

    Explicit dates ('14 Nov', 'Nov 14', '2026-11-19', 'Thu 19 Nov, 14:00'), weekdays ('by
    Friday': the next such day after ``ref``), 'tomorrow', 'next week', 'in 3 days'.
    A date without a year, or a weekday, whose words say it has passed ('since 14 March',
    'last Friday', 'we met on 20 Nov', "Friday's demo went well": ``_passed_day``,
    ``_weekday``) is the latest such day up to ``ref``, never a day ahead.
    Dates far in the past (over 30 days before ``ref``) are ignored.

    ``past=True`` reads text that asks about what happened (a query; ``ref`` is the stream
    clock): a date without a year, or a weekday, is the latest one up to ``ref``; it also reads
    'yesterday', 'last week', 'this month', '3 days ago', 'May 2023', 'in May', 'in 2022',
    and each mention carries the period it names (``until``); no window is applied.

    Read once per text and time: the planner, the goal cues, the intents' and titles' date
    checks all read the same event's text against its time within one fold (a result is
    kept per time zone, its name and fold as well, so every mention is resolved as it would
    be again).
    """
    key = (ref.tzinfo, ref.tzname(), ref.fold)
    # the first mentions are the same whatever the limit: one reading serves every limit up
    # to READ_DATES (the intents read 8 from the text the planner reads 4 from); the first
    # mention is given whatever the limit, as the reading always did
    found = _dates_in(text, ref, key, past, max(limit, READ_DATES))
    return list(found[: max(limit, 1)])


@lru_cache(maxsize=4096)
def _dates_in(
    text: str, ref: datetime, zone: tuple[object, ...], past: bool, limit: int
) -> tuple[DateMention, ...]:
    """``find_dates`` of one text and time (``zone``: what equal times may differ in)."""
    spans: list[tuple[int, int, datetime, bool, datetime | None]] = []

    def taken(start: int, end: int) -> bool:
        return any(start < e and s < end for s, e, _, _, _ in spans)

    def add(
        start: int,
        end: int,
        when: datetime | None,
        has_time: bool = False,
        until: datetime | None = None,
    ) -> None:
        if when is not None and not taken(start, end):
            spans.append((start, end, when, has_time, until))

    for m in _ISO.finditer(text):
        try:
            when = ref.replace(year=int(m.group(1)), month=int(m.group(2)), day=int(m.group(3)),
                               hour=int(m.group(4) or 0), minute=int(m.group(5) or 0), second=0,
                               microsecond=0)  # fmt: skip
        except ValueError:
            continue
        add(m.start(), m.end(), when, m.group(4) is not None, _next_day(when, past))
    resolve = _resolve_past if past else _resolve_year
    for m in _DAY_FIRST.finditer(text):
        year = int(m.group(3)) if m.group(3) else None
        day = resolve(MONTHS[m.group(2).lower()], int(m.group(1)), year, ref)
        day = _passed_day(text, m.start(), m.end(), day, year, ref)
        if day is not None:
            add(m.start(), m.end(), *_with_clock(text, m.end(), day), _next_day(day, past))
    for m in _MONTH_FIRST.finditer(text):
        year = int(m.group(3)) if m.group(3) else None
        day = resolve(MONTHS[m.group(1).lower()], int(m.group(2)), year, ref)
        day = _passed_day(text, m.start(), m.end(), day, year, ref)
        if day is not None:
            add(m.start(), m.end(), *_with_clock(text, m.end(), day), _next_day(day, past))
    if past:
        _find_past(text, ref, add)
    else:
        for m in _RELATIVE.finditer(text):
            day = _relative(m.group(1), m.group(2), m.group(3), ref)
            add(m.start(), m.end(), *_with_clock(text, m.end(), day))
    for m in _WEEKDAY.finditer(text):
        word = m.group(2)
        if len(word) <= 4 and not word[0].isupper():
            continue  # "sun", "sat", "wed" as plain words
        if past:  # the latest such day before ref
            back = (ref.weekday() - WEEKDAYS[word.lower()]) % 7 or 7
            day = _midnight(ref) - timedelta(days=back)
            add(m.start(2), m.end(), day, False, day + timedelta(days=1))
            continue
        day = _weekday(text, m.start(2), m.end(2), WEEKDAYS[word.lower()], ref)
        add(m.start(2), m.end(), *_with_clock(text, m.end(), day))
    spans.sort(key=lambda s: s[0])
    found: list[DateMention] = []
    seen: set[datetime] = set()
    for start, end, when, has_time, until in spans:
        if not past and (when < ref - timedelta(days=30) or when > ref + timedelta(days=730)):
            continue
        if when in seen:
            continue
        seen.add(when)
        deadline = _DEADLINE_CUE.search(text[max(0, start - 40) : start]) is not None
        found.append(DateMention(when, deadline, text[start:end].strip(), has_time, until))
        if len(found) >= limit:
            break
    return tuple(found)


# words before a date that say it has passed: "since 14 March", "last Friday", and "back on 3
# May" opening a sentence ("Back on 3 May we still had the old car"; "Out of office, back on 9
# March" and "I'll be back on Friday" look ahead)
_PAST_BEFORE = re.compile(
    r"(?:\b(?:since|last)|(?:^|[.!?]\s+)back(?:\s+(?:on|in))?)\s+(?:on\s+)?$", re.IGNORECASE
)
# ... but "the last Friday of the month" is ahead
_AHEAD_BEFORE = re.compile(r"\bthe\s+last\s+$", re.IGNORECASE)
# "since" as "because": the date is the subject of what follows ("Since Friday is a holiday")
_SUBJECT_AFTER = re.compile(
    r"^\s+(?:is|are|was|were|will|would|falls|fell|has|had)\b|^['’]s\s", re.IGNORECASE
)
_SINCE_BEFORE = re.compile(r"\bsince\s+(?:on\s+)?$", re.IGNORECASE)
# a span of time closing the words after a date: "we met on 20 Nov, a year ago" (not "Kickoff
# on 5 March, planned two weeks ago": a verb between says when something else happened)
_AGO_AFTER = re.compile(
    r"^,?\s+(?:about\s+|some\s+|over\s+|almost\s+)?(?:a|an|one|two|three|four|five|six|seven|"
    r"eight|nine|ten|a\s+few|few|several|\d+)\s+(?:days?|weeks?|months?|years?)\s+ago\b",
    re.IGNORECASE,
)
_POSSESSIVE = re.compile(r"['’]s\b")


def _past_word_before(text: str, start: int, end: int) -> bool:
    """'since', 'last' or 'back on' just before the date, read as the past: not "be back on",
    "the last ... of", nor a "since" that means "because" ("Since Friday is a holiday")."""
    before = text[max(0, start - 20) : start]
    if _PAST_BEFORE.search(before) is None or _AHEAD_BEFORE.search(before) is not None:
        return False
    return not (_SINCE_BEFORE.search(before) and _SUBJECT_AFTER.match(text[end : end + 12]))


def _said_passed(text: str, start: int, end: int) -> bool:
    """Whether the words around a date say it has passed: 'since', 'last', 'back on' before
    it, a span of time and 'ago' after it, a past-tense verb directly before it ("we met on 20
    Nov"), or one it opens the clause of ("On Friday, I got great news")."""
    return (
        _past_word_before(text, start, end)
        or _AGO_AFTER.match(text[end : end + 40]) is not None
        or past_verb_before(text, start)
        or fronted_on_past_verb(text, start, end)
    )


def _passed_day(
    text: str, start: int, end: int, day: datetime | None, year: int | None, ref: datetime
) -> datetime | None:
    """A date without a year read ahead of ``ref`` whose words say it has passed ("since 14
    March") is its latest day up to ``ref`` instead: never the coming one, so never a due
    day. Any other reading is kept."""
    if day is None or year is not None or day <= ref or not _said_passed(text, start, end):
        return day
    return _resolve_past(day.month, day.day, None, ref)


def _weekday(text: str, start: int, end: int, weekday: int, ref: datetime) -> datetime:
    """The day a weekday names, written at ``ref``: the next such day after it ("by Friday",
    "see you at Friday's review"); the last one before it when its words say it has passed
    ("last Friday", "we met on Friday"); and a weekday that owns what a past-tense clause tells
    of ("Friday's demo went well") is the last such day, ``ref``'s own day included."""
    today = _midnight(ref)
    if _said_passed(text, start, end):
        return today - timedelta(days=(ref.weekday() - weekday) % 7 or 7)
    if _POSSESSIVE.match(text, end) and possessive_in_past_clause(text, start):
        return today - timedelta(days=(ref.weekday() - weekday) % 7)
    return today + timedelta(days=(weekday - ref.weekday()) % 7 or 7)


def _next_day(day: datetime, past: bool) -> datetime | None:
    return _midnight(day) + timedelta(days=1) if past else None


def _resolve_past(month: int, day: int, year: int | None, ref: datetime) -> datetime | None:
    """Date without a year, asked about: the latest one up to ``ref``."""
    try:
        candidate = ref.replace(year=year or ref.year, month=month, day=day, hour=0, minute=0,
                                second=0, microsecond=0)  # fmt: skip
    except ValueError:
        return None
    if year is None and candidate > ref:
        try:
            candidate = candidate.replace(year=candidate.year - 1)
        except ValueError:
            return None
    return candidate


Add = Callable[[int, int, datetime | None, bool, datetime | None], None]


def _find_past(text: str, ref: datetime, add: Add) -> None:
    """Periods that only questions about the past name: 'yesterday', 'last week', '3 days
    ago', 'May 2023', 'in May', 'in 2022'. Each is added with the period's end."""
    today = _midnight(ref)
    for m in _PAST_RELATIVE.finditer(text):
        start, until = _past_period(m.group(1).lower(), m.group(2), m.group(3), today)
        add(m.start(), m.end(), start, False, until)
    for m in _MONTH_YEAR.finditer(text):
        word, year = m.group(3), m.group(4)
        if year is None and (m.group(1) is None or not word[0].isupper()):
            continue  # "may" as a verb; a month alone needs "in May", "during June"
        month = MONTHS[word.lower()]
        first = today.replace(year=int(year) if year else today.year, month=month, day=1)
        if year is None and first > today:
            first = first.replace(year=first.year - 1)
        end = first + relativedelta(months=1)
        first, end = _part_of_month((m.group(2) or "").lower(), first, end)
        add(m.start(3) if m.group(2) is None else m.start(2), m.end(), first, False, end)
    for m in _YEAR.finditer(text):
        first = today.replace(year=int(m.group(2)), month=1, day=1)
        add(m.start(2), m.end(), first, False, first.replace(year=first.year + 1))


_WEEK_ORDINALS = ("first", "second", "third", "fourth")


def _part_of_month(part: str, first: datetime, end: datetime) -> tuple[datetime, datetime]:
    """'early' / 'mid' / 'late' or 'the first ... last week of' narrow a month [first, end)."""
    word = part.removeprefix("the ").split(" ")[0] if part else ""
    if word in _WEEK_ORDINALS:
        start = first + timedelta(days=7 * _WEEK_ORDINALS.index(word))
        return start, start + timedelta(days=7)
    if word == "last":
        return end - timedelta(days=7), end
    if word == "early":
        return first, first + timedelta(days=10)
    if word == "mid":
        return first + timedelta(days=10), first + timedelta(days=20)
    if word == "late":
        return first + timedelta(days=20), end
    return first, end


def _past_period(
    phrase: str, amount: str | None, unit: str | None, today: datetime
) -> tuple[datetime, datetime]:
    if phrase == "yesterday":
        return today - timedelta(days=1), today
    if phrase == "day before yesterday":
        return today - timedelta(days=2), today - timedelta(days=1)
    if amount is not None and unit is not None:
        n = int(amount) if amount.isdigit() else _SMALL_NUMBERS[amount.lower()]
        kind = unit[0].lower()
        day = (
            today
            - {
                "d": relativedelta(days=n),
                "w": relativedelta(weeks=n),
                "m": relativedelta(months=n),
                "y": relativedelta(years=n),
            }[kind]
        )
        if kind == "d":
            return day, day + timedelta(days=1)
        width = timedelta(days={"w": 7, "m": 31, "y": 366}[kind])
        return day - width / 2, day + width / 2
    which, _, unit_word = phrase.partition(" ")
    monday = today - timedelta(days=today.weekday())
    if unit_word == "weekend":
        saturday = monday - timedelta(days=2)
        if which == "this" and today.weekday() >= 5:
            saturday = monday + timedelta(days=5)
        return saturday, saturday + timedelta(days=2)
    if unit_word == "week":
        if which == "this":
            return monday, today + timedelta(days=1)
        if which == "past":
            return today - timedelta(days=7), today + timedelta(days=1)
        return monday - timedelta(days=7), monday
    if unit_word == "month":
        first = today.replace(day=1)
        if which == "this":
            return first, today + timedelta(days=1)
        if which == "past":
            return today - relativedelta(months=1), today + timedelta(days=1)
        return first - relativedelta(months=1), first
    first = today.replace(month=1, day=1)
    if which == "this":
        return first, today + timedelta(days=1)
    if which == "past":
        return today - relativedelta(years=1), today + timedelta(days=1)
    return first.replace(year=first.year - 1), first
