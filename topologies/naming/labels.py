"""Concept labels: the noun phrase a person would write on the folder.

Candidates are the members' own noun phrases (:mod:`topologies.naming.phrases`). Each is
scored by how central it is to the members (cosine to the centroid of their vectors, the
KeyBERT idea), how many members use it or its head noun (coverage), how close it is to the
members' other head nouns (the kind of thing they speak of, rather than one item among
several), whether a member's title uses it, and how close it
is to a sibling concept's label (maximal marginal relevance: two folders must not carry the
same name). When the members name several kinds of one thing ("duplicate tickets", "GST
ticket", "older ticket") and no one kind is said by half of them, the folder is named for the
kind, in the plural the members write ("Tickets"); a thing takes the kind word its members
write after it ("Austria visa application"); a note's account of a thing yields to the
thing the other members speak of ("Ceiling", not "Ceiling timeline"). :func:`label_problem`
says why a proposed label (the LLM's, or anything else) is not a folder name.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from topologies.lexicon import ACCOUNT_NOUNS, CALENDAR_WORDS, PLACE_WORDS, STOPWORDS
from topologies.naming.activities import (
    MAX_ACTIVITIES,
    ActivityLabel,
    activity_labels,
    names_a_doing,
)
from topologies.naming.phrases import Analysis, Phrase
from topologies.text import zipf

Matrix = npt.NDArray[np.float32]
Embed = Callable[[list[str]], Matrix]

MAX_CANDIDATES = 12  # phrases embedded per naming (doings, then the best by coverage)
COVERAGE_WEIGHT = 0.2  # share of members that use the phrase
GENERAL_WEIGHT = 0.5  # mean cosine to the members' other head nouns: the kind, not one item
CLOUD_SIZE = 16  # head nouns of the members a candidate is compared with (the most used)
HEAD_WEIGHT = 0.2  # share of members that use its head noun
TITLE_BONUS = 0.05
SIBLING_WEIGHT = 0.75  # MMR: penalty per unit of cosine to the closest sibling concept
COMMON_ZIPF = 5.6  # a lone word this common ("time", "thing", "day") names nothing
COMMON_PENALTY = 0.2
TITLE_HEAD_WEIGHT = 0.5  # share of member titles that use the head (a title says the kind)
RARE_ZIPF = 1.0  # a head word English does not know (jargon, codes, other languages)
RARE_PENALTY = 0.1
LONE_SHARE = 0.5  # a lone common noun names a folder only when this share of members uses it
LONE_ZIPF = 4.0  # a lone noun this common is generic ("Group", "Call", "Tooth"), not "Ibuprofen"
LONE_PENALTY = 0.1  # not for a noun of doing: "Planning", "Hiring" name a folder alone
MISREAD_MEMBERS = 2  # members writing two words the parse read as a verb and a noun
MODIFIER_MEMBERS = 2  # members that must say a lone word's phrase for it to replace the word
MODIFIER_SHARE = 0.5  # ... and this share of the members that use the word
LONG_WORDS = 2  # a common noun phrase longer than this ...
LONG_PENALTY = 0.1  # ... adds a detail of one instance: "Weekly sleep report", "Sleep report"
NAMED_SHARE = 0.5  # a name of a thing this share of the members write ...
NAMED_TITLES = 2  # ... and this many of their titles names their folder
PART_MEMBERS = 3  # members that must speak of a thing for one member's part of it to yield
ACCOUNT_MEMBERS = 2  # ... when the part is an account of the thing (its timeline, status)
KINDS = 2  # kinds of one thing (two-word phrases with its head) that make it a category
MAX_LABEL_WORDS = 5
MAX_LABEL_CHARS = 60
UNTITLED = "Untitled"


@dataclass(frozen=True)
class Candidate:
    """A candidate label and the terms of its score (named, so a bench can say why one
    phrase beat another)."""

    label: str
    key: str  # lower-cased lemmas
    terms: dict[str, float]
    doing: bool = False  # the members' doing ("Passport renewal"), not one of their phrases

    @property
    def score(self) -> float:
        return sum(self.terms.values())


@dataclass
class _Stats:
    members: int
    df: Counter[str] = field(default_factory=Counter)
    head_df: Counter[str] = field(default_factory=Counter)
    in_title: Counter[str] = field(default_factory=Counter)
    title_heads: Counter[str] = field(default_factory=Counter)
    forms: dict[str, Counter[str]] = field(default_factory=dict)
    heads: dict[str, str] = field(default_factory=dict)
    lower_words: set[str] = field(default_factory=set)  # words seen in lower case
    counted: Counter[str] = field(default_factory=Counter)  # uses right after a number
    numbered: Counter[str] = field(default_factory=Counter)  # uses right before a number
    carried: Counter[str] = field(default_factory=Counter)  # uses as an item to bring
    uses: Counter[str] = field(default_factory=Counter)
    word_df: Counter[str] = field(default_factory=Counter)  # members using a word in a phrase


def _stats(analyses: Sequence[Analysis]) -> _Stats:
    """What the members write: per phrase key, how many members use it, its head and its
    forms; per word, how many members use it in any phrase."""
    stats = _Stats(members=len(analyses))
    written = {p.key for a in analyses for p in (*a.phrases, *a.segments)}
    written |= _misread_twice(analyses)
    for analysis in analyses:
        phrases = _phrases(analysis, written)
        stats.df.update({p.key for p in phrases})
        stats.word_df.update({w for p in phrases for w in p.key.split()})
        stats.head_df.update({p.head for p in phrases})
        stats.in_title.update({p.key for p in phrases if p.in_title})
        stats.title_heads.update({p.head for p in phrases if p.in_title})
        for phrase in phrases:
            stats.forms.setdefault(phrase.key, Counter())[phrase.text] += 1
            stats.heads[phrase.key] = phrase.head
            stats.uses[phrase.key] += 1
            stats.counted[phrase.key] += phrase.counted
            stats.numbered[phrase.key] += phrase.numbered
            stats.carried[phrase.key] += phrase.carried
            stats.lower_words.update(w for w in phrase.text.split() if w.islower())
    return stats


def _misread_twice(analyses: Sequence[Analysis]) -> set[str]:
    """Two words the parse read as a verb and a noun that two members write ("the drying
    machine is here", "Drying machine arrives Mon 16 Nov"; the titles "Week plan 2-8 Nov" and
    "Week plan 16-22 Nov"): the members speak of one thing the parse never sees as a noun
    phrase, so no member's noun phrase vouches for it."""
    writers = Counter(k for a in analyses for k in {p.key for p in a.compounds if p.misread})
    return {key for key, count in writers.items() if count >= MISREAD_MEMBERS}


