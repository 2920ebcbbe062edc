"""Intent emergence and lifecycle (docs/DESIGN.md section 5; CogniFold §3.3 and Table 10).

Evidence density, for one fold at stream time ``now``:

- *seeds*: the CONCEPT nodes the fold created or reinforced (at most ``MAX_SEEDS``).
- *cluster* ``K(s)``: the seed plus its strongest concept neighbours (one hop over RELATED_TO,
  CAUSES, PART_OF and TRIGGERS in either direction, ranked by decayed edge weight; at most
  ``MAX_CLUSTER`` concepts in all). Superseded concepts are left out.
- *evidence* of a concept ``E(c) = sum of w(e, now)`` over its GROUNDS / REINFORCES in-edges
  ``e`` from EVENT nodes whose event time lies in ``[now - window_days, now]`` (and after
  ``since``, see below), ``w`` being the lazily decayed edge weight. Only the
  ``MAX_EVIDENCE_SCAN`` most recently attached GROUNDS and REINFORCES sources of a concept are
  read (each kind), so a hub concept costs a bounded amount.
- *supporting concepts* ``S = {c in K : E(c) > 0}``.
- *connectivity* ``kappa(S)`` = share of the ``|S|(|S|-1)/2`` concept pairs of ``S`` joined by
  any edge (either direction); 0 when ``|S| < 2``.
- *density* ``D = kappa(S) * sum_{c in S} E(c)``.

For one supporting concept, ``kappa`` is 1 when its evidence events come from several sources
(``intent_boundaries.converges``: a registration email, training notes, calendar entries about
one race), else 0.

An intent crystallises when ``D >= theta[category]``, ``|S| >= min_supporting_concepts`` (or
one converging concept), the evidence comes from at least ``MIN_EVIDENCE_EVENTS`` distinct
events, and its evidence events carry goal cues (``GoalEvidence.score >= goal_min_score``,
``topologies/goals.py``), and, for a goal only said on several days (no dated commitment, no
problem returning that an action of the evidence is about), a sentence carrying a cue writes
the thing its title is about and its verb (``IntentEmergence._cued_goal``; a refusal is kept
in ``memory.meta`` until a new cue comes).
Before that, ``intent_boundaries.goal_of`` looks for the intent
whose goal this cluster already is (its seed triggers it, or ``duplicate_overlap`` of the
evidence mass lies on concepts that trigger it): an open one is reinforced instead (REINFORCES
from the event when it touched one of the goal's themes, TRIGGERS from new supporting concepts
that serve no other open goal, its deadline refreshed, its staleness clock reset when the event
carries a goal cue); an expired one comes back to pending if the cluster passes the tests
again. Concepts already triggering another open intent are left out of a new intent (one goal
per theme at a time), at most ``MAX_SUPPORT`` concepts support one. If a *closed* intent
(resolved / rejected) covers the cluster, only evidence newer than its closing (``since``)
counts, so a resolved goal does not re-emerge from the evidence that produced it. Pending
intents past their due time expire (``IntentEmergence.expire``, every fold, bounded).

Deadline: the day the goal's own events (its seed theme's, and those attached to the intent)
name most often in their words, then one named after a deadline cue, then the one named first
(``_deadlines``): the race, not the bib pickup the day before it. A goal is *reached* when an
event about it, dated on or after its deadline's day, says something happened or was done
(``goals.Signals.done``) and the goal's events plan for no later day, or says it was decided
(``Signals.decided``: "GO for 1 Dec" after the go/no-go review), the intent is resolved; when
the person's own event before the deadline says their step was done and names the day the
rest happens ("Done! Ready for pick-up from 24 Nov"), it is action_scheduled (emitted as
status changes; no threshold feedback, the person judged nothing), when the step is this
goal's (``_step_of_the_goal``): what the event reports done names the goal's object, or a
thing the goal's events name with it (the passport photo), not a neighbouring goal's step of
the same theme ("Demo went well" does not send the review deck). A deadline that has passed
stays what the goal was due by (the review's, not the launch's after it) unless an event says
the date was moved (``Signals.moved``) or an event that speaks of the goal's object names a
later day it is due by (``_about_the_goal``: the offsite's OKR draft, due 31 Oct, does not
move "Decide on the venue"); one passed earlier today stays until the day is over,
so the evening's evidence still finds it. A date not yet passed moves when the latest of the
goal's own events that says a date was moved (``goals.date_move``: "Moving the multi-depot demo
to Tuesday 28 April") moves the goal's day (said by an event that speaks of the goal's object),
or the thing an event writes against that day, to a later one (``_moved_day``): however often
the old day was named, it is no longer the date. Short of a move, it holds while the evidence
grows (``_holds``) against any day but a clearly better one: named by more of the goal's events
that speak of its object, and one something is due by when the current day is (the deck due
18 Nov holds against the partner demo's 11 Nov, Legal's screens due 16 Nov and the review on
19 Nov; the passport needed before the 18 Dec flight against its 17 Nov appointment). A day
no text names moves it only when a planner set it for the latest evidence, not an older anchor
of the goal's concepts that a fold's theme happens to reach.

Category: the most common ``category`` among ``S`` (ties: more evidence, then the name;
default ``"general"``). Threshold ``theta[category]`` lives in ``memory.meta`` under
``intent_threshold:<category>``, starting at ``initial_threshold``; EMA updates with
``beta = ema_beta``: ``theta <- (1 - beta) * theta + beta * target``, clamped to
``[min_threshold, max_threshold]``, where target is

- the emitted density ``D`` after each emission (so one category does not flood),
- ``0.9 * D_intent`` on resolved / action_scheduled feedback (emission was useful: easier),
- ``1.3 * D_intent`` on rejected feedback (harder); deferred and pending leave it unchanged.

Every change goes through ``PlanExecutor.apply`` (the same validation as planner plans), and
intent ids are derived by the executor from (tenant, event id, ref): a replay of the same
stream yields the same ids.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import lru_cache

import numpy as np
import structlog

from schemas.errors import InvalidTransitionError, NotFoundError
from schemas.graph import Edge, EdgeKind, Node, NodeKind
from schemas.intents import OPEN_STATUSES, Intent, IntentStatus, can_transition
from schemas.plans import AddEdge, AddNode, PlanOp, UpdateNode, UpdatePlan
from topologies.config import EngineConfig
from topologies.edge_cache import micros
from topologies.embedding import Embedder
from topologies.event_order import EventOrder
from topologies.executor import PlanExecutor
from topologies.goals import (
    MAX_TEXT,
    GoalEvidence,
    cached_signals,
    content_words,
    cue_sentences,
    date_move,
    done_reports,
    says_moved,
    sentences,
)
from topologies.graph import MemoryGraph, decayed_weight
from topologies.intent_boundaries import (
    LAST_EVIDENCE_ATTR,
    MAX_TRIGGERS,
    converges,
    goal_evidence,
    goal_of,
    intent_evidence,
    last_evidence,
    overdue,
    reached_lately,
    same_goal,
    serves_other_goal,
    track,
)
from topologies.memory import TOPIC, TenantMemory
from topologies.naming import Namer, next_naming, redate, with_deadline
from topologies.naming.phrases import is_own
from topologies.naming.titles import (
    head_word,
    held_on,
    is_derived,
    is_follow_up,
    writes_the_action,
)
from topologies.node_memo import NodeMemo
from topologies.scope import FoldScope
from topologies.text import DateMention, find_dates

__all__ = ["Cluster", "IntentEmergence", "evidence_event_ids", "intent_view", "with_deadline"]

log = structlog.get_logger(__name__)

MAX_SEEDS = 8  # seed concepts examined per fold
MAX_CLUSTER = 8  # concepts per cluster (seed included)
MAX_SUPPORT = 3  # TRIGGERS edges written per intent (a goal spans two or three themes)
MAX_EVIDENCE_SCAN = 64  # evidence edges read per concept and kind (the most recent)
MAX_EVIDENCE_IDS = 32  # RawEvent ids listed in an intent view
MAX_DEADLINES = 3  # DEADLINE_FOR edges written per intent
OLDER_RUN = 16  # consecutive evidence events before the window that end a concept's scan
MAX_TIME_SCAN = 32  # most recent TIME anchors read per concept or event for a deadline
MIN_EVIDENCE_EVENTS = 2  # distinct events behind an intent
TITLED_AT_ATTR = "titled_at"  # INTENT attrs: evidence events when the title was last chosen
DROPPED_ATTR = "dropped_objects"  # INTENT attrs: objects of the titles it was renamed from
MAX_DROPPED = 8
MAX_GOAL_DATES = 8  # dates read from one event's words for the goal's date
MIN_NAMING = 2  # events naming a day ahead that make it a date the goal keeps pointing at
MAX_NOTES = 20
GOAL_DATES = "goal_dates"  # memory.node_memo: the dates an event's words name

CLUSTER_EDGES = frozenset(
    {EdgeKind.RELATED_TO, EdgeKind.CAUSES, EdgeKind.PART_OF, EdgeKind.TRIGGERS}
)
EVIDENCE_KINDS = (EdgeKind.GROUNDS, EdgeKind.REINFORCES)
THRESHOLD_KEY = "intent_threshold:{category}"
# memory.meta: the goal cues (``_cue_key``) of a seed's cluster whose title named no goal they
# speak of (``IntentEmergence._cued_goal``): its title is chosen again only at a new cue
NO_GOAL_KEY = "no_goal:{seed}"
EASIER, HARDER = 0.9, 1.3
CLOSED = frozenset({IntentStatus.RESOLVED, IntentStatus.REJECTED})
PROGRESSING = frozenset({IntentStatus.PENDING, IntentStatus.ACTION_SCHEDULED})


@dataclass
class Cluster:
    """One seed's concept cluster and its measured evidence."""

    seed: str
    members: list[str]
    evidence: dict[str, float] = field(default_factory=dict)  # supporting concept -> E(c)
    events: dict[str, set[str]] = field(default_factory=dict)  # concept -> evidence event nodes
    connectivity: float = 0.0
    category: str = "general"
    goal: GoalEvidence = field(default_factory=GoalEvidence)  # goal cues of the evidence

    @property
    def supporting(self) -> list[str]:
        """Concepts with evidence: the seed (the concept the event touched: the goal's own
        theme) first, then strongest first (ties by id)."""
        return [c for c in self.members if c in self.evidence]

    @property
    def density(self) -> float:
        return self.connectivity * sum(self.evidence.values())

    @property
    def event_ids(self) -> set[str]:
        return set().union(*self.events.values()) if self.events else set()


