"""Which clusters become intents, which intent a cluster belongs to, when an intent goes stale.

Three rules on top of evidence density (``topologies/intents.py``), so that what a notifier
sends is a goal the person has, once:

- **An intent only for a goal.** The evidence events of the cluster must carry goal cues
  (``topologies/goals.py``: a date ahead with a commitment, commitments on several days, a
  problem returning on several days; several sources add to it): ``GoalEvidence.score`` at
  least ``IntentConfig.goal_min_score``. A dense cluster of chatter is a topic, not a goal.
- **One intent per goal.** A would-be intent is the goal of an existing open (or expired)
  intent when its seed concept already triggers that intent, or when at least
  ``IntentConfig.duplicate_overlap`` of its evidence mass E(c) lies on concepts that trigger
  it. Then the existing intent is reinforced (nothing is emitted) or, if it had expired and the
  goal test passes again, brought back to pending (emitted as a status change).
- **One intent per goal, whatever the embedder.** Concepts are drawn by embedding similarity,
  so one goal can reach emergence through two sets of concepts (a passport's booking and its
  photo appointment). A would-be intent whose title names the same thing as a pending intent's
  (a noun in common: "Get a new passport", "Passport application") and whose evidence shares
  an event or a named entity with it (``same_goal``) is that goal: it reinforces the pending
  intent and nothing is emitted. The same holds for a goal resolved within the stale horizon:
  talk about the party after the party is no new goal; nor is a would-be intent whose seed
  concept, or most of whose evidence events' concepts, trigger a goal resolved within the
  stale horizon (``reached_lately``), whatever its title: the same themes, one goal, and
  its aftermath. Whatever the titles, two more things make one goal of them: evidence from
  one conversation (an email thread, a ticket: a seat upgrade offered in the booking's
  thread belongs to the trip), and one dated occasion: both are due the same day and the
  events naming that day on both sides share a word of their headings and a named thing
  (``dated_thing``: "Budget request: team offsite, Lisbon 29 Sep" beside "Offsite to-do"
  and the Lisbon venue: the budget and the venue are steps of the offsite). Goals due the
  same day on different things (the passport and the dental crown before one flight) share
  no heading and stay two.
- **Stale intents expire.** A pending intent whose goal got no new evidence (an event with a
  goal cue) for ``stale_after_days``, or whose deadline passed ``deadline_grace_days`` ago with
  no evidence since, moves to ``expired``, emitted as a status change like any other. The
  engine keeps the due time of every pending intent in ``memory.meta[DUE_KEY]`` (tens of
  entries: the pending intents), so each fold checks them without walking the graph.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from schemas.graph import EdgeKind, Node, NodeKind
from schemas.intents import OPEN_STATUSES, IntentStatus
from topologies.config import IntentConfig
from topologies.entities import entities_of
from topologies.goals import MAX_TEXT, GoalEvidence, cached_signals, content_words
from topologies.memory import TenantMemory
from topologies.text import find_dates
from topologies.topics import MEMBER_EDGES

DUE_KEY = "intents_due"  # pending intent id -> ISO time it expires unless new evidence comes
LAST_EVIDENCE_ATTR = "last_evidence"  # INTENT attrs: stream time of its latest goal evidence
MAX_GOAL_EVENTS = 256  # most recent evidence events read for goal cues
MAX_TRIGGERS = 16  # newest TRIGGERS out-edges read per concept for the intent it serves
MAX_EXPIRE = 16  # intents expired per fold at most (the rest on the next folds)
MAX_SAME_GOAL_EVENTS = 64  # evidence events of a pending intent read for shared entities
NAMED_ENTITY_KINDS = ("name:", "ticket:", "channel:", "thread:")  # what a goal can be about
CONVERSATION_KINDS = ("thread:", "ticket:")  # one conversation, one work item: one goal
MIN_SOURCES = 2  # sources a one-concept goal's evidence must come from
MIN_SINGLE_EVENTS = 3  # events a one-concept goal's evidence must hold
TRACKED = frozenset({*OPEN_STATUSES, IntentStatus.EXPIRED})


def goal_evidence(memory: TenantMemory, event_ids: Iterable[str]) -> GoalEvidence:
    """Goal cues over the most recent evidence events."""
    graph = memory.graph
    nodes = [graph.node(e) for e in event_ids if e in graph]
    nodes.sort(key=lambda n: (n.ts or n.created_at, n.id), reverse=True)
    found = GoalEvidence()
    for node in nodes[:MAX_GOAL_EVENTS]:
        found.add(node, cached_signals(node))
    return found


def goal_of(
    memory: TenantMemory, seed: str, evidence: dict[str, float], overlap: float
) -> str | None:
    """The open or expired intent whose goal this cluster is, if any (see the module doc)."""
    graph = memory.graph
    mass = sum(evidence.values())
    shared: dict[str, float] = {}
    seeded: set[str] = set()
    for concept in dict.fromkeys([seed, *evidence]):
        for intent_id in graph.recent_targets(concept, EdgeKind.TRIGGERS, MAX_TRIGGERS):
            shared[intent_id] = shared.get(intent_id, 0.0) + evidence.get(concept, 0.0)
            if concept == seed:
                seeded.add(intent_id)
    for intent_id, weight in sorted(shared.items(), key=lambda kv: (-kv[1], kv[0])):
        node = graph.get(intent_id)
        if node is None or node.kind != NodeKind.INTENT or node.status not in TRACKED:
            continue
        if intent_id in seeded or (mass > 0 and weight >= overlap * mass):
            return node.id
    return None


def same_goal(
    memory: TenantMemory,
    words: frozenset[str],
    event_ids: Iterable[str],
    words_of: Callable[[Node], frozenset[str]],
    concepts: Iterable[str] = (),
    resolved_since: datetime | None = None,
    day: date | None = None,
) -> str | None:
    """The pending intent this would-be intent duplicates (see the module doc), or the intent
    resolved after ``resolved_since`` that one of ``concepts`` triggers and that it repeats
    (what is said about a goal after it was reached is no new goal): its title's nouns
    (``words_of``) share one of ``words`` and its evidence shares an event or a named entity
    with ``event_ids``; or its evidence shares a conversation (a thread, a ticket) with
    ``event_ids``; or it is due on ``day`` (the would-be intent's deadline day) and the
    events naming that day on both sides share a heading word and a named thing
    (``dated_thing``).
    None when there is none. Reads the pending intents and the intents the concepts trigger
    only."""
    graph = memory.graph
    events = {e for e in event_ids if e in graph}
    entities: set[str] | None = None  # read only when a title shares a noun
    talks: set[str] | None = None  # the would-be intent's threads and tickets, read once
    occasion: DatedThing | None = None  # its dated thing, read once
    candidates = dict.fromkeys(sorted(memory.meta.get(DUE_KEY) or {}))
    if resolved_since is not None:
        for concept in concepts:
            candidates.update(
                dict.fromkeys(graph.recent_targets(concept, EdgeKind.TRIGGERS, MAX_TRIGGERS))
            )
    for intent_id in candidates:
        node = graph.get(intent_id)
        if node is None or node.kind != NodeKind.INTENT:
            continue
        reached = (
            node.status == IntentStatus.RESOLVED
            and resolved_since is not None
            and node.updated_at >= resolved_since
        )
        if node.status != IntentStatus.PENDING and not reached:
            continue
        theirs = intent_evidence(memory, intent_id)
        if words & words_of(node):
            if events & theirs:
                return node.id
            if entities is None:
                entities = _named_entities(memory, events)
            if entities & _named_entities(memory, theirs):
                return node.id
        if talks is None:
            talks = _named_entities(memory, events, CONVERSATION_KINDS)
        if talks & _named_entities(memory, theirs, CONVERSATION_KINDS):
            return node.id
        if day is None or node.deadline is None or node.deadline.date() != day:
            continue
        if occasion is None:
            occasion = dated_thing(memory, events, day)
        if occasion.shared_with(dated_thing(memory, theirs, day)):
            return node.id
    return None


def dated_thing(memory: TenantMemory, event_ids: Iterable[str], day: date) -> DatedThing:
    """What the events naming ``day`` are about: the words of their headings (subject lines,
    note and calendar titles: "Budget request: Data Platform offsite, Lisbon 29 Sep",
    "Offsite to-do") and the things their text names (places, products, tickets). A person's
    name says who wrote or spoke (a chat's heading is the correspondent's name), not what
    about, and is left out of both."""
    graph = memory.graph
    nodes = sorted((graph.node(e) for e in event_ids if e in graph), key=lambda n: n.id)
    words: set[str] = set()
    names: set[str] = set()
    for node in nodes[:MAX_SAME_GOAL_EVENTS]:
        if node.ts is None or not node.title:
            continue
        text = f"{node.title}\n{node.text}"[:MAX_TEXT]
        if not any(m.when.date() == day for m in find_dates(text, node.ts)):
            continue
        people = {w for p in node.participants for w in content_words(p)}
        words |= content_words(node.title) - people
        entities = entities_of(memory, node)
        people |= {w for e in entities if e.startswith("person:") for w in _words_of(e)}
        names |= {e for e in entities if e.startswith(NAMED_ENTITY_KINDS) and _words_of(e) - people}
    return DatedThing(frozenset(words), frozenset(names))


def _words_of(entity: str) -> frozenset[str]:
    return content_words(entity.partition(":")[2])


@dataclass(frozen=True)
class DatedThing:
    """The headings' words and the named things of a goal's events that name one day."""

    words: frozenset[str]
    names: frozenset[str]

    def shared_with(self, other: DatedThing) -> bool:
        """Both speak of one occasion: a heading word and a named thing in common."""
        return bool(self.words & other.words) and bool(self.names & other.names)


def reached_lately(
    memory: TenantMemory, seed: str, event_ids: Iterable[str], since: datetime
) -> str | None:
    """The intent resolved after ``since`` whose goal a would-be intent repeats: the seed
    concept triggers it, or more than half of the would-be intent's evidence events ground
    a concept that triggers it. Its goal was reached on these themes lately, so what their
    events say now (the refunds' last wave, settling the party's costs) is that goal's
    aftermath, not a new goal (see the module doc); None when there is none."""
    graph = memory.graph
    events = sorted(e for e in event_ids if e in graph)[:MAX_SAME_GOAL_EVENTS]
    votes: Counter[str] = Counter()
    for event in events:
        themes = {e.dst for kind in MEMBER_EDGES for e in graph.out_edges(event, kind)}
        votes.update(
            {i for c in themes for i in graph.recent_targets(c, EdgeKind.TRIGGERS, MAX_TRIGGERS)}
        )
    seeded = set(graph.recent_targets(seed, EdgeKind.TRIGGERS, MAX_TRIGGERS))
    for intent_id in sorted(seeded | {i for i, n in votes.items() if 2 * n > len(events)}):
        node = graph.get(intent_id)
        if node is None or node.kind != NodeKind.INTENT:
            continue
        if node.status == IntentStatus.RESOLVED and node.updated_at >= since:
            return node.id
    return None


def intent_evidence(memory: TenantMemory, intent_id: str) -> set[str]:
    """EVENT nodes grounding or reinforcing the intent or a concept that triggers it (the
    most recently attached, bounded)."""
    graph = memory.graph
    events = graph.ids(NodeKind.EVENT)  # a source is an edge's end: in the graph, not an alias
    holders = [intent_id, *graph.recent_sources(intent_id, EdgeKind.TRIGGERS, MAX_TRIGGERS)]
    found: set[str] = set()
    for holder in holders:
        for kind in (EdgeKind.GROUNDS, EdgeKind.REINFORCES):
            found |= events.intersection(graph.recent_sources(holder, kind, MAX_SAME_GOAL_EVENTS))
    return found


def _named_entities(
    memory: TenantMemory, event_ids: Iterable[str], kinds: tuple[str, ...] = NAMED_ENTITY_KINDS
) -> set[str]:
    graph = memory.graph
    nodes = sorted((graph.node(e) for e in event_ids), key=lambda n: n.id)
    return {
        entity
        for node in nodes[:MAX_SAME_GOAL_EVENTS]
        for entity in entities_of(memory, node)
        if entity.startswith(kinds)
    }


def converges(memory: TenantMemory, event_ids: Iterable[str]) -> bool:
    """Whether evidence events of one theme come from several sources (a calendar entry, an
    email and a note about one thing): the single-concept form of converging evidence."""
    graph = memory.graph
    sources = {graph.node(e).source for e in event_ids if e in graph}
    sources.discard(None)
    events = sum(1 for e in event_ids if e in graph)
    return len(sources) >= MIN_SOURCES and events >= MIN_SINGLE_EVENTS


def serves_other_goal(memory: TenantMemory, concept: str, intent_id: str | None) -> bool:
    """Whether the concept already triggers another open intent (a theme supports one goal at
    a time: reinforcing an intent does not pull in another goal's concepts)."""
    graph = memory.graph
    for target in graph.recent_targets(concept, EdgeKind.TRIGGERS, MAX_TRIGGERS):
        other = graph.get(target)
        if other is not None and other.id != intent_id and other.status in OPEN_STATUSES:
            return True
    return False


# ------------------------------------------------------------------ staleness
def due_at(node: Node, config: IntentConfig) -> datetime:
    """When a pending intent expires unless new evidence comes."""
    last = last_evidence(node)
    due = last + timedelta(days=config.stale_after_days)
    if node.deadline is not None:
        due = min(due, max(node.deadline, last) + timedelta(days=config.deadline_grace_days))
    return due


def last_evidence(node: Node) -> datetime:
    stored = node.attrs.get(LAST_EVIDENCE_ATTR)
    return datetime.fromisoformat(stored) if isinstance(stored, str) else node.updated_at


def due_map(memory: TenantMemory, config: IntentConfig) -> dict[str, str]:
    """The pending intents' due times; built once from the graph for a memory that predates
    them (the one fold that does it reads every intent; later folds read the map)."""
    stored = memory.meta.get(DUE_KEY)
    if isinstance(stored, dict):
        return dict(stored)
    return {
        node.id: due_at(node, config).isoformat()
        for node in memory.graph.nodes(NodeKind.INTENT)
        if node.status == IntentStatus.PENDING
    }


def track(memory: TenantMemory, intent_id: str, config: IntentConfig) -> None:
    """Record (pending) or forget (any other status) an intent's due time."""
    due = due_map(memory, config)
    node = memory.graph.get(intent_id)
    if node is not None and node.status == IntentStatus.PENDING:
        due[node.id] = due_at(node, config).isoformat()
    else:
        due.pop(intent_id, None)
    memory.set_meta(DUE_KEY, due)


def overdue(memory: TenantMemory, now: datetime, config: IntentConfig) -> list[str]:
    """Pending intents due at ``now``, earliest first (at most MAX_EXPIRE)."""
    due = due_map(memory, config)
    if DUE_KEY not in memory.meta and due:
        memory.set_meta(DUE_KEY, due)
    late = [
        (when, intent_id) for intent_id, when in due.items() if datetime.fromisoformat(when) <= now
    ]
    late.sort()
    return [intent_id for _, intent_id in late[:MAX_EXPIRE]]