def _phrases(analysis: Analysis, written: set[str]) -> list[Phrase]:
    """A member's noun phrases (its title's parts across a dash among them: "Dentist" of
    "Dentist - Dr. Yılmaz"), and the two-word compounds it writes that the parse missed
    ("Staging deploy of rc1 failed", read as an imperative; the subject line "Water damage
    bathroom ceiling", read as no noun phrase) where another member writes them as a noun
    phrase ("our staging deploy failed", "inspect the water damage") or, read as a verb and
    a noun, writes them too ("the drying machine"): both speak of it."""
    own = analysis.keys | {p.key for p in analysis.segments}
    missed = {p.key: p for p in analysis.compounds if p.key in written and p.key not in own}
    return [*analysis.phrases, *analysis.segments, *missed.values()]


def surface(text: str, lower_words: set[str]) -> str:
    """Sentence case; acronyms, mixed-case names and words never written in lower case stay."""
    words = []
    for word in text.split():
        keep = (
            (word.isupper() and len(word) > 1)
            or any(ch.isupper() for ch in word[1:])
            or (word[:1].isupper() and word.lower() not in lower_words)
        )
        words.append(word if keep else word.lower())
    out = " ".join(words)
    return out[:1].upper() + out[1:]


def _taken(label: str, siblings: list[frozenset[str]]) -> bool:
    """A sibling's label, or a part of it ("Damage" beside "Water damage"), is taken."""
    words = frozenset(label.casefold().split())
    return any(words <= sibling for sibling in siblings)