class IntentEmergence:
    """Crystallises intents from dense concept clusters; runs the intent lifecycle."""

    def __init__(
        self,
        executor: PlanExecutor,
        embedder: Embedder,
        config: EngineConfig,
        namer: Namer | None = None,
    ) -> None:
        self.executor = executor
        self.embedder = embedder
        self.config = config
        self.namer = namer if namer is not None else Namer(embedder)
        self._reads: FoldReads | None = None  # the running fold's (``emerge``)

    # ---------------------------------------------------------------- emergence
    def emerge(self, memory: TenantMemory, scope: FoldScope) -> list[str]:
        """Examine the clusters of the concepts this fold created or reinforced.

        Returns the ids of the intents that crystallised in this fold.
        """
        if not scope.event_node_id:
            return []
        self._reads = FoldReads(memory.graph)  # this fold's
        try:
            return self._emerge(memory, scope)
        finally:
            self._reads = None

    def _newest(self, memory: TenantMemory, events: Iterable[str], now: datetime) -> list[str]:
        """The ids of the events, newest first (``memory.event_order``: each event's place is
        read once, not at every reinforcement of its goal)."""
        return memory.event_order.newest(memory.graph, events, now)

    def _intent_evidence(self, memory: TenantMemory, intent_id: str) -> set[str]:
        """``intent_evidence``, read once while the graph's edges stay as they are (a
        reinforcement asks for it up to four times before it writes); not to be changed."""
        reads = self._reads
        if reads is None or reads.graph is not memory.graph:
            return intent_evidence(memory, intent_id)
        stamp = memory.graph.edges_stamp
        kept = reads.evidence.get(intent_id)
        if kept is None or kept[0] != stamp:
            kept = reads.evidence[intent_id] = (stamp, intent_evidence(memory, intent_id))
        return kept[1]

    def _latest(self, memory: TenantMemory, events: Iterable[str], now: datetime) -> list[Node]:
        """The ``MAX_TIME_SCAN`` newest of the events' nodes, newest first: the ones whose
        words a goal's dates are read from."""
        graph = memory.graph
        return [graph.node(e) for e in self._newest(memory, events, now)[:MAX_TIME_SCAN]]

    def _emerge(self, memory: TenantMemory, scope: FoldScope) -> list[str]:
        created: list[str] = []
        handled: set[str] = set()  # intents created or reinforced in this fold
        covered: set[str] = set()  # concepts already part of a handled cluster
        overlap = self.config.intents.duplicate_overlap
        for seed in self._seeds(memory, scope):
            if seed in covered:
                continue
            cluster = self._cluster(memory, seed, scope.now)
            self._measure(memory, cluster, scope.now, None)
            existing = goal_of(memory, seed, cluster.evidence, overlap)
            if existing is not None and memory.graph.node(existing).status in OPEN_STATUSES:
                if existing not in handled:  # the same goal: corroborate, emit nothing
                    self._reinforce(memory, scope, existing, cluster)
                    handled.add(existing)
                covered.update(cluster.members)
                continue
            horizon = scope.now - timedelta(days=self.config.intents.stale_after_days)
            if existing is None and reached_lately(memory, seed, cluster.event_ids, horizon):
                covered.update(cluster.members)  # the aftermath of a goal reached lately
                continue
            since = self._closed_since(memory, cluster.supporting)
            free = [m for m in cluster.members if not serves_other_goal(memory, m, existing)]
            if since is not None or len(free) < len(cluster.members):
                # only newer evidence than a closed intent's counts; a theme serving another
                # open goal is not this one's (one goal per theme at a time)
                cluster.members = [seed, *(m for m in free if m != seed)]
                self._measure(memory, cluster, scope.now, since)
            cluster.goal = goal_evidence(memory, cluster.event_ids)
            if existing is not None:  # an expired intent: its goal comes back, or stays quiet
                if existing not in handled and self._revive(memory, scope, existing, cluster):
                    handled.add(existing)
                    covered.update(cluster.members)
                continue
            outcome = self._maybe_emit(memory, scope, cluster)
            if outcome is not None:
                intent_id, new = outcome
                if new:
                    created.append(intent_id)
                handled.add(intent_id)
                covered.update(cluster.members)
        self.expire(memory, scope)
        return created

    def _seeds(self, memory: TenantMemory, scope: FoldScope) -> list[str]:
        concepts = memory.graph.ids(NodeKind.CONCEPT)
        seeds: dict[str, None] = {}
        for raw in sorted(scope.created) + sorted(scope.reinforced):
            node_id = memory.graph.resolve(raw)
            if node_id in concepts:
                seeds.setdefault(node_id, None)
        return list(seeds)[:MAX_SEEDS]

    def _cluster(self, memory: TenantMemory, seed: str, now: datetime) -> Cluster:
        graph = memory.graph
        concepts = graph.ids(NodeKind.CONCEPT)
        decay = self.config.consolidation.decay_per_day
        strength: dict[str, float] = {}
        for edge in _concept_links(graph, seed):  # kind-filtered: not the seed's REINFORCES
            other = edge.dst if edge.src == seed else edge.src
            if other not in concepts or other == seed:
                continue
            node = graph.node(other)
            if node.superseded_by is not None:
                continue
            weight = decayed_weight(edge, now, decay)
            strength[other] = max(strength.get(other, 0.0), weight)
        # equally strong links (one association each, the common case) are told apart by how
        # close the two concepts' members are (topic centroids), not by their ids
        closeness = _closeness(memory, seed, strength)
        ranked = sorted(strength, key=lambda c: (-round(strength[c], 2), -closeness[c], c))
        # a neighbour whose members speak of something else is an association, not support
        floor = self.config.intents.support_similarity
        ranked = [c for c in ranked if closeness[c] >= floor]
        return Cluster(seed=seed, members=[seed, *ranked[: MAX_CLUSTER - 1]])

    def _closed_since(self, memory: TenantMemory, members: list[str]) -> datetime | None:
        """Latest closing time of a resolved or rejected intent triggered by more than half of
        the members: evidence from before it produced that intent and does not count again."""
        graph = memory.graph
        votes: Counter[str] = Counter()
        for concept in members:
            for intent_id in graph.recent_targets(concept, EdgeKind.TRIGGERS, MAX_TRIGGERS):
                votes[intent_id] += 1
        since: datetime | None = None
        for intent_id, count in sorted(votes.items(), key=lambda kv: (-kv[1], kv[0])):
            node = graph.get(intent_id)
            if node is None or node.kind != NodeKind.INTENT or not members:
                continue
            if count * 2 <= len(members) or node.status not in CLOSED:
                continue
            since = node.updated_at if since is None else max(since, node.updated_at)
        return since

    def _measure(
        self, memory: TenantMemory, cluster: Cluster, now: datetime, since: datetime | None
    ) -> None:
        graph = memory.graph
        cluster.evidence.clear()
        cluster.events.clear()
        cluster.connectivity = 0.0
        window = self._window(now, since)  # one cluster, one window: read once, not per concept
        for concept in cluster.members:
            total, events = self._scan_evidence(memory, concept, window)
            if total > 0.0:
                cluster.evidence[concept] = total
                cluster.events[concept] = events
        support = cluster.supporting
        pairs = len(support) * (len(support) - 1) // 2
        if pairs:
            linked = sum(1 for a in support for b in support if a < b and graph.adjacent(a, b))
            cluster.connectivity = linked / pairs
        elif support and converges(memory, cluster.events[support[0]]):
            cluster.connectivity = 1.0  # one theme that several sources converge on
        cluster.category = self._category(memory, cluster)

    def _evidence(
        self, memory: TenantMemory, concept: str, now: datetime, since: datetime | None
    ) -> tuple[float, set[str]]:
        """E(c) and the EVENT nodes behind it (see the module docstring)."""
        return self._scan_evidence(memory, concept, self._window(now, since))

    def _window(self, now: datetime, since: datetime | None) -> EvidenceWindow:
        """The evidence window at ``now`` (after ``since``): a cluster's concepts share it."""
        window_start = now - timedelta(days=self.config.intents.window_days)
        # no ``since``: every event in the window counts (an event time is never below -inf)
        after = -math.inf if since is None else since.timestamp()
        fading = -self.config.consolidation.decay_per_day
        return window_start.timestamp(), now.timestamp(), after, micros(now), fading

    @staticmethod
    def _scan_evidence(
        memory: TenantMemory, concept: str, window: EvidenceWindow
    ) -> tuple[float, set[str]]:
        """``_evidence`` in a window read before: a fold measures some ten concepts."""
        graph = memory.graph
        total, events = 0.0, set[str]()
        start, end, after, now_us, fading = window
        exp = math.exp
        for kind in EVIDENCE_KINDS:  # the most recently attached of each kind: bounded
            older = 0  # events attach roughly in time order: a run of old ones ends the window
            # the scan is kept between folds (memory.edge_cache): EVENT sources, their times
            for src, ts, edge, touched in memory.edge_cache.evidence(
                graph, concept, kind, MAX_EVIDENCE_SCAN
            ):
                if ts < start:
                    older += 1
                    if older >= OLDER_RUN:
                        break
                    continue
                older = 0
                if ts > end or ts <= after:
                    continue
                # ``decayed_weight(edge, now, decay)``, to the bit, without a timedelta per
                # edge: a fold sums some thousand of them
                days = (now_us - touched) / 1_000_000 / 86400.0
                total += edge.w0 * exp(fading * (days if days > 0.0 else 0.0))
                events.add(src)
        return total, events

    @staticmethod
    def _category(memory: TenantMemory, cluster: Cluster) -> str:
        counts: Counter[str] = Counter()
        weight: dict[str, float] = {}
        for concept in cluster.supporting:
            category = memory.graph.node(concept).category or "general"
            counts[category] += 1
            weight[category] = weight.get(category, 0.0) + cluster.evidence[concept]
        if not counts:
            return "general"
        return min(counts, key=lambda c: (-counts[c], -weight[c], c))

    def _maybe_emit(
        self, memory: TenantMemory, scope: FoldScope, cluster: Cluster
    ) -> tuple[str, bool] | None:
        """The intent the cluster crystallises into (created True), or the pending intent of
        the same goal it reinforced (created False); None when it is no goal yet."""
        cfg = self.config.intents
        density = cluster.density
        threshold = self.threshold(memory, cluster.category)
        if len(cluster.supporting) < cfg.min_supporting_concepts and cluster.connectivity <= 0:
            return None
        if len(cluster.event_ids) < MIN_EVIDENCE_EVENTS or density < threshold:
            return None
        if cluster.goal.score < cfg.goal_min_score:  # a topic, not a goal
            return None
        cues = _cue_key(cluster.goal)
        if memory.meta.get(NO_GOAL_KEY.format(seed=cluster.seed)) == cues:
            return None  # found no goal in these very cues before: asked again at a new cue
        deadlines = self._deadlines(memory, cluster, scope.now)
        deadline = _anchor(deadlines[0]) if deadlines else None
        evidence = sorted(cluster.event_ids)
        title = self.namer.title_intent(
            memory, evidence, deadline, cluster.supporting[:MAX_SUPPORT]
        )
        twin = same_goal(
            memory,
            self.namer.goal_words(title),
            evidence,
            self._goal_words,
            cluster.supporting,
            scope.now - timedelta(days=cfg.stale_after_days),
            None if deadline is None else deadline.date(),
        )
        if twin is not None and memory.graph.node(twin).status == IntentStatus.PENDING:
            self._reinforce(memory, scope, twin, cluster)  # reached through other concepts
            return twin, False
        if twin is not None:  # a goal reached lately: what follows it is no new goal
            return None
        if not self._cued_goal(memory, cluster, title):
            memory.set_meta(NO_GOAL_KEY.format(seed=cluster.seed), cues)
            return None
        ref = f"intent.{cluster.seed}"
        plan = self._creation_plan(
            memory, scope, cluster, ref, (density, threshold), deadlines, title
        )
        self.executor.apply(memory, plan, scope)
        intent_id = scope.ref_ids[ref]
        track(memory, intent_id, cfg)
        self._move_threshold(memory, cluster.category, density)
        log.info(
            "intent_emerged",
            tenant=memory.tenant,
            intent_id=intent_id,
            category=cluster.category,
            density=round(density, 3),
            threshold=round(threshold, 3),
            supporting=len(cluster.supporting),
        )
        return intent_id, True

    def _cued_goal(self, memory: TenantMemory, cluster: Cluster, title: str) -> bool:
        """Whether the goal the title names is what the evidence's goal cues speak of, where
        nothing else makes it one: a sentence that carries a cue (a commitment, a problem, a
        day ahead) writes the thing the title's action is done to, and the action itself
        ("we're planning a big family reunion next summer": "Plan the family reunion"; "We'll
        definitely have a great time on our hike" plans no hike), its verb unless the namer
        supplied it (``titles.writes_the_action``). Asked of a goal only said on several
        days: no event commits to a day ahead ("Flights booked: Lisbon, 18 Dec" makes the
        trip a goal, whatever its title), no problem comes back on another day (the flaky
        test failing all week is a goal, and "Replace the RouteCache singleton" its fix, in
        no problem's words); a returning problem makes no goal of a thing no event acts on
        ("Follow up on ...") unless a sentence with a cue writes it: an issue and a late
        reply on two days made "Follow up on the colorful sunset" (LoCoMo-10). A title with
        no object ("Care", a concept's label) names none. Months of chat commit to many
        small things on many days ("I'll definitely check it out", "I'll keep pushing
        forward"): "Follow up on the passionate people" and "Spread love" named topics those
        cues were not about (LoCoMo-10). With no goal cues asked for (``goal_min_score`` 0),
        none is asked to speak of the goal."""
        if self.config.intents.goal_min_score <= 0:
            return True
        head = self.namer.title_object(title)
        if not head:
            return False
        goal = cluster.goal
        if goal.ahead & goal.commitments:
            return True  # planned for a day: a goal by itself
        if len(goal.problem_days) > 1 and not is_derived(title):
            return True  # a problem returning, and an action the evidence states about it
        return self._cue_states(memory, goal.commitments | goal.problems | goal.ahead, title)

    def _cue_states(self, memory: TenantMemory, events: Iterable[str], title: str) -> bool:
        """Whether a sentence with a goal cue among the events writes the thing the title's
        action is done to, and the action itself (``titles.writes_the_action``); for a goal
        the namer follows up on, with no verb of its own, the sentence acts on the thing or
        reports a problem with it (``titles.acted_on``): "I'm sure everyone in the crowd is
        going to be pumped up" makes no "Follow up on the large crowd" (LoCoMo-10)."""
        head = self.namer.title_object(title)
        if not head:
            return False
        word = head_word(head)
        follow_up = is_follow_up(title)
        graph = memory.graph
        return any(
            word.search(sentence) is not None
            and writes_the_action(title, sentence)
            and (not follow_up or self.namer.acts_on(head, sentence))
            for event in sorted(e for e in events if e in graph)
            for sentence in cue_sentences(graph.node(event))
        )

    def _goal_words(self, node: Node) -> frozenset[str]:
        return self.namer.goal_words(node.title)

    def _creation_plan(
        self,
        memory: TenantMemory,
        scope: FoldScope,
        cluster: Cluster,
        ref: str,
        measured: tuple[float, float],
        deadlines: list[Node],
        title: str,
    ) -> UpdatePlan:
        assert scope.event_node_id is not None
        density, threshold = measured
        support = cluster.supporting[:MAX_SUPPORT]
        deadline = _anchor(deadlines[0]) if deadlines else None
        evidence = sorted(cluster.event_ids)
        reasoning = (
            f"evidence density {density:.2f} >= threshold {threshold:.2f} "
            f"over {len(support)} concepts"
        )
        ops: list[PlanOp] = [
            AddNode(
                ref=ref,
                kind=NodeKind.INTENT,
                title=title,
                text=self.namer.describe_intent(
                    memory,
                    evidence,
                    support,
                    deadline,
                    self._deadline_source(memory, deadlines, cluster.event_ids),
                ),
                category=cluster.category,
                deadline=deadline,
                attrs={
                    "density": round(density, 6),
                    "threshold": round(threshold, 6),
                    "connectivity": round(cluster.connectivity, 6),
                    "seed": cluster.seed,
                    "goal_score": round(cluster.goal.score, 6),
                    LAST_EVIDENCE_ATTR: scope.now.isoformat(),
                    TITLED_AT_ATTR: len(evidence),
                },
                reasoning=reasoning,
                grounded_in=[scope.event_node_id, *support],
            ),
            AddEdge(src=scope.event_node_id, dst=ref, kind=EdgeKind.GROUNDS, reasoning=reasoning),
        ]
        ops.extend(
            AddEdge(src=concept, dst=ref, kind=EdgeKind.TRIGGERS, reasoning="supporting concept")
            for concept in support
        )
        ops.extend(
            AddEdge(src=time.id, dst=ref, kind=EdgeKind.DEADLINE_FOR, reasoning="cluster deadline")
            for time in deadlines
        )
        return UpdatePlan(ops=ops, planner="intent-emergence", notes=reasoning)

    @staticmethod
    def _deadline_source(
        memory: TenantMemory, deadlines: list[Node], evidence: set[str]
    ) -> str | None:
        """The earliest EVENT the goal's deadline anchors (where the date was read), among
        the goal's evidence when any of it does (a date shared with another goal, the flight,
        is cited from this goal's own events)."""
        if not deadlines:
            return None
        graph = memory.graph
        events = [
            graph.node(e.dst)
            for e in graph.out_edges(deadlines[0].id, EdgeKind.DEADLINE_FOR)
            if graph.node(e.dst).kind == NodeKind.EVENT
        ]
        own = [n for n in events if n.id in evidence]
        events = own or events
        events.sort(key=lambda n: (n.ts or n.created_at, n.id))
        return events[0].id if events else None

    def _deadlines(
        self,
        memory: TenantMemory,
        cluster: Cluster,
        now: datetime,
        extra: Iterable[str] = (),
        intent: Node | None = None,
    ) -> list[Node]:
        """Future TIME anchors attached to the cluster's supporting concepts or its most recent
        evidence events (and ``extra`` events: an open intent's own), the goal's date first.

        The goal's date is the day the goal's own events keep pointing at, read from their
        words: the day most of them name (the race that the
        registration, the training notes and the race info all give, not the bib pickup the
        day before), then one named with a deadline cue ("by", "due", "before"), then the one
        named first, in the stream and then in that event's words (``_first_named``: a goal's
        date is set with the goal, the steps towards it are planned later: "the crown must be
        cemented before we fly on 18 Dec", then the preparation and fitting dates; "Spreeufer
        10k, Sun 29 Nov" in a title, then "Bib pickup: Sat 28 Nov"), not merely the soonest
        date. A day the latest of the goal's own events
        moves the goal's date to (an open ``intent``'s; else the day ranked first) comes
        before all of these ("Moving the multi-depot demo to Tuesday 28 April", ``_moved_day``):
        however often the old day was named, it is no longer the goal's date. Otherwise an open
        intent's date holds unless a clearly better day appears (``_holds``)."""
        graph = memory.graph
        current = None if intent is None or intent.deadline is None else _day(intent)
        times = graph.ids(NodeKind.TIME)
        # the goal's own events: its seed theme's and those attached to the intent itself
        own = graph.present((*cluster.events.get(cluster.seed, ()), *extra))
        events = own | graph.present(cluster.event_ids)
        found: dict[str, Node] = {}
        ordered = self._newest(memory, events, now)  # own's order too: own is among them
        recent = ordered[:MAX_TIME_SCAN]
        anchors: set[str] = set()  # the holders share most of their TIME anchors: read each once
        for holder in {*cluster.supporting, *recent}:
            if holder in graph:
                anchors.update(graph.recent_sources(holder, EdgeKind.DEADLINE_FOR, MAX_TIME_SCAN))
        for other in anchors & times:  # in any order: ``rank`` ends with the node id
            node = graph.node(other)
            anchor = _anchor(node)
            if anchor is not None and anchor >= now:
                found[other] = node
        latest = [graph.node(e) for e in _first_among(ordered, own, MAX_TIME_SCAN)]
        naming, cued = _days_named(latest, now, memory.node_memo)
        firsts: dict[date, tuple[float, int]] = {}  # anchors of one day share it: read once

        def first_named(day: date) -> tuple[float, int]:
            if day not in firsts:
                firsts[day] = _first_named(graph, naming.get(day, ()), day, memory.node_memo)
            return firsts[day]

        def rank(node: Node) -> tuple[int, int, tuple[float, int], float, str]:
            day = _day(node)
            when = _anchor(node) or now
            cue = day in cued
            count = len(naming.get(day, ()))
            return (-count, -cue, first_named(day), when.timestamp(), node.id)

        ranked = sorted(found.values(), key=rank)
        goal_day = current if current is not None else _day(ranked[0]) if ranked else None
        moved = (
            None
            if goal_day is None
            else _moved_day(latest, now, goal_day, self._of_the_goal(memory, intent))
        )
        if moved is not None:  # moved: the new day first, however often the old was named
            ranked.sort(key=lambda node: _day(node) != moved)
        elif (
            intent is not None
            and ranked
            and self._holds(memory, intent, events, now, ranked, recent, naming)
        ):
            # the current day first; none when no anchor at hand has it: nothing changes
            held = [node for node in ranked if _day(node) == current]
            others = [node for node in ranked if _day(node) != current]
            ranked = [*held, *others] if held else []
        return ranked[:MAX_DEADLINES]

    def _of_the_goal(self, memory: TenantMemory, intent: Node | None) -> Callable[[str], bool]:
        """Whether an event speaks of what the open ``intent``'s title is about (the deck, not
        the partner demo due the same day); every event does for a goal not yet titled or
        whose title names no object. Asked of an event only when it moves a date."""
        if intent is None or not self.namer.title_object(intent.title):
            return lambda _: True
        title = intent.title
        return lambda event: bool(self.namer.speaking_of(memory, [event], title))

    def _holds(
        self,
        memory: TenantMemory,
        intent: Node,
        events: set[str],
        now: datetime,
        ranked: list[Node],
        recent: list[str],
        naming: dict[date, set[str]],
    ) -> bool:
        """Whether an open goal's date (the ``intent``'s, still ahead) holds against the day
        ranked first. The date was set from what the goal's events say it is due by, and the
        events of a fold come from whichever theme it touched (the partner demo's, naming its
        own day four times): the date gives way only to a clearly better day of the goal's,
        counted in the goal's events (the fold's and the intent's) that speak of what its title
        is about (the deck, not the demo beside it): one that more of them name than the
        current day (it beats, not ties), and, when the current day is one the goal is due by
        ("deck by Wed 18 Nov"), one something is due by too, not a day that only something
        happens on (the review, the passport appointment, the demo), however often it is
        named. A day no text names still replaces it when it is a planner's deadline for the
        latest evidence (``_planners_day``: anchored to one of the ``recent`` events, the
        ``MAX_TIME_SCAN`` newest of ``events`` as ``_deadlines`` read them, or attached by this
        fold), not an older anchor of the goal's concepts that the fold's theme happens to
        reach. A day the goal's own events
        name (``naming``, as ``_deadlines`` ranked them) is a text's, even when the fold's
        other themes crowd it out of ``recent``. Else the date took turns between the days
        each fold's theme reached or ranked first (18 and 20 Jan, a flip a fold)."""
        if intent.deadline is None or intent.deadline < now:
            return False  # a passed date moves only to a day it is due by (``_due_by``)
        current, day = _day(intent), _day(ranked[0])
        if day == current:
            return False
        recent_nodes = [memory.graph.node(e) for e in recent]
        if day not in naming and not _days_named(recent_nodes, now, memory.node_memo)[0].get(day):
            # no text names it: a planner's deadline of the latest evidence moves the date, an
            # older anchor of the goal's concepts does not
            return not _planners_day(memory.graph, ranked, day, recent, now)
        goal = events | self._intent_evidence(memory, intent.id)
        about, ordered = self._speakers(memory, goal, intent, now)
        # the newest of those speaking of the goal's object (or of the goal's events when none
        # does), read from the order the goal's events were just read in
        latest = _first_among(ordered, about, MAX_TIME_SCAN) if about else ordered[:MAX_TIME_SCAN]
        named, cued = _days_named(memory.graph.nodes_of(latest), now, memory.node_memo)
        beats = len(named.get(day, ())) > len(named.get(current, ()))
        return not (beats and (day in cued or current not in cued))

    def _reinforce(
        self, memory: TenantMemory, scope: FoldScope, intent_id: str, cluster: Cluster
    ) -> None:
        """An open intent already covers the cluster: corroborate it instead of a new one."""
        assert scope.event_node_id is not None
        graph = memory.graph
        intent = graph.node(intent_id)
        existing = {e.src for e in graph.in_edges(intent_id, EdgeKind.TRIGGERS)}
        ops: list[PlanOp] = []
        room = max(0, MAX_SUPPORT - len(existing))
        fresh = self._fresh_support(memory, cluster, intent_id, existing, room)
        themes = {
            e.dst for kind in EVIDENCE_KINDS for e in graph.out_edges(scope.event_node_id, kind)
        }
        about = bool(themes & (existing | set(fresh)))  # the event is about the goal's themes
        if about:
            ops.append(
                AddEdge(
                    src=scope.event_node_id,
                    dst=intent_id,
                    kind=EdgeKind.REINFORCES,
                    reasoning="new evidence for an open intent",
                )
            )
        event = graph.node(scope.event_node_id)
        direct = {
            src
            for kind in EVIDENCE_KINDS
            for src in graph.recent_sources(intent_id, kind, MAX_EVIDENCE_SCAN)
        }
        cues = cached_signals(event)
        # the occasion came and the evidence says what was due was decided ("GO for 1 Dec":
        # whatever the decision sets for later is what follows the goal), or that it happened
        # with no later date of the goal still ahead: the goal was reached
        reached = (
            about
            and _due(intent, event)
            and (cues.decided or (cues.done and not self._goes_on(memory, cluster, direct, scope)))
        )
        if reached:
            self.executor.apply(memory, UpdatePlan(ops=ops, planner="intent-emergence"), scope)
            kind = "decided" if cues.decided else "done"
            note = _note(kind, event)
            self.set_status(memory, scope, intent_id, IntentStatus.RESOLVED, note, feedback=False)
            log.info("intent_reached", tenant=memory.tenant, intent_id=intent_id, cue=kind)
            return
        scheduled = (
            about
            and _step_done(intent, event)
            and (not _due(intent, event) or self._goes_on(memory, cluster, direct, scope))
            and self._step_of_the_goal(memory, cluster, direct, intent, event, scope.now)
        )
        ops.extend(
            AddEdge(src=c, dst=intent_id, kind=EdgeKind.TRIGGERS, reasoning="supporting concept")
            for c in fresh
        )
        current = intent.deadline
        deadlines = self._deadlines(memory, cluster, scope.now, direct, intent)
        # the goal's date now; a date passed earlier today stays until the day is over, so the
        # evidence of the evening (the party took place, the review was a go) still finds it
        today = current is not None and current < scope.now and _same_day(current, scope.now)
        if current is not None and current < scope.now and not (cues.moved and not today):
            dating = self._about_the_goal(memory, cluster, direct, intent, scope.now)
            deadlines = self._due_by(memory, dating, scope.now, deadlines)
        new_deadline = _anchor(deadlines[0]) if deadlines else None
        if new_deadline is not None and new_deadline != current and not today:
            ops.append(AddEdge(src=deadlines[0].id, dst=intent_id, kind=EdgeKind.DEADLINE_FOR))
        else:
            new_deadline = None
        attrs: dict[str, object] = {"density": round(cluster.density, 6)}
        if cached_signals(event).any:  # an event that moves the goal: it is not stale
            attrs[LAST_EVIDENCE_ATTR] = scope.now.isoformat()
        title = None if new_deadline is None else with_deadline(intent.title, new_deadline)
        due_by = new_deadline or intent.deadline
        held = scope.event_node_id if about and held_on(due_by, event) else None
        retitled = self._retitle(memory, intent, due_by, attrs, held)
        if retitled is not None:
            title = retitled
        ops.append(
            UpdateNode(
                id=intent_id,
                deadline=new_deadline,
                # the title and description name the deadline: keep them in step with it
                title=None if title == intent.title else title,
                text=None if new_deadline is None else redate(intent.text, new_deadline),
                attrs=attrs,
                reasoning="reinforced by a new event",
            )
        )
        self.executor.apply(memory, UpdatePlan(ops=ops, planner="intent-emergence"), scope)
        track(memory, intent_id, self.config.intents)
        if scheduled:  # the person's step is done, the rest has its day
            note = _note("scheduled", event)
            self.set_status(memory, scope, intent_id, IntentStatus.ACTION_SCHEDULED, note, False)
        log.debug(  # most events reinforce an intent: a line each drowned the console's intents
            "intent_reinforced",
            tenant=memory.tenant,
            intent_id=intent_id,
            density=round(cluster.density, 3),
            new_support=len(fresh),
        )

    def _fresh_support(
        self,
        memory: TenantMemory,
        cluster: Cluster,
        intent_id: str,
        existing: set[str],
        room: int,
    ) -> list[str]:
        """The cluster's supporting concepts that join the open intent as support (at most
        ``room``): not supporting it yet, serving no other open goal, about what its concepts
        are about. None asked when there is no room: most goals have their three themes."""
        if room <= 0:
            return []
        fresh = (
            c
            for c in cluster.supporting
            if c not in existing
            and not serves_other_goal(memory, c, intent_id)
            and self._coherent(memory, c, existing)
        )
        return list(itertools.islice(fresh, room))

    def _step_of_the_goal(
        self,
        memory: TenantMemory,
        cluster: Cluster,
        direct: set[str],
        intent: Node,
        event: Node,
        now: datetime,
    ) -> bool:
        """Whether the step an event reports done is this goal's (``Namer.step_of_goal``): its
        object, or a thing the goal's events that speak of its object name with it; not a
        neighbouring goal's step of the same theme (the partner demo went well: the review
        deck is not sent)."""
        graph = memory.graph
        own = self._about_the_goal(memory, cluster, direct, intent, now) - {event.id}
        texts = [graph.node(e).embed_text for e in sorted(own) if e in graph]
        return self.namer.step_of_goal(intent.title, done_reports(event), texts, event.title)

    def _retitle(
        self,
        memory: TenantMemory,
        intent: Node,
        deadline: datetime | None,
        attrs: dict[str, object],
        held: str | None = None,
    ) -> str | None:
        """The title from the intent's evidence as it stands, at growth milestones of the
        evidence (``next_naming``: its size doubled since the last titling) and when the
        calendar entry of the deadline's day joins it (``held``: that event's node, the
        occasion itself, which says what the goal was for: "Team offsite - day 1"; then only
        for the thing it names), so a goal first seen in its opening step ("Locate the
        leak") is named for what the evidence came to say; None between these, when the new
        one states no action, or when it is no better goal (``Namer.better_goal``). Records
        the milestone, or the retitle, in ``attrs``."""
        evidence = self._intent_evidence(memory, intent.id) | ({held} if held else set())
        titled_at = intent.attrs.get(TITLED_AT_ATTR)
        if not isinstance(titled_at, int):
            attrs[TITLED_AT_ATTR] = len(evidence)
            return None
        milestone = len(evidence) >= next_naming(titled_at)
        if not milestone and held is None:
            return None
        dropped = [str(h) for h in intent.attrs.get(DROPPED_ATTR, []) if isinstance(h, str)]
        if not milestone and not self._may_rename(memory, intent, held, dropped):
            return None
        if milestone:
            attrs[TITLED_AT_ATTR] = len(evidence)
        # the grown evidence names the goal by itself: the labels of the concepts it touches
        # by now (a load test beside the flaky test, a partner demo beside the launch) would
        # favour the action on their object, what the goal touched, not what it is
        title = self.namer.title_intent(memory, sorted(evidence), deadline)
        # a new name only when it is an action and a better goal by what the evidence says:
        # its object is what more of the evidence is about, or the dated thing the steps
        # serve (``Namer.better_goal``); an object the intent was once named for and left
        # does not come back (a to-do item does not flip back and forth)
        thing = self.namer.title_object(title)
        if not self.namer.states_action(title) or thing in dropped:
            return None
        if is_follow_up(title) and not self._cue_states(memory, evidence, title):
            return None  # "Follow up on the fond memories": a thing no cue acts on (LoCoMo-10)
        if not milestone and held and thing != self.namer.held_thing(memory, held):
            return None  # the day's entry renames the goal only for what the day holds
        if not self.namer.better_goal(memory, sorted(evidence), deadline, intent.title, title):
            return None
        attrs[DROPPED_ATTR] = [*dropped, self.namer.title_object(intent.title)][-MAX_DROPPED:]
        attrs[TITLED_AT_ATTR] = len(evidence)
        return title

    def _may_rename(
        self, memory: TenantMemory, intent: Node, held: str | None, dropped: list[str]
    ) -> bool:
        """Whether the calendar entry of the deadline's day (``held``, between milestones) can
        rename the goal at all: only for the thing the day holds (``Namer.held_thing``), so
        not when it names none, names what the goal is already about (no better goal:
        ``Namer.better_goal``) or a thing the goal was renamed from. Asked before the title
        is chosen: the entry of a goal's day joins it fold after fold (each of its copies, a
        reply about it), and choosing a title reads all of the goal's evidence."""
        if held is None:
            return False
        thing = self.namer.held_thing(memory, held)
        return (
            bool(thing) and thing != self.namer.title_object(intent.title) and thing not in dropped
        )

    def _about_the_goal(
        self,
        memory: TenantMemory,
        cluster: Cluster,
        direct: set[str],
        intent: Node,
        now: datetime,
    ) -> set[str]:
        """The goal's events that speak of what its title is about, among its own events (its
        seed theme's and the intent's) and its evidence; the own events when the title names
        no object. Evidence that joined the goal for a neighbouring theme (the OKR draft due
        31 Oct beside the offsite venue) dates its own things, not the goal."""
        own = {*cluster.events.get(cluster.seed, ()), *direct}
        if not self.namer.title_object(intent.title):
            return own
        evidence = own | self._intent_evidence(memory, intent.id)
        return self._latest_speaking_of(memory, evidence, intent, now)

    def _latest_speaking_of(
        self, memory: TenantMemory, events: set[str], intent: Node, now: datetime
    ) -> set[str]:
        """The events that speak of the title's object, read newest first and only until the
        ``MAX_TIME_SCAN`` newest of them are found: ``_named_days`` reads no more, and a goal
        of a long stream has thousands of evidence events (parsing them all at every
        reinforcement made the fold four times slower per event at 50,000 events)."""
        return self._speakers(memory, events, intent, now)[0]

    def _speakers(
        self, memory: TenantMemory, events: set[str], intent: Node, now: datetime
    ) -> tuple[set[str], list[str]]:
        """``_latest_speaking_of`` and the events newest first, the order it read them in.

        Each event's answer is kept by its id while the words of events stay as they are
        (``NodeMemo.words``): an event answered before is not asked again (an access gives
        an event a new version, not new words); only the others of a chunk are asked
        (``Namer.speaking_of``): a reinforcement brings one new event to a chunk of dozens
        answered at the goal's previous reinforcement."""
        ids = self._newest(memory, events, now)  # as _named_days reads them
        head = self.namer.title_object(intent.title)
        if not head:  # no object: no event speaks of it (``speaking_of``)
            return set(), ids
        words = memory.node_memo.words
        said = words.answers(memory.graph, f"speaks_of:{head}")  # event id -> speaks of it
        found: set[str] = set()
        for start in range(0, len(ids), MAX_TIME_SCAN):
            chunk = ids[start : start + MAX_TIME_SCAN]  # node ids, as ``newest`` answers
            if not all(map(said.__contains__, chunk)):
                unknown = [event for event in chunk if event not in said]
                spoken = self.namer.speaking_of(memory, unknown, intent.title)
                self._remember_speakers(memory, unknown, spoken, said)
                found |= spoken
            found.update(filter(said.get, chunk))
            if len(found) >= MAX_TIME_SCAN:
                break
        return found, ids

    @staticmethod
    def _remember_speakers(
        memory: TenantMemory, chunk: list[str], spoken: set[str], said: dict[str, bool]
    ) -> None:
        """Keep whether each EVENT of the chunk speaks of the object (``said``, from
        ``WordsMemo.answers``); another kind of node is asked again each time."""
        graph, words = memory.graph, memory.node_memo.words
        for event in chunk:
            node = graph.get(event)
            if node is not None and node.id == event and node.kind == NodeKind.EVENT:
                words.remember(said, event, event in spoken)

    def _due_by(
        self,
        memory: TenantMemory,
        own: set[str],
        now: datetime,
        deadlines: list[Node],
    ) -> list[Node]:
        """After the goal's deadline has passed, the dates it can move on to: those the goal's
        own events (``_about_the_goal``) name after a deadline cue ("renew it before 18 Dec":
        what the goal is due by), not a later date of the same theme that nothing is due by
        (the launch after the review the goal was for), unless an event says the date was
        moved."""
        _, cued = _days_named(self._latest(memory, own, now), now, memory.node_memo)
        return [node for node in deadlines if _day(node) in cued]

    def _goes_on(
        self, memory: TenantMemory, cluster: Cluster, direct: set[str], scope: FoldScope
    ) -> bool:
        """Whether the goal's own events (its seed theme's and the intent's) still plan for a
        later day: named by ``MIN_NAMING`` of them, or by one that commits to it ("will be
        repaired in the week of 7 Dec"): a step was done (the appointment, the review), the
        goal goes on (the passport in hand before the flight, the ceiling repaired)."""
        graph = memory.graph
        own = {*cluster.events.get(cluster.seed, ()), *direct}
        latest = self._latest(memory, own, scope.now)
        naming, cued = _days_named(latest, scope.now, memory.node_memo)
        today = scope.now.date()
        for day, events in naming.items():
            if day <= today:
                continue
            if len(events) >= MIN_NAMING or day in cued:
                return True
            if any(cached_signals(graph.node(e)).commitment for e in events):
                return True
        return False

    def _coherent(self, memory: TenantMemory, concept: str, goal_concepts: set[str]) -> bool:
        """Whether the concept's members are about what the goal's concepts are about (topic
        centroids close): only such a concept joins an open intent as support."""
        if not goal_concepts:
            return True
        floor = self.config.intents.support_similarity
        return any(close >= floor for close in _closeness(memory, concept, goal_concepts).values())

    # ---------------------------------------------------------------- lifecycle
    def set_status(
        self,
        memory: TenantMemory,
        scope: FoldScope,
        intent_id: str,
        status: IntentStatus,
        note: str,
        feedback: bool = True,
    ) -> None:
        """Move an intent along its lifecycle, keep the note, adapt its category's threshold
        (``feedback`` False: the engine's own change, such as a goal it saw reached, is no
        judgement of the person on the intent and leaves the threshold alone)."""
        node = memory.graph.get(intent_id)
        if node is None or node.kind != NodeKind.INTENT or node.status is None:
            raise NotFoundError(f"intent {intent_id!r} not found for tenant {memory.tenant!r}")
        if node.status == status:
            return
        if not can_transition(node.status, status):
            raise InvalidTransitionError(
                f"intent {node.id} cannot go from {node.status.value} to {status.value}"
            )
        notes = [*node.attrs.get("status_notes", [])]
        notes.append({"status": status.value, "note": note[:1000], "at": scope.now.isoformat()})
        attrs: dict[str, object] = {"status_notes": notes[-MAX_NOTES:]}
        if note:
            attrs["note"] = note[:1000]
        plan = UpdatePlan(
            ops=[UpdateNode(id=node.id, status=status, attrs=attrs, reasoning=note[:500])],
            planner="feedback",
        )
        self.executor.apply(memory, plan, scope)
        track(memory, node.id, self.config.intents)
        if feedback:
            self._feedback(memory, node, status)

    # ---------------------------------------------------------------- staleness
    def expire(self, memory: TenantMemory, scope: FoldScope) -> list[str]:
        """Pending intents past their due time (no new goal evidence within the stale horizon,
        or the deadline long past) move to expired; the change is emitted like any other."""
        expired: list[str] = []
        for intent_id in overdue(memory, scope.now, self.config.intents):
            node = memory.graph.get(intent_id)
            if node is None or node.status != IntentStatus.PENDING:
                track(memory, intent_id, self.config.intents)
                continue
            quiet = (scope.now - last_evidence(node)).days
            note = (
                f"no new evidence for {quiet} days"
                if node.deadline is None or (node.deadline > scope.now)
                else f"deadline {node.deadline.date().isoformat()} passed, no new evidence since"
            )
            self.set_status(memory, scope, node.id, IntentStatus.EXPIRED, note)
            expired.append(node.id)
            log.info("intent_expired", tenant=memory.tenant, intent_id=node.id, note=note)
        return expired

    def _revive(
        self, memory: TenantMemory, scope: FoldScope, intent_id: str, cluster: Cluster
    ) -> bool:
        """An expired intent whose goal has fresh evidence again (dense enough, with goal cues)
        comes back to pending instead of a second intent for the same goal."""
        threshold = self.threshold(memory, cluster.category)
        if cluster.density < threshold or cluster.goal.score < self.config.intents.goal_min_score:
            return False
        if len(cluster.event_ids) < MIN_EVIDENCE_EVENTS:
            return False
        if not self._cued_goal(memory, cluster, memory.graph.node(intent_id).title):
            return False
        self.set_status(memory, scope, intent_id, IntentStatus.PENDING, "new evidence")
        self._reinforce(memory, scope, intent_id, cluster)
        log.info("intent_revived", tenant=memory.tenant, intent_id=intent_id)
        return True

    def _feedback(self, memory: TenantMemory, node: Node, status: IntentStatus) -> None:
        density = float(node.attrs.get("density", 0.0))
        if density <= 0.0:
            return
        if status in (IntentStatus.RESOLVED, IntentStatus.ACTION_SCHEDULED):
            target = EASIER * density
        elif status == IntentStatus.REJECTED:
            target = HARDER * density
        else:
            return
        category = node.category or "general"
        before = self.threshold(memory, category)
        after = self._move_threshold(memory, category, target)
        log.info(
            "intent_feedback",
            tenant=memory.tenant,
            intent_id=node.id,
            status=status.value,
            category=category,
            threshold_before=round(before, 3),
            threshold_after=round(after, 3),
        )

    # --------------------------------------------------------------- thresholds
    def threshold(self, memory: TenantMemory, category: str) -> float:
        stored = memory.meta.get(THRESHOLD_KEY.format(category=category))
        return float(stored) if stored is not None else self.config.intents.initial_threshold

    def _move_threshold(self, memory: TenantMemory, category: str, target: float) -> float:
        cfg = self.config.intents
        current = self.threshold(memory, category)
        moved = (1.0 - cfg.ema_beta) * current + cfg.ema_beta * target
        clamped = min(cfg.max_threshold, max(cfg.min_threshold, moved))
        if not math.isfinite(clamped):
            clamped = cfg.initial_threshold
        memory.set_meta(THRESHOLD_KEY.format(category=category), round(clamped, 6))
        return clamped


