"""Activity labels: a folder of doings named by the activity, the way a person files them.

"renew the passport" -> "Passport renewal", "reduce the rent" -> "Rent reduction", "apply for
a visa" -> "Visa application", "repair the ceiling" -> "Ceiling repair", "clean the windows" ->
"Window cleaning", "triage the tickets" -> "Ticket triage": the object's head noun (with the
compound before it when the members share it) and the verb as a noun.

A verb's nouns come from English derivational morphology (-ment, -al, -ance/-ence,
-(a)tion/-ion/-sion, -y), its gerund (lemminflect) and the verb itself; a form counts only
when English knows it as a noun (the noun index of spaCy's English lemmatizer, WordNet's
lemmas) and not as an adjective ("formal"), and is common enough (``wordfreq``). A form the
members themselves use as a noun wins ("the fitting on Mon 7 Dec"); otherwise a derived noun
("Rent reduction"), then the bare verb where English has it as a noun but not its gerund
("Ceiling repair"), then the gerund ("Window cleaning"). The gerund of a verb among
the most common ones names no task to do ("running", "writing", "booking": too general to
tell); a folder, named by what the doing is done to, may use it ("Claim processing", "Paper
writing": ``common_verbs``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from topologies.naming.phrases import Analysis, load_pipeline
from topologies.text import zipf

MIN_DERIVED_ZIPF = 2.5  # a derived noun rarer than this is no common word ("fitment")
DRIFT_ZIPF = 1.0  # a derived noun this much rarer than its verb is another word ("procession")
MIN_GERUND_ZIPF = 3.0  # a gerund outside the noun index is a noun when this common ("hiring")
MIN_VERB_ZIPF = 3.0  # a verb rarer than this ("ceil") does not make "ceiling" a doing
COMMON_VERB_ZIPF = 5.0  # verbs this common ("run", "hold", "check") are too general for a gerund
MIN_DOING = 2  # members that must speak of a doing whose noun no member uses
MAX_ACTIVITIES = 2  # activity labels embedded per naming (the best by coverage first)
_VOWELS = frozenset("aeiou")


@dataclass(frozen=True)
class Lexicon:
    nouns: frozenset[str]
    adjectives: frozenset[str]
    verbs: frozenset[str]


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """English nouns, adjectives and verbs known to spaCy's rule lemmatizer (WordNet's lemma
    index, shipped with the English pipeline), and lemminflect's tables loaded: once per
    process (about 0.6 s of CPU), like the parser."""
    from lemminflect import getInflection, getLemma

    getInflection("load", "VBG"), getLemma("loading", upos="VERB")
    table = load_pipeline().get_pipe("lemmatizer").lookups.get_table("lemma_index")
    return Lexicon(frozenset(table["noun"]), frozenset(table["adj"]), frozenset(table["verb"]))


def _stems(verb: str) -> set[str]:
    """Spellings a suffix attaches to: "reduce" -> "reduc", "apply" -> "appli",
    "cancel" -> "cancell" (a final consonant doubles after one vowel)."""
    stems = {verb}
    if verb.endswith("e"):
        stems.add(verb[:-1])
    if verb.endswith("y") and len(verb) > 2 and verb[-2] not in _VOWELS:
        stems.add(verb[:-1] + "i")
    consonant_end = len(verb) > 2 and verb[-1] not in _VOWELS | {"w", "x", "y"}
    if consonant_end and verb[-2] in _VOWELS and verb[-3] not in _VOWELS:
        stems.add(verb + verb[-1])
    return stems


def derived_nouns(verb: str) -> set[str]:
    """Candidate spellings of the verb's derived nouns (most are no words; the lexicon
    decides)."""
    out = {stem + suffix for stem in _stems(verb) for suffix in _SUFFIXES}
    if verb.endswith("y"):
        out.add(verb[:-1] + "ication")  # apply -> application, verify -> verification
    if verb.endswith("de"):
        out.add(verb[:-2] + "sion")  # decide -> decision, include -> inclusion
    if verb.endswith("d"):
        out.add(verb[:-1] + "sion")  # extend -> extension, expand -> expansion
    if verb.endswith("mit"):
        out.add(verb[:-1] + "ssion")  # submit -> submission, admit -> admission
    if verb.endswith("ve"):
        out.add(verb[:-2] + "ution")  # resolve -> resolution, solve -> solution
    if verb.endswith("er"):
        out.add(verb[:-2] + "ration")  # register -> registration
        out.add(verb + "y")  # deliver -> delivery, recover -> recovery
    if verb.endswith("ibe"):
        out.add(verb[:-2] + "ption")  # prescribe -> prescription, subscribe
    return out - {verb}


_SUFFIXES = ("ment", "al", "ance", "ence", "ion", "tion", "ation")


def _gerund(verb: str) -> str:
    from lemminflect import getInflection

    forms = getInflection(verb, "VBG")
    return forms[0] if forms else verb + "ing"


@lru_cache(maxsize=4096)
def names_a_doing(noun: str) -> bool:
    """A gerund of an English verb used as a noun ("planning", "hiring", "onboarding"): it
    names an activity by itself, as a folder of doings is named."""
    if not noun.endswith("ing"):
        return False
    from lemminflect import getLemma

    return any(
        verb != noun
        and verb in lexicon().verbs
        and zipf(verb) >= MIN_VERB_ZIPF
        and _gerund(verb) == noun
        for verb in getLemma(noun, upos="VERB")
    )


def _is_noun(word: str) -> bool:
    return word in lexicon().nouns and word not in lexicon().adjectives


@dataclass(frozen=True)
class Nominals:
    """The nouns of doing a verb: derived ones ("renewal"), its gerund ("writing") when
    English uses it as a noun, and the verb itself when it is one ("review")."""

    derived: tuple[str, ...]  # the most frequent first
    gerund: str | None
    bare: str | None

    @property
    def forms(self) -> tuple[str, ...]:
        return (*self.derived, *(f for f in (self.gerund, self.bare) if f))


@lru_cache(maxsize=4096)
def nominals(verb: str) -> Nominals:
    floor = max(MIN_DERIVED_ZIPF, zipf(verb) - DRIFT_ZIPF)
    derived = sorted(
        (w for w in derived_nouns(verb) if _is_noun(w) and zipf(w) >= floor),
        key=lambda w: (-zipf(w), w),
    )
    gerund = _gerund(verb)
    return Nominals(
        derived=tuple(derived),
        gerund=gerund if gerund in lexicon().nouns or zipf(gerund) >= MIN_GERUND_ZIPF else None,
        bare=verb if _is_noun(verb) else None,
    )


def _noun_of(
    verb: str, nominal: Nominals, used: Counter[str], determined: bool, common_verbs: bool = False
) -> str:
    """The noun that names doing ``verb``, "" when none is safe:

    - a form the members use as a noun ("the fitting", "a review");
    - else a derived noun ("reduction");
    - else the verb itself when English knows it as a noun and not its gerund ("repair",
      "review", "check": "Ceiling repair", not "Ceiling repairing"), only after an object
      with a determiner ("repair the ceiling"), where the verb is surely read as one;
    - else the gerund of a verb that is not among the most common ones (whose gerunds,
      "running", "holding", name no task), or of any verb with ``common_verbs``.
    """
    attested = [f for f in nominal.forms if used[f]]
    if attested:
        best = max(attested, key=lambda f: (used[f], -nominal.forms.index(f)))
        if best != nominal.bare or determined:
            return best
    if nominal.derived:
        return nominal.derived[0]
    if nominal.bare and determined and nominal.gerund not in lexicon().nouns:
        return nominal.bare
    if nominal.gerund and (common_verbs or zipf(verb) < COMMON_VERB_ZIPF):
        return nominal.gerund
    return ""


@dataclass(frozen=True)
class ActivityLabel:
    key: str  # lower-cased lemmas: "passport renewal"
    text: str  # "passport renewal" (cased as the members write the object)
    head: str  # the noun of doing: "renewal"
    coverage: int  # members that speak of the doing or of its object
    doing: int  # members that do it to the object or name it beside the object
    titled: int = 0  # members whose title names the object or the doing


def activity_labels(
    analyses: Sequence[Analysis], common_verbs: bool = False
) -> list[ActivityLabel]:
    """The members' doings as folder names, the most covered first. A doing counts where a
    member does it to the object ("renew the passport") or names it in a compound with the
    object ("the passport renewal form"): at least ``MIN_DOING`` members, so a doing
    mentioned once is no theme. ``common_verbs``: the gerund of a common verb names the
    doing too ("process the claim" -> "Claim processing"), as a folder is named by its
    object; a to-do title wants the action itself."""
    nouns = [frozenset(w for p in a.phrases for w in p.key.split()) for a in analyses]
    heads = [a.heads for a in analyses]
    title_heads = [frozenset(p.head for p in a.phrases if p.in_title) for a in analyses]
    phrase_df: Counter[str] = Counter()
    used: Counter[str] = Counter()
    for analysis, words in zip(analyses, nouns, strict=True):
        phrase_df.update(analysis.keys)
        used.update(words)
    pairs: dict[tuple[str, str], Counter[tuple[str, str]]] = {}
    doers: dict[tuple[str, str], set[int]] = {}
    determined: set[tuple[str, str]] = set()
    texts: dict[str, str] = {}
    for index, analysis in enumerate(analyses):
        for act in analysis.activities:
            pair = (act.verb, act.object_head)
            pairs.setdefault(pair, Counter())[(act.modifier, act.modifier_text)] += 1
            doers.setdefault(pair, set()).add(index)
            if act.determined:
                determined.add(pair)
            texts.setdefault(act.object_head, act.object_text)
    out = []
    for (verb, head), modifiers in pairs.items():
        nominal = nominals(verb)
        noun = _noun_of(verb, nominal, used, (verb, head) in determined, common_verbs)
        if not noun or noun == head:
            continue
        compound = f" {head} {noun} "  # "the passport renewal form"; not "charge" and
        # "ticket" anywhere in one message ("tickets ... charged twice")
        named = {i for i, a in enumerate(analyses) if any(compound in f" {k} " for k in a.keys)}
        does = doers[(verb, head)] | named
        if len(does) < MIN_DOING:
            continue
        (modifier, modifier_text), _ = modifiers.most_common(1)[0]
        shared = modifier and phrase_df[f"{modifier} {head}"] >= 2
        obj = f"{modifier_text} {texts[head]}" if shared else texts[head]
        key = f"{modifier} {head} {noun}" if shared else f"{head} {noun}"
        coverage = sum(1 for i, h in enumerate(heads) if i in does or head in h)
        titled = sum(1 for t in title_heads if head in t or noun in t)
        out.append(ActivityLabel(key, f"{obj} {noun}", noun, coverage, len(does), titled))
    out.sort(key=lambda a: (-a.coverage, -a.doing, a.key))
    return out