def _nameable(key: str, stats: _Stats, names: frozenset[str]) -> bool:
    """Not a person's name, and a head English knows or the members write in lower case
    (a capitalised unknown word is a name or a foreign word: "Joost", "Bevestigd")."""
    head = stats.heads[key]
    if names.intersection(key.split()):
        return False
    if 2 * stats.counted[key] > stats.uses[key]:
        return False  # mostly after a number: a unit ("km", "mg")
    if _numbered_kind(key, stats):
        return False
    if stats.carried[key] == stats.uses[key]:
        return False  # only ever an item to bring: "Bring insurance card" beside the dentist
    return zipf(head) >= RARE_ZIPF or head in stats.lower_words


def _numbered_kind(key: str, stats: _Stats) -> bool:
    """A lone word the members write before a number at least half the times they write it:
    the kind word of a numbered thing ("apartment 3.2" of an address, "tooth 36", "migration
    0047"), which without its number names no folder ("Apartment" for the water damage)."""
    return " " not in key and 2 * stats.numbered[key] >= stats.uses[key]


def _lexical(stats: _Stats, key: str) -> float:
    return (
        stats.df[key]
        + 0.5 * stats.head_df[stats.heads[key]]
        + 0.5 * min(1, stats.in_title[key])
        + 0.1 * len(key.split())
    )


@dataclass
class _Pool:
    """The scored candidates of one naming and what the rules after the score read."""

    candidates: list[Candidate]
    stats: _Stats
    eligible: list[str]  # every nameable phrase key not taken by a sibling
    forms: dict[str, str]  # key -> the form the members write most


def rank_labels(
    analyses: Sequence[Analysis],
    vectors: Matrix,
    embed: Embed,
    siblings: Sequence[str] = (),
    sibling_vectors: Matrix | None = None,
    names: frozenset[str] = frozenset(),
    used: frozenset[str] = frozenset(),
    person: Callable[[str], bool] | None = None,
) -> list[tuple[float, str]]:
    """(score, label) of the candidate phrases, best first. ``names``: lower-cased words of
    the people in any member (a name one member mentions is a name in all of them);
    ``used``: case-folded labels of the user's other concepts, near or far (two folders
    never carry one name: the second takes its next phrase); ``person``: whether a name is
    a person's (an entity recogniser's reading of the name alone), for the names of things
    no member's participants tell apart ("Lukas Brenner" in two interview titles)."""
    pool = label_candidates(analyses, vectors, embed, siblings, sibling_vectors, names, used)
    if not pool.candidates:
        return []
    stats = pool.stats
    scored = sorted(((c.score, c.label) for c in pool.candidates), key=lambda i: (-i[0], i[1]))
    key_of = {c.label: c.key for c in pool.candidates}
    scored = _maximal(scored, stats, key_of)
    scored = _part_of_a_thing(scored, key_of, stats)
    scored = _with_modifier(scored, key_of, stats, pool.eligible, pool.forms)
    scored = _with_kind(scored, key_of, analyses, siblings, used)
    scored = _kind_of_things(scored, key_of, stats)
    thing = _named_thing(analyses, names, siblings, used, person)
    if thing is None:
        return scored
    return [(scored[0][0], thing), *[(s, label) for s, label in scored if label != thing]]


def _named_thing(
    analyses: Sequence[Analysis],
    names: frozenset[str],
    siblings: Sequence[str] = (),
    used: frozenset[str] = frozenset(),
    person: Callable[[str], bool] | None = None,
) -> str | None:
    """The name of one thing the members keep naming (a project, a product, a customer, a
    race): written by at least half of them and in the titles of two. Such a folder holds
    that thing's events, and its owner calls it by the name ("Flux Tariffs" for the launch's
    weekly sync, its go/no-go, its load test plan and price screen), not by one of them
    ("Tariff screen"). A name of several words only: one word may be a person, a tool or a
    place met in passing ("Havelstrom", "Farida"); never a person's (known from any member,
    or read as one by ``person``), nor a sibling's name. Of several, the one most members write."""
    writers: Counter[str] = Counter()
    titles: Counter[str] = Counter()
    forms: dict[str, Counter[str]] = {}
    numbered: set[str] = set()
    for analysis in analyses:
        things = [p for p in (*analysis.named, *analysis.name_modifiers) if " " in p.key]
        numbered.update(p.key for p in things if p.numbered)
        writers.update({p.key for p in things})
        titles.update({p.key for p in analysis.named if p.in_title})
        for phrase in things:
            forms.setdefault(phrase.key, Counter())[phrase.text] += 1
    keys = [
        key
        for key, count in writers.items()
        if count >= NAMED_SHARE * len(analyses)
        and titles[key] >= NAMED_TITLES
        and not names.intersection(key.split())
        and key not in numbered
    ]
    taken = [frozenset(s.casefold().split()) for s in siblings]
    for key in sorted(keys, key=lambda k: (-writers[k], -titles[k], k)):
        label = forms[key].most_common(1)[0][0]
        if _taken(label, taken) or label.casefold() in used:
            continue
        if person is None or not person(label):
            return label
    return None