def _cue_key(goal: GoalEvidence) -> str:
    """A short digest of which events carry the goal cues of a cluster's evidence."""
    cued = sorted(goal.commitments | goal.problems | goal.ahead)
    return hashlib.blake2b("\n".join(cued).encode(), digest_size=8).hexdigest()


def _closeness(memory: TenantMemory, concept: str, others: Iterable[str]) -> dict[str, float]:
    """How close each other concept's members are to the concept's (the cosine of their
    topic centroids, ``VectorIndex.similarity``; 0 for a concept without one), the
    concept's centroid read once."""
    centroids = memory.index(TOPIC)
    own = centroids.get(concept)
    close: dict[str, float] = {}
    for other in others:
        vector = None if own is None else centroids.get(other)
        if own is None or vector is None:
            close[other] = 0.0
        else:
            close[other] = float(np.dot(own, vector)) or 0.0
    return close


def _concept_links(graph: MemoryGraph, concept: str) -> Iterator[Edge]:
    """The concept's edges of the cluster kinds, both directions."""
    for kind in sorted(CLUSTER_EDGES):
        yield from graph.out_edges(concept, kind)
        yield from graph.in_edges(concept, kind)


# -------------------------------------------------------------------- views
def intent_view(memory: TenantMemory, node: Node) -> Intent:
    """The public view of an INTENT node: supporting concepts, evidence, deadline, density."""
    assert node.status is not None
    graph = memory.graph
    triggers = sorted(
        (e for e in graph.in_edges(node.id, EdgeKind.TRIGGERS)),
        key=lambda e: (-e.w0, e.src),
    )
    concepts = [graph.node(e.src) for e in triggers if graph.get(e.src) is not None]
    concepts = [c for c in concepts if c.kind == NodeKind.CONCEPT]
    return Intent(
        id=node.id,
        tenant=node.tenant,
        title=node.title,
        description=node.text,
        category=node.category or "general",
        status=node.status,
        supporting_concepts=[c.id for c in concepts],
        supporting_labels=[c.title for c in concepts],
        evidence_event_ids=evidence_event_ids(memory, [node.id, *(c.id for c in concepts)]),
        deadline=node.deadline,
        density=float(node.attrs.get("density", 0.0)),
        threshold=float(node.attrs.get("threshold", 0.0)),
        created_at=node.created_at,
        updated_at=node.updated_at,
    )


