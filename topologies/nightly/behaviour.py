"""Life domains and behavioural descriptions of schemas (deterministic, no LLM).

- :func:`domain_of`: a schema's life domain. Its ``category`` when the fold set a specific one,
  else the domain lexicon with most hits over its title, text and evidence texts.
- :func:`behaviour_description`: the E_beh input. Surface verbs and cues of the evidence are
  mapped to abstract behaviours (``BEHAVIOURS``); the description names the (at most three)
  behaviours with the most hits, in a fixed order, and no domain word at all, so two schemas
  from unrelated domains that act alike read alike (the DCPM sweeper's premise).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from topologies.text import tokens


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


GENERIC_DOMAINS = frozenset({"", "general", "core", "identity"})

DOMAIN_LEXICON: dict[str, frozenset[str]] = {
    "software": _words(
        "deploy deployment release staging production migration ci pipeline test tests flaky "
        "bug code review pr merge api backend frontend repo branch sprint standup incident "
        "rollback canary cache refactor"
    ),
    "support": _words(
        "ticket tickets customer customers refund refunds escalation sla zendesk complaint "
        "billing invoice agents queue macro churn"
    ),
    "research": _words(
        "paper papers conference submission reviewers advisor supervisor thesis experiment "
        "experiments ablation baseline arxiv camera-ready lab dataset results draft"
    ),
    "journalism": _words(
        "story stories editor article reporter newsroom interview sources quote publish "
        "headline desk outage utility press"
    ),
    "team_events": _words(
        "offsite venue agenda workshop team retreat dinner hotel flights lisbon catering "
        "icebreaker attendees rsvp"
    ),
    "health": _words(
        "doctor surgeon physio physiotherapy knee meniscus rehab pain clinic appointment mri "
        "surgery recovery medication crutches swelling health symptoms"
    ),
    "fitness": _words(
        "run running runs pace marathon workout gym training zumba yoga hiking cycling swim "
        "strava miles km"
    ),
    "finance": _words("budget salary rent tax taxes savings bank loan mortgage expenses pay paid"),
    "family_social": _words(
        "birthday party gift friends family mum mom dad kids wedding partner sister brother"
    ),
    "home": _words("apartment flat landlord kitchen bathroom plumber leak repair heating garden"),
    "learning": _words(
        "course class lesson study learn learning book reading lecture exam homework language"
    ),
}

# abstract behaviour -> word stems (prefix match on lower-cased tokens)
BEHAVIOURS: dict[str, tuple[str, ...]] = {
    "plans ahead and sets agendas": (
        "plan",
        "schedul",
        "agenda",
        "book",
        "prepar",
        "organi",
        "arrang",
        "calendar",
        "slot",
    ),
    "reschedules and renegotiates commitments": (
        "reschedul",
        "postpon",
        "moved",
        "delay",
        "cancel",
        "push",
        "shift",
        "slip",
        "resched",
    ),
    "works against hard deadlines": (
        "deadline",
        "due",
        "submit",
        "ship",
        "freeze",
        "cutoff",
        "countdown",
        "final",
        "launch",
        "release",
        "eta",
    ),
    "reviews, checks and verifies": (
        "review",
        "check",
        "verif",
        "test",
        "audit",
        "approv",
        "proofread",
        "inspect",
        "validat",
        "feedback",
        "comment",
    ),
    "escalates problems and raises alarms": (
        "escalat",
        "urgent",
        "complain",
        "incident",
        "outage",
        "blocker",
        "alert",
        "critical",
        "fail",
        "broke",
        "error",
        "bug",
    ),
    "coordinates with other people": (
        "meet",
        "call",
        "sync",
        "discuss",
        "invite",
        "colleague",
        "ask",
        "repl",
        "update",
        "message",
        "ping",
        "standup",
    ),
    "fixes things and recovers from setbacks": (
        "fix",
        "repair",
        "recover",
        "rehab",
        "patch",
        "rollback",
        "restor",
        "heal",
        "mitigat",
        "resolv",
        "workaround",
    ),
    "tracks and measures progress": (
        "track",
        "measur",
        "monitor",
        "metric",
        "progress",
        "dashboard",
        "log",
        "pace",
        "count",
        "percent",
        "rate",
    ),
    "learns and practises steadily": (
        "learn",
        "study",
        "practi",
        "exercis",
        "train",
        "lesson",
        "routine",
        "daily",
        "course",
    ),
    "manages money and resources": (
        "budget",
        "cost",
        "pay",
        "invoice",
        "refund",
        "price",
        "expens",
        "reimburs",
        "charge",
        "billing",
        "credit",
    ),
    "protects rest and wellbeing": (
        "sleep",
        "rest",
        "stress",
        "tired",
        "break",
        "walk",
        "relax",
        "ice",
        "sore",
        "pain",
    ),
    "writes things down and reports": (
        "write",
        "wrote",
        "draft",
        "note",
        "document",
        "report",
        "summar",
        "doc",
        "paper",
    ),
    "travels and relocates": (
        "flight",
        "hotel",
        "travel",
        "trip",
        "visa",
        "train",
        "airport",
        "fly",
        "commut",
    ),
}
_BEHAVIOUR_ORDER = {name: i for i, name in enumerate(BEHAVIOURS)}


def domain_of(category: str | None, texts: Iterable[str]) -> str:
    """The schema's life domain; 'general' when nothing specific is known.

    The fold's category when it is specific; else the lexicon (``DOMAIN_LEXICON`` first, then
    the fold's own ``topologies.text.CATEGORY_LEXICON``) with most hits over the texts.
    """
    if category and category not in GENERIC_DOMAINS:
        return category
    from topologies.text import CATEGORY_LEXICON

    counts = Counter(w.lower() for text in texts for w in tokens(text))
    best, best_hits = "general", 0
    for lexicon_set in (DOMAIN_LEXICON, CATEGORY_LEXICON):
        for domain, lexicon in lexicon_set.items():
            hits = sum(n for word, n in counts.items() if word in lexicon)
            if hits > best_hits:
                best, best_hits = domain, hits
    return best


def behaviour_tags(texts: Sequence[str], top: int = 3) -> list[str]:
    """Abstract behaviours seen in at least two texts (or in the only text), most hits first."""
    per_text: Counter[str] = Counter()
    for text in texts:
        words = {w.lower() for w in tokens(text)}
        seen = {
            name
            for name, stems in BEHAVIOURS.items()
            if any(word.startswith(stem) for word in words for stem in stems)
        }
        per_text.update(seen)
    need = 1 if len(texts) <= 4 else max(2, len(texts) // 4)
    ranked = [name for name, n in per_text.items() if n >= need]
    ranked.sort(key=lambda name: (-per_text[name], _BEHAVIOUR_ORDER[name]))
    chosen = ranked[:top]
    chosen.sort(key=lambda name: _BEHAVIOUR_ORDER[name])
    return chosen


def behaviour_description(texts: Sequence[str], top: int = 3) -> str:
    """The E_beh text: 'The user plans ahead and sets agendas; ...' ('' when none)."""
    tags = behaviour_tags(texts, top)
    return f"The user {'; '.join(tags)}." if tags else ""