def label_candidates(
    analyses: Sequence[Analysis],
    vectors: Matrix,
    embed: Embed,
    siblings: Sequence[str] = (),
    sibling_vectors: Matrix | None = None,
    names: frozenset[str] = frozenset(),
    used: frozenset[str] = frozenset(),
) -> _Pool:
    """The candidate labels embedded for one naming, each with the terms of its score."""
    stats = _stats(analyses)
    taken = [frozenset(s.casefold().split()) for s in siblings]
    keys = sorted(
        (k for k in stats.df if _nameable(k, stats, names)),
        key=lambda k: (-_lexical(stats, k), k),
    )
    forms = {k: stats.forms[k].most_common(1)[0][0] for k in keys}
    keys = [
        k
        for k in keys
        if not _taken(surface(forms[k], stats.lower_words), taken)
        and surface(forms[k], stats.lower_words).casefold() not in used
    ]
    eligible = list(keys)
    doings = _activities(analyses, stats, names, taken, set(keys[:MAX_CANDIDATES]), used)
    keys = keys[: MAX_CANDIDATES - len(doings)]  # as many phrases embedded as before
    if not keys and not doings:
        return _Pool([], stats, eligible, forms)
    labels = [surface(forms[k], stats.lower_words) for k in keys]
    labels += [surface(a.text, stats.lower_words) for a in doings]
    cloud = _cloud(stats, names)
    embedded = embed([*labels, *(surface(w, stats.lower_words) for w in cloud)])
    phrase_vectors, cloud_vectors = embedded[: len(labels)], embedded[len(labels) :]
    general = _generality(
        phrase_vectors, [*keys, *(a.key for a in doings)], cloud, cloud_vectors, stats
    )
    centroid = vectors.mean(axis=0) if len(vectors) else np.zeros(phrase_vectors.shape[1])
    norm = float(np.linalg.norm(centroid))
    central = phrase_vectors @ (centroid / norm) if norm else np.zeros(len(labels))
    if sibling_vectors is not None and len(sibling_vectors):
        closeness = (phrase_vectors @ sibling_vectors.T).max(axis=1)
    else:
        closeness = np.zeros(len(labels))
    n = max(1, stats.members)
    candidates = []
    for i, key in enumerate(keys):
        head = stats.heads[key]
        terms = {
            "central": float(central[i]),
            "coverage": COVERAGE_WEIGHT * (stats.df[key] - 1) / max(1, n - 1),
            "head": HEAD_WEIGHT * stats.head_df[head] / n,
            "title": TITLE_BONUS if stats.in_title[key] else 0.0,
            "title_head": TITLE_HEAD_WEIGHT * stats.title_heads[head] / n,
            "general": GENERAL_WEIGHT * general[i],
            "sibling": -SIBLING_WEIGHT * max(0.0, float(closeness[i])),
        }
        if " " not in key and zipf(head) >= COMMON_ZIPF:
            terms["common"] = -COMMON_PENALTY
        if _generic_lone(key, head, stats.head_df[head] / n):
            terms["lone"] = -LONE_PENALTY
        if zipf(head) < RARE_ZIPF:
            terms["rare"] = -RARE_PENALTY
        if len(key.split()) > LONG_WORDS and not _named(labels[i]):
            terms["long"] = -LONG_PENALTY
        candidates.append(Candidate(labels[i], key, terms))
    for j, doing in enumerate(doings, start=len(keys)):
        terms = {
            "central": float(central[j]),
            "coverage": COVERAGE_WEIGHT * (doing.coverage - 1) / max(1, n - 1),
            "head": HEAD_WEIGHT * doing.doing / n,
            "title_head": TITLE_HEAD_WEIGHT * doing.titled / n,
            "general": GENERAL_WEIGHT * general[j],
            "sibling": -SIBLING_WEIGHT * max(0.0, float(closeness[j])),
        }
        candidates.append(Candidate(labels[j], doing.key, terms, doing=True))
    return _Pool(candidates, stats, eligible, forms)