def evidence_event_ids(memory: TenantMemory, holders: list[str]) -> list[str]:
    """RawEvent ids of EVENT nodes grounding or reinforcing any holder: latest, bounded, sorted."""
    graph = memory.graph
    found: dict[str, datetime] = {}
    for holder in holders:
        if holder not in graph:
            continue
        for kind in EVIDENCE_KINDS:  # the most recently attached: bounded for hub concepts
            for src in graph.recent_sources(holder, kind, MAX_EVIDENCE_SCAN):
                event = graph.node(src)
                if event.kind != NodeKind.EVENT or event.source_event_id is None:
                    continue
                found[event.source_event_id] = event.ts or event.created_at
    latest = sorted(found, key=lambda k: (found[k], k), reverse=True)[:MAX_EVIDENCE_IDS]
    return sorted(latest)


def _anchor(node: Node) -> datetime | None:
    return node.deadline or node.ts


def _due_day(intent: Node, event: Node) -> date | None:
    """The intent's deadline day in the event's time zone; None for a closed intent, one
    without a deadline, or an event without a time."""
    if intent.status not in PROGRESSING or intent.deadline is None or event.ts is None:
        return None
    due = intent.deadline.astimezone(event.ts.tzinfo) if event.ts.tzinfo else intent.deadline
    return due.date()