def _cloud(stats: _Stats, names: frozenset[str]) -> list[str]:
    """The members' head nouns that can name something, the most used first."""
    heads = sorted(
        {h for k, h in stats.heads.items() if k == h and _nameable(k, stats, names)},
        key=lambda h: (-stats.head_df[h], h),
    )
    return heads[:CLOUD_SIZE]


def _generality(
    vectors: Matrix, keys: Sequence[str], cloud: Sequence[str], cloud_vectors: Matrix, stats: _Stats
) -> list[float]:
    """How close each candidate is to the members' other head nouns (weighted by how many
    members use each): a word for the kind of things they speak of ("Sleep" beside night,
    bed and couch) is close to all of them, one item mostly to itself."""
    if not len(cloud):
        return [0.0] * len(keys)
    weights = np.array([stats.head_df[h] for h in cloud], dtype=np.float32)
    cosines = vectors @ cloud_vectors.T
    out = []
    for i, key in enumerate(keys):
        own = np.array([h in key.split() for h in cloud])
        w = np.where(own, 0.0, weights)
        out.append(float(cosines[i] @ w / w.sum()) if w.sum() else 0.0)
    return out


def _named(label: str) -> bool:
    """Written with a capital past its first letter: a name of a thing ("Q4 OKR workshop",
    "Flux Tariffs launch") is kept whole, however many words it takes."""
    return any(ch.isupper() for ch in label[1:])


def _generic_lone(key: str, head: str, share: float) -> bool:
    """A lone common noun used by less than ``LONE_SHARE`` of the members ("Group",
    "Call", "Tooth"), and no noun of doing."""
    if " " in key or zipf(head) < LONE_ZIPF or share >= LONE_SHARE:
        return False
    return not names_a_doing(head)


def _activities(
    analyses: Sequence[Analysis],
    stats: _Stats,
    names: frozenset[str],
    taken: list[frozenset[str]],
    phrase_keys: set[str],
    used: frozenset[str] = frozenset(),
) -> list[ActivityLabel]:
    """The members' doings as candidate labels ("Passport renewal"), the most covered
    first; none that repeats a phrase candidate, a sibling's label or a person's name, nor
    one done to a thing too common to tell ("help others" is no "Other helping", "play
    games" no "Game playing")."""
    out = []
    for doing in activity_labels(analyses, common_verbs=True):
        if doing.key in phrase_keys or names.intersection(doing.key.split()):
            continue
        if zipf(doing.key.split()[-2]) >= COMMON_ZIPF:
            continue
        label = surface(doing.text, stats.lower_words)
        if _taken(label, taken) or label.casefold() in used:
            continue
        out.append(doing)
        if len(out) == MAX_ACTIVITIES:
            break
    return out


def _maximal(
    scored: list[tuple[float, str]], stats: _Stats, key_of: dict[str, str]
) -> list[tuple[float, str]]:
    """The best phrase grows to its longest extension used by the same members: "Water
    damage" rather than "Damage" when every member that says damage says water damage (up
    to two words, unless it is a name: a third word is one instance's detail); of several,
    one a title writes ("FLX-163 load test report" names the report, not the body's "the
    attached report")."""
    top_score, top = scored[0]
    key = key_of[top]
    longer = [
        label
        for _, label in scored[1:]
        if key_of[label].endswith(" " + key)
        and stats.df[key_of[label]] == stats.df[key]
        and (len(key_of[label].split()) <= LONG_WORDS or _named(label))
    ]
    if not longer:
        return scored
    best = max(
        longer, key=lambda label: (stats.in_title[key_of[label]] > 0, len(key_of[label]), label)
    )
    return [(top_score, best), *[(s, label) for s, label in scored if label != best]]


def _part_of_a_thing(
    scored: list[tuple[float, str]], key_of: dict[str, str], stats: _Stats
) -> list[tuple[float, str]]:
    """A part of a thing at the top gives way to the thing. A phrase whose modifier more
    members speak of than of its head ("Passport photo" where most members speak of the
    passport and a few of the photo), or a lone word the members write after a word more of
    them speak of ("Photo", five of eight members, beside "passport photo" and the eight
    that speak of the passport), when one member writes the phrase or most of those that
    write the part write it without the thing ("biometric photo"; "the programming world" is
    one phrase, a word of the thing's domain, no part of it): the folder is the thing's, by
    its word when that
    is a candidate ("Passport"), else, when another folder has that name, by its best phrase
    that does not name the part ("Passport application"), never the part nor the part's
    kinds ("Photos", "Biometric photo"). Two members speaking of the thing cannot tell a
    part of it from what happened to it: a folder of "Feed timing confirmation" and
    "Day-ahead feed delays" stays "Feed delays", not "Feed"; an account of the thing is no
    happening of it (``_part_members``)."""
    top_score, top = scored[0]
    key = key_of.get(top, "")
    if key not in stats.heads:
        return scored
    words = key.split()
    if len(words) == 2:
        part = stats.heads[key]
        alone = stats.df[key] == 1 or _mostly_without(key, part, stats)
        things = [words[0]] if alone else []
    elif len(words) == 1:
        part = key
        pairs = [k.split() for k in stats.df if len(k.split()) == 2 and k.split()[1] == part]
        things = sorted(
            (w for w, _ in pairs if _mostly_without(f"{w} {part}", part, stats)),
            key=lambda w: (-stats.word_df[w], w),
        )
    else:
        return scored
    things = [
        w
        for w in things
        if stats.word_df[w] > stats.word_df[part] and stats.word_df[w] >= _part_members(part)
    ]
    if not things:
        return scored
    thing = _thing_label(scored, key_of, things[0], part, stats)
    if thing is None:
        return scored
    return [(top_score, thing), *[(s, label) for s, label in scored if label != thing]]


def _part_members(part: str) -> int:
    """Members that must speak of a thing for its part to yield: two when the part is an
    account of the thing (``lexicon.ACCOUNT_NOUNS``: "Ceiling timeline", a note, beside a
    chat on the leak into the ceiling), which no one takes for what happened to it, as one
    may take "delays" of a feed; else ``PART_MEMBERS``."""
    return ACCOUNT_MEMBERS if part in ACCOUNT_NOUNS else PART_MEMBERS


def _mostly_without(phrase: str, part: str, stats: _Stats) -> bool:
    """Most members that write the part write it without the thing's word: a thing of its
    own, with kinds of its own ("biometric photo"), not a word of one phrase with the thing
    ("the programming world")."""
    return stats.df[phrase] < MODIFIER_SHARE * stats.word_df[part]


def _thing_label(
    scored: list[tuple[float, str]], key_of: dict[str, str], thing: str, part: str, stats: _Stats
) -> str | None:
    """The thing's word when it is a candidate, else, when the members write the word alone
    but it is no candidate (another folder is named "Passport"), its best-ranked phrase
    without the part ("Passport application"). A word never written alone is a modifier of
    the members' phrases, no thing they name ("programming" of "programming group",
    "programming world", "programming skills"): no phrase of it replaces another."""
    alone = next((label for _, label in scored if key_of.get(label) == thing), None)
    if alone is not None or not stats.df[thing]:
        return alone
    return next(
        (
            label
            for _, label in scored
            if thing in key_of.get(label, "").split() and part not in key_of[label].split()
        ),
        None,
    )