def _due(intent: Node, event: Node) -> bool:
    """The event is dated on or after the goal's deadline day: what it says (it happened,
    "Thank you all!" the night of the party; it was decided, "GO for 1 Dec" after the
    review) tells whether the goal was reached."""
    day = _due_day(intent, event)
    return day is not None and event.ts is not None and event.ts.date() >= day


def _step_done(intent: Node, event: Node) -> bool:
    """The person's own event says their step was done and names another day ahead, when
    the rest happens ("Done! Express passport, ready from 24 Nov"): the goal's action is
    scheduled (a pending intent becomes action_scheduled; on or after the deadline day only
    while the goal goes on, see ``_reinforce``). A step done for the deadline's own day (the
    photo for the appointment) schedules nothing new. Whose step it was is read apart
    (``IntentEmergence._step_of_the_goal``)."""
    day = _due_day(intent, event)
    if day is None or intent.status != IntentStatus.PENDING or event.ts is None:
        return False
    cues = cached_signals(event)
    if not cues.done or cues.ahead is None:
        return False
    return cues.ahead.date() != day and is_own(event)


def _note(kind: str, event: Node) -> str:
    return f"{kind}: {_event_name(event)} ({event.ts.date().isoformat() if event.ts else ''})"


def _event_name(event: Node) -> str:
    words = " ".join(event.title.split()) or " ".join((event.text or "").split()[:8])
    return words[:80]