def _with_modifier(
    scored: list[tuple[float, str]],
    key_of: dict[str, str],
    stats: _Stats,
    eligible: Sequence[str],
    forms: dict[str, str],
) -> list[tuple[float, str]]:
    """A lone word at the top takes the modifier or the head most of its members use with
    it: "Surprise party" rather than "Surprise", "Insurance claim" rather than "Claim", when
    at least two members, and at least half of those that use the word, say the phrase."""
    top_score, top = scored[0]
    word = key_of.get(top, "")
    if not word or " " in word:
        return scored
    users = stats.word_df[word]
    phrases = [
        key
        for key in eligible
        if len(key.split()) == 2
        and word in key.split()
        and stats.df[key] >= max(MODIFIER_MEMBERS, MODIFIER_SHARE * users)
    ]
    if not phrases:
        phrases = _titled_whole(word, stats, eligible)
    if not phrases:
        return scored
    best = surface(forms[max(phrases, key=lambda k: (stats.df[k], k))], stats.lower_words)
    return [(top_score, best), *[(s, label) for s, label in scored if label != best]]


def _with_kind(
    scored: list[tuple[float, str]],
    key_of: dict[str, str],
    analyses: Sequence[Analysis],
    siblings: Sequence[str] = (),
    used: frozenset[str] = frozenset(),
) -> list[tuple[float, str]]:
    """A two-word label names the particular thing ("Austria visa"); the word its members
    write after its head says what kind of matter the folder holds ("visa application"):
    the label takes it ("Austria visa application"), unless a sibling or another folder of
    the user's has that name already."""
    top_score, top = scored[0]
    words = key_of.get(top, "").split()
    if len(words) != 2:
        return scored  # a lone word, a longer phrase or a name of a thing
    kind = _kind_word(words, analyses)
    if kind is None:
        return scored
    best = f"{top} {kind}"
    taken = [frozenset(s.casefold().split()) for s in siblings]
    if _taken(best, taken) or best.casefold() in used:
        return scored
    return [(top_score, best), *[(s, label) for s, label in scored if label != best]]


def _kind_word(words: Sequence[str], analyses: Sequence[Analysis]) -> str | None:
    """The word after the head of a two-word thing that at least two members, and at least
    half of those that write the head, write after it ("visa application"), and that one
    member writes after the whole ("the Austria Visa Application Centre"): the kind is then
    the thing's, not a neighbouring one's ("Club run" beside two notes on "the run log"
    stays, as no member writes "club run log"). Names of things count: they are the
    members' words too; but one member at least writes the kind in words of their own,
    outside a name ("your visa application"), as a firm's or an office's name says its
    trade ("Berliner Water Damage Restoration" makes no "Water damage restoration" of a
    folder on the damage), and a place the thing is done at is no kind of it ("the passport
    renewal office", ``lexicon.PLACE_WORDS``)."""
    head = words[1]
    writers: Counter[str] = Counter()
    own: set[str] = set()  # kinds written after the head outside a name
    whole: set[str] = set()
    head_writers = 0
    for analysis in analyses:
        common = [p.key.split() for p in analysis.phrases]
        spans = [*common, *(p.key.split() for p in analysis.named)]
        head_writers += any(head in span for span in spans)
        writers.update(_after(head, spans))
        own.update(_after(head, common))
        whole.update(s[i + 2] for s in spans for i in range(len(s) - 2) if s[i : i + 2] == words)
    kinds = [
        kind
        for kind in whole & own
        if writers[kind] >= max(MODIFIER_MEMBERS, MODIFIER_SHARE * head_writers)
        and kind.isalpha()
        and kind not in PLACE_WORDS
        and zipf(kind) >= LONE_ZIPF
    ]
    return max(kinds, key=lambda k: (writers[k], k)) if kinds else None


def _after(head: str, spans: Sequence[Sequence[str]]) -> set[str]:
    """The words the spans write right after ``head``."""
    return {s[i + 1] for s in spans for i in range(len(s) - 1) if s[i] == head}


def _titled_whole(word: str, stats: _Stats, eligible: Sequence[str]) -> list[str]:
    """The one phrase a member's title writes a lone word in, when other titles say it by
    the word alone and no member writes it in any other phrase: that title names in full
    what the others title by one word ("Leonie's 40th - surprise party" beside a chat named
    "Leonie 40 (surprise!)"). A word only the bodies say ("9.4 pages") is no title's topic,
    and one title's "Page count" no fuller name of it."""
    if not stats.in_title[word]:
        return []
    longer = {k for k in stats.df if k != word and word in k.split()}
    if len(longer) != 1:
        return []
    (key,) = longer
    if len(key.split()) != 2 or not stats.in_title[key] or key not in eligible:
        return []
    return [key]


def writes_in_full(label: str, title: str) -> bool:
    """A one-word label that the title writes beside another word ("Surprise" in "Leonie's
    40th - surprise party"): the title may name in full what the folder says by one word,
    so the folder is named again when such an event joins it."""
    word = label.strip()
    if not word or " " in word:
        return False
    beside = re.findall(
        rf"([^\W\d_]+) {re.escape(word)}\b|\b{re.escape(word)} ([^\W\d_]+)", title, re.IGNORECASE
    )
    return any(w.lower() not in STOPWORDS for pair in beside for w in pair if w)


def _kind_of_things(
    scored: list[tuple[float, str]], key_of: dict[str, str], stats: _Stats
) -> list[tuple[float, str]]:
    """Category over instances: a phrase at the top that names one kind of a thing the
    members name several kinds of ("Unsolved GST ticket" beside "duplicate tickets" and "older
    ticket"), said by fewer than half of the members while more of them use its head, gives
    way to the head in the plural the members write ("Tickets"). A head no member writes in
    the plural (a mass noun: "pace", "therapy") stays with its modifier."""
    top_score, top = scored[0]
    key = key_of.get(top, "")
    if " " not in key or key not in stats.heads:
        return scored  # a lone word, or a doing ("Rent reduction"): no kind of a thing
    head = stats.heads[key]
    kinds = {k for k in stats.df if len(k.split()) == 2 and k.endswith(" " + head)}
    if len(kinds) < KINDS or 2 * stats.df[key] >= stats.members:
        return scored
    if stats.head_df[head] <= stats.df[key]:
        return scored
    plurals: Counter[str] = Counter()
    for k, forms in stats.forms.items():
        if stats.heads[k] != head:
            continue
        for text, count in forms.items():
            word = text.split()[-1]
            if word.lower() != head and word.lower().endswith("s"):
                plurals[word] += count
    if not plurals:
        return scored
    label = surface(plurals.most_common(1)[0][0], stats.lower_words)
    return [(top_score, label), *[(s, t) for s, t in scored if t != label]]


# ----------------------------------------------------------------- the check
_CLAUSE_MARKS = (".", "!", "?", ";", ":", ",", "\n", " - ", " – ", "|", "(", ")")
_FINITE = frozenset({"VBD", "VBZ", "VBP", "MD"})


def label_problem(label: str, doc: object, names: frozenset[str] = frozenset()) -> str | None:
    """Why ``label`` is not a folder name (None when it is one). ``doc`` is its spaCy parse;
    ``names`` are lower-cased words of people's names known from the evidence."""
    text = label.strip()
    if not text:
        return "empty"
    if len(text) > MAX_LABEL_CHARS or len(text.split()) > MAX_LABEL_WORDS:
        return "longer than a short noun phrase"
    if any(mark in text for mark in _CLAUSE_MARKS):
        return "spans more than one clause"
    tokens = [t for t in doc if not t.is_punct and not t.is_space]  # type: ignore[attr-defined]
    if not tokens:
        return "no words"
    lows = [t.lower_ for t in tokens]
    if all(w in STOPWORDS or t.is_stop for w, t in zip(lows, tokens, strict=True)):
        return "a function word, not a topic"
    if all(
        t.like_num or t.lower_ in CALENDAR_WORDS or t.ent_type_ in ("DATE", "TIME") for t in tokens
    ):
        return "a date or a number"
    if any(t.ent_type_ == "PERSON" or t.lower_ in names for t in tokens):
        return "contains a person's name"
    if any(t.tag_ in _FINITE for t in tokens):
        return "a clause, not a noun phrase"
    last = tokens[-1]
    if last.pos_ not in ("NOUN", "PROPN") and not (last.pos_ == "VERB" and last.tag_ == "VBG"):
        return "does not end in a noun"
    if len(tokens) == 1 and tokens[0].pos_ == "VERB":
        return "a verb"
    return None