@lru_cache(maxsize=4096)
def _dates_in(text: str, ts: datetime) -> tuple[DateMention, ...]:
    """The dates an event's words name: read once per event, not on every reinforcement.
    Up to ``MAX_GOAL_DATES``, more than an event is anchored to (``text.MAX_DATES``): a reply
    that weighs the steps first names the goal's own day last ("... results before the deck
    deadline on Wed 18 Nov" after the load test's three days), and that day counts."""
    return tuple(find_dates(text, ts, limit=MAX_GOAL_DATES))


NamedDate = tuple[datetime, date, bool]  # a date named, its day, after a deadline cue
# the evidence window of a fold: its start, end and ``since`` (seconds), ``now`` in
# microseconds, and the decay exponent per day
EvidenceWindow = tuple[float, float, float, int, float]


@dataclass
class FoldReads:
    """What one ``emerge`` call reads more than once: the evidence of intents
    (``intent_evidence``, at the graph's ``edges_stamp`` it was read at)."""

    graph: MemoryGraph
    evidence: dict[str, tuple[int, set[str]]] = field(default_factory=dict)


def newest_first(graph: MemoryGraph, events: Iterable[str], now: datetime) -> list[Node]:
    """The events' nodes, newest first (one without a time counts as ``now``): the order in
    which a goal's dates are read from its events."""
    return [graph.node(e) for e in EventOrder().newest(graph, events, now)]


def _first_among(ordered: list[str], among: set[str], limit: int) -> list[str]:
    """The first ``limit`` of ``ordered`` that are ``among`` it, in its order: the newest of a
    subset of events, read from the order of the whole."""
    found: list[str] = []
    for event in ordered:
        if event in among:
            found.append(event)
            if len(found) >= limit:
                break
    return found


def _named_days(
    graph: MemoryGraph, events: Iterable[str], now: datetime
) -> tuple[dict[date, set[str]], set[date]]:
    """Days ahead of ``now`` that the events' own words name (read from their text, the most
    recent ``MAX_TIME_SCAN`` events): day -> events naming it, and the days named after a
    deadline cue."""
    return _days_named(newest_first(graph, events, now)[:MAX_TIME_SCAN], now)


def _days_named(
    latest: Iterable[Node], now: datetime, memo: NodeMemo | None = None
) -> tuple[dict[date, set[str]], set[date]]:
    """``_named_days`` of the latest events (newest first, at most ``MAX_TIME_SCAN``). With a
    ``memo`` (``memory.node_memo``) each event's dates are read once per version of it: a
    goal's latest events are read again at every reinforcement."""
    naming: dict[date, set[str]] = {}
    cued: set[date] = set()
    for node in latest:
        dates = _named_dates(node) if memo is None else memo.get(GOAL_DATES, node, _named_dates)
        for when, day, deadline in dates:
            if when < now:
                continue
            naming.setdefault(day, set()).add(node.id)
            if deadline:
                cued.add(day)
    return naming, cued


def _named_dates(node: Node) -> tuple[NamedDate, ...]:
    """The dates an event's words name (``_dates_in`` of its title and body), each with its
    day and whether a deadline cue precedes it; none for an event without a time."""
    if node.ts is None:
        return ()
    text = f"{node.title}\n{node.text}"[:MAX_TEXT]
    return tuple((m.when, m.when.date(), m.deadline) for m in _dates_in(text, node.ts))


def _first_named(
    graph: MemoryGraph, events: Iterable[str], day: date, memo: NodeMemo | None = None
) -> tuple[float, int]:
    """When a day was first named among events: the time of the earliest that names it, and
    where in its words (the how-many-th date it writes). A goal's date is set with the goal
    and its steps come after it, in the stream and in one event's words: the registration
    names "Spreeufer 10k, Sun 29 Nov" in its title and the bib pickup on Sat 28 Nov in its
    body. ``memo``: as ``_days_named``'s."""
    nodes = [n for e in events if (n := graph.get(e)) is not None and n.ts is not None]
    if not nodes:
        return math.inf, 0
    first = min(nodes, key=lambda n: (n.ts or n.created_at, n.id))
    assert first.ts is not None
    dates = _named_dates(first) if memo is None else memo.get(GOAL_DATES, first, _named_dates)
    at = next((i for i, named in enumerate(dates) if named[1] == day), len(dates))
    return first.ts.timestamp(), at


def _moved_day(
    latest: list[Node],
    now: datetime,
    current: date,
    of_goal: Callable[[str], bool] = lambda _: True,
) -> date | None:
    """The day ahead of ``now`` that the latest of the events moving the goal's date
    (``current``) moves it to (``goals.date_move``; the most recent ``MAX_TIME_SCAN`` events
    read): a move from that day said by an event that speaks of the goal (``of_goal``: "the
    review deck is moved from Mon 9 Nov to Wed 11 Nov"; the partner demo's entry "Moved from
    Mon 9 Nov to Wed 11 Nov" moves the demo, not the deck due that day), or, when it names no
    day it moves from, a move of the thing an event writes against that day (the demo of
    "Demo of multi-depot routing - Thursday 23 April" moved to Tuesday 28 April). None when
    none does: the date of another thing moved (a feed job, a partner demo) is not the goal's.
    ``latest``: the goal's own events, newest first, at most ``MAX_TIME_SCAN``."""
    nodes = latest
    for node in nodes:
        if not says_moved(node):
            continue
        move = date_move(node)
        if move is None or move.to < now:
            continue
        if move.to.date() == current:
            return current  # the goal's date is the one it was last moved to
        if move.from_day is not None:
            if move.from_day == current and of_goal(node.id):
                return move.to.date()
            continue
        if move.thing & _written_against(nodes, current):
            return move.to.date()
    return None


def _planners_day(
    graph: MemoryGraph, ranked: list[Node], day: date, recent: list[str], now: datetime
) -> bool:
    """Whether a planner set ``day`` as a deadline for the latest evidence: anchored to one of
    the ``recent`` events, or attached (to the event or to a concept of it) by this fold."""
    if day in _anchored_days(graph, recent):
        return True
    return any(
        edge.created_at >= now
        for node in ranked
        if _day(node) == day
        for edge in graph.out_edges(node.id, EdgeKind.DEADLINE_FOR)
    )


def _anchored_days(graph: MemoryGraph, events: Iterable[str]) -> set[date]:
    """Days of the TIME anchors attached to these events as their deadline (``DEADLINE_FOR``,
    the newest ``MAX_TIME_SCAN`` of each): the dates a planner read for them."""
    days: set[date] = set()
    for event in events:
        for source in graph.recent_sources(event, EdgeKind.DEADLINE_FOR, MAX_TIME_SCAN):
            node = graph.get(source)
            if node is not None and node.kind == NodeKind.TIME and _anchor(node) is not None:
                days.add(_day(node))
    return days


def _written_against(nodes: Iterable[Node], day: date) -> frozenset[str]:
    """Words of the sentences of these events that name the day (what happens or is due
    then)."""
    words: set[str] = set()
    for node in nodes:
        if node.ts is None:
            continue
        for sentence in sentences(f"{node.title}\n{node.text}"[:MAX_TEXT]):
            if any(m.when.date() == day for m in _dates_in(sentence, node.ts)):
                words |= content_words(sentence)
    return frozenset(words)


def _same_day(when: datetime, now: datetime) -> bool:
    local = when.astimezone(now.tzinfo) if now.tzinfo and when.tzinfo else when
    return local.date() == now.date()


def _day(node: Node) -> date:
    anchor = _anchor(node)
    assert anchor is not None
    return anchor.date()
