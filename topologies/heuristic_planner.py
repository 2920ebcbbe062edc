"""The heuristic planner: no LLM, deterministic, emits UpdatePlans the way an LLM planner would.

For one event it decides, in order:

0. **Reactions** (``topologies/reactions.py``): a chat turn that only reacts to the one before
   ("That's awesome, so proud of you!": it names no thing of its own) joins no concept and
   seeds none, and is no member of another event's new concept; it gets ``TRIGGERS answered
   turn -> event`` to the turn it answers (the channel's previous turn within an hour). A
   reply that names a thing ("Congrats on the new job!") is planned as any event.
1. **Assignment** (topic space, ``topologies/topics.py``): the CONCEPT whose member centroid
   is nearest to the event's topic vector, at cosine >= assign_similarity, gets ``REINFORCES
   event -> concept`` plus an UPDATE_NODE counting the member and adding new salient keywords
   (attrs only: the label vector does not move), which also renames the concept from its
   members at growth milestones (``naming.next_naming``: 4, 8, 16, ... members) and when
   a member joins whose title writes a one-word name in full ("surprise party" for
   "Surprise"; that member is read, the milestones stay). Candidates:
   the TOPIC index's kNN and the concepts of the context. Comparing with a concept's members,
   not its label, keeps a concept to the theme its events share.
2. **Online clustering**: otherwise unassigned events in the POOL index (topic vectors) with
   cosine >= pair_similarity seed a new CONCEPT, named by ``naming.Namer.label_concept`` (the
   members' most central noun phrase), its text summing up its members, with a lexicon
   category, ``GROUNDS member -> concept`` and ``DERIVED_FROM concept -> member``. With no
   such neighbour the event stays unassigned.
   **Bridges**: the concept the event joined or seeded gets ``RELATED_TO`` to the other
   candidates whose centroid the event is also close to (cosine >= bridge_similarity, at most
   two): the event sits between them.
3. **Entity links**: earlier events (within link_window_days) sharing entities (names,
   participants, ticket ids, emails, @mentions, threads) get ``CAUSES earlier -> event`` when
   the text has a causal cue, else ``TRIGGERS``; at most 3, strongest first. The strength is
   the weighted entity overlap times (0.5 + cosine), so a shared sender alone on an unrelated
   topic does not link.
4. **Concept links**: when the event's concept differs from a concept grounded by a linked
   earlier event, ``CAUSES``/``RELATED_TO`` between the concepts.
5. **Time**: dates and deadlines in the text become TIME nodes (``deadline`` after a deadline
   cue) with ``DEADLINE_FOR time -> event`` and ``time -> concept``.

Each op carries ``reasoning`` and ``grounded_in`` = [RawEvent id, node ids used].
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import timedelta

import numpy as np
import structlog

from schemas.graph import EdgeKind, Node, NodeKind
from schemas.plans import AddEdge, AddNode, PlanOp, UpdateNode, UpdatePlan
from topologies import reactions, topics
from topologies.config import EngineConfig
from topologies.embedding import Embedder
from topologies.entities import EntityMatch, ensure_entity_index, entities_of
from topologies.memory import POOL, TOPIC
from topologies.naming import Namer, next_naming
from topologies.planner import PlanRequest
from topologies.summaries import concept_text, short
from topologies.text import categorize, find_dates, has_causal_cue, keywords
from topologies.vector_index import Vector

log = structlog.get_logger(__name__)

POOL_K = 8  # POOL neighbours looked at for clustering
CONCEPT_K = 3  # nearest concept centroids looked at for assignment
MAX_BRIDGES = 2  # RELATED_TO from the joined concept to other close concepts
MAX_MEMBERS = 4  # pool events grouped with the event into a new concept
MAX_LINKS = 3  # entity links per event
MIN_LINK_STRENGTH = 1.5  # entity overlap x (0.5 + cosine)
MAX_CONCEPT_LINKS = 3
CONCEPT_KEYWORDS = 12
EDGE_SCAN = 16


@dataclass
class _Builder:
    """Collects ops with plan-local refs n1, n2, ... and the grounding of each op."""

    event_id: str
    ops: list[PlanOp] = field(default_factory=list)
    counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def ground(self, *ids: str) -> list[str]:
        out = [self.event_id]
        for node_id in ids:
            if node_id not in out:
                out.append(node_id)
        return out[:64]

    def add_node(self, kind: NodeKind, title: str, reasoning: str, used: list[str],
                 **fields: object) -> str:  # fmt: skip
        ref = f"n{next(self.counter)}"
        op = AddNode.model_validate({"ref": ref, "kind": kind, "title": title,
                                     "reasoning": reasoning, "grounded_in": self.ground(*used),
                                     **fields})  # fmt: skip
        self.ops.append(op)
        return ref

    def add_edge(self, src: str, dst: str, kind: EdgeKind, reasoning: str, used: list[str],
                 weight: float | None = None) -> None:  # fmt: skip
        self.ops.append(AddEdge(src=src, dst=dst, kind=kind, weight=weight, reasoning=reasoning,
                                grounded_in=self.ground(*used)))  # fmt: skip


def _cos(a: np.ndarray | None, b: np.ndarray | None) -> float:
    if a is None or b is None:
        return 0.0
    return float(np.dot(a, b))


class HeuristicPlanner:
    name = "heuristic"

    def __init__(
        self, embedder: Embedder, config: EngineConfig, namer: Namer | None = None
    ) -> None:
        self.embedder = embedder
        self.config = config
        self.namer = namer if namer is not None else Namer(embedder)

    async def plan(self, request: PlanRequest) -> UpdatePlan:
        return self.plan_sync(request)

    def plan_sync(self, request: PlanRequest) -> UpdatePlan:
        memory, event, node = request.memory, request.event, request.event_node
        build = _Builder(event.id)
        ensure_entity_index(memory, node)
        topic = topics.event_topic(memory, node.id, self.config.topics)
        if topic is None:
            topic = topics.center(request.vector, None, 0, self.config.topics)
        joined: str | None = None
        answered: str | None = None
        if reactions.reacts(memory, node, self.namer.parser):
            answered = self._reply(request, build)
        else:
            nearest = self._candidates(request, topic)
            joined = self._assign(request, build, nearest)
            if joined is None:
                joined = self._cluster(request, build, topic)
            self._bridges(build, joined, nearest)
        links = self._entity_links(request, build, answered)
        self._concept_links(request, build, joined, links)
        self._times(request, build, joined)
        notes = f"joined={joined or '-'} links={len(links)} ops={len(build.ops)}"
        log.debug("heuristic_plan", tenant=memory.tenant, event_id=event.id, notes=notes)
        return UpdatePlan(ops=build.ops, planner=self.name, notes=notes)

    # ---------------------------------------------------------------- assignment
    def _candidates(self, request: PlanRequest, topic: Vector) -> list[tuple[Node, float]]:
        """Concepts by the cosine of their member centroid to the event in topic space, best
        first. Candidates: the TOPIC index's kNN plus the concepts of the context (a concept
        without a stored centroid yet gets one computed from its members)."""
        memory, graph = request.memory, request.memory.graph
        scores = dict(memory.index(TOPIC).search(topic, CONCEPT_K))
        concepts = graph.ids(NodeKind.CONCEPT)
        for nid in request.context.knn:
            if nid in concepts and nid not in scores:
                center = topics.centroid(memory, nid, self.config.topics)
                if center is not None:
                    scores[nid] = float(np.dot(topic, center))
        found = []
        for nid, cos in sorted(scores.items(), key=lambda item: (-item[1], item[0])):
            concept = graph.get(nid)
            if concept is None or concept.kind != NodeKind.CONCEPT or concept.superseded_by:
                continue
            found.append((concept, cos))
        request.consulted.update(concept.id for concept, _ in found)
        return found

    def _assign(
        self, request: PlanRequest, build: _Builder, nearest: list[tuple[Node, float]]
    ) -> str | None:
        if not nearest or nearest[0][1] < self.config.assign_similarity:
            return None
        concept, cos = nearest[0]
        ev = request.event_node.id
        build.add_edge(
            ev, concept.id, EdgeKind.REINFORCES,
            f"The event is close to the events of the concept '{concept.title}' (cosine "
            f"{cos:.2f} to their centroid >= {self.config.assign_similarity:.2f}): it "
            f"corroborates it.",
            [concept.id],
        )  # fmt: skip
        self._refresh_keywords(request, build, concept)
        return concept.id

    def _reply(self, request: PlanRequest, build: _Builder) -> str | None:
        """A reaction ("That's awesome, so proud of you!") joins no concept and seeds none:
        filed by its words it would gather with the replies of every theme into a folder of
        moods, and filed with the turn it answers it would drag the mood into that theme's
        centroid. It is linked to the turn it answers (``reactions.answered_turn``: TRIGGERS
        answered -> reaction), where a reader finds it beside what it is about. Returns the
        answered turn's id."""
        memory, node = request.memory, request.event_node
        answered = reactions.answered_turn(memory, node)
        if answered is None:
            log.debug("reaction_unanswered", tenant=memory.tenant, event_id=node.id)
            return None
        request.consulted.add(answered.id)
        build.add_edge(
            answered.id, node.id, EdgeKind.TRIGGERS,
            f"The event only reacts to the turn before it, '{short(answered, 40)}'.",
            [answered.id],
        )  # fmt: skip
        return answered.id

    def _bridges(
        self, build: _Builder, joined: str | None, nearest: list[tuple[Node, float]]
    ) -> None:
        """The event also resembles the events of other concepts (below the bar for joining
        them): the concept it joined is associated with those (RELATED_TO)."""
        if joined is None:
            return
        bar = self.config.topics.bridge_similarity
        others = [(c, cos) for c, cos in nearest if c.id != joined and cos >= bar]
        for concept, cos in others[:MAX_BRIDGES]:
            build.add_edge(
                joined, concept.id, EdgeKind.RELATED_TO,
                f"The event that joined this concept is also close to the events of "
                f"'{concept.title}' (cosine {cos:.2f} >= {bar:.2f}).",
                [concept.id],
            )  # fmt: skip

    def _refresh_keywords(self, request: PlanRequest, build: _Builder, concept: Node) -> None:
        """Count the new member, add its fresh keywords, and rename the concept from its
        members when it has grown enough since it was last named (see ``next_naming``), or
        when the new member's title writes its one-word name in full (a calendar entry
        "Leonie's 40th - surprise party" joining the chat "Leonie 40 (surprise!)")."""
        known = [str(k) for k in concept.attrs.get("keywords", [])]
        fresh = [k for k in keywords(request.event.text, 5, exclude=[concept.tenant])
                 if k not in known]  # fmt: skip
        members = int(concept.attrs.get("members", 1)) + 1
        named_at = int(concept.attrs.get("named_at", concept.attrs.get("members", 1)))
        attrs: dict[str, object] = {"members": members}
        reasons = []
        if fresh:
            attrs["keywords"] = (known + fresh)[:CONCEPT_KEYWORDS]
            reasons.append(f"New evidence adds the keywords {', '.join(fresh)}.")
        title = None
        grown = members >= next_naming(named_at)
        in_full = not grown and self.namer.titles_in_full(concept.title, request.event_node)
        if grown or in_full:
            ids = [*self.namer.concept_members(request.memory, concept.id), request.event_node.id]
            joining = request.event_node.id if in_full else None
            label = self.namer.label_concept(request.memory, ids, concept.id, joining)
            if grown:
                attrs["named_at"] = members
            if label != concept.title:
                title = label
                reasons.append(
                    f"Grown to {members} events, '{concept.title}' is now named '{label}'."
                )
        build.ops.append(UpdateNode(
            id=concept.id, title=title, attrs=attrs,
            reasoning=" ".join(reasons) or f"'{concept.title}' has {members} events.",
            grounded_in=build.ground(concept.id),
        ))  # fmt: skip

    # ---------------------------------------------------------------- clustering
    def _cluster(self, request: PlanRequest, build: _Builder, topic: Vector) -> str | None:
        memory, ev = request.memory, request.event_node.id
        members: list[tuple[Node, float]] = []
        for nid, cos in memory.index(POOL).search(topic, POOL_K, exclude={ev}):
            other = memory.graph.get(nid)
            if cos < self.config.pair_similarity or other is None or other.kind != NodeKind.EVENT:
                continue
            if not reactions.reacts(memory, other, self.namer.parser):  # no folder of moods
                members.append((other, cos))
        if not members:
            return None
        members = members[:MAX_MEMBERS]
        request.consulted.update(m.id for m, _ in members)
        group = [request.event_node, *(m for m, _ in members)]
        texts = [f"{n.title}\n{n.text}" for n in group]
        label = self.namer.label_concept(memory, [n.id for n in group])
        combined = "\n".join(texts)
        ids = [m.id for m, _ in members]
        sims = ", ".join(f"{c:.2f}" for _, c in members)
        ref = build.add_node(
            NodeKind.CONCEPT, label,
            f"{len(members)} unassigned event(s) are similar to this one (cosine {sims} >= "
            f"{self.config.pair_similarity:.2f}); their most central phrase is '{label}'.",
            ids,
            text=concept_text(group),
            category=categorize(combined),
            attrs={"keywords": keywords(combined, CONCEPT_KEYWORDS, exclude=[memory.tenant]),
                   "members": len(group), "named_at": len(group)},
        )  # fmt: skip
        for member in group:
            build.add_edge(
                member.id,
                ref,
                EdgeKind.GROUNDS,
                f"'{short(member, 40)}' is evidence for '{label}'.",
                [member.id],
            )
        for member in group:
            build.add_edge(
                ref,
                member.id,
                EdgeKind.DERIVED_FROM,
                f"'{label}' was abstracted from '{short(member, 40)}'.",
                [member.id],
            )
        return ref

    # -------------------------------------------------------------- entity links
    def _entity_links(
        self, request: PlanRequest, build: _Builder, linked: str | None = None
    ) -> list[EntityMatch]:
        """Links from earlier events sharing entities (``linked``: an earlier event the plan
        already links, the turn a reaction answers)."""
        memory, node = request.memory, request.event_node
        assert node.ts is not None
        entities = entities_of(memory, node)
        if not entities:
            return []
        window = timedelta(days=self.config.link_window_days)
        matches = memory.entities.related(entities, node.ts, window, exclude=node.id)
        matches = [
            m for m in matches if m.node_id != linked and memory.graph.get(m.node_id) is not None
        ]
        # the earlier events' vectors in one look-up (zeros for one without: cosine 0)
        rows, _ = memory.index(NodeKind.EVENT).get_many([match.node_id for match in matches])
        scored: list[tuple[float, EntityMatch]] = []
        for match, row in zip(matches, rows, strict=True):
            cos = max(0.0, _cos(request.vector, row))
            strength = match.score * (0.5 + cos)
            if strength >= MIN_LINK_STRENGTH:
                scored.append((strength, match))
        scored.sort(key=lambda item: (-item[0], -item[1].ts.timestamp(), item[1].node_id))
        causal = has_causal_cue(request.event.text)
        kind = EdgeKind.CAUSES if causal else EdgeKind.TRIGGERS
        chosen = [m for _, m in scored[:MAX_LINKS]]
        request.consulted.update(m.node_id for m in chosen)
        for strength, match in scored[:MAX_LINKS]:
            earlier = memory.graph.node(match.node_id)
            shared = ", ".join(e.split(":", 1)[1] for e in match.shared[:4])
            why = "and its text gives a causal cue" if causal else "and follows it in time"
            build.add_edge(match.node_id, node.id, kind,
                           f"Shares {shared} with the earlier '{short(earlier, 40)}' "
                           f"(strength {strength:.2f}) {why}.", [match.node_id])  # fmt: skip
        return chosen

    def _concept_links(self, request: PlanRequest, build: _Builder, joined: str | None,
                       links: list[EntityMatch]) -> None:  # fmt: skip
        if joined is None or not links:
            return
        memory = request.memory
        causal = has_causal_cue(request.event.text)
        kind = EdgeKind.CAUSES if causal else EdgeKind.RELATED_TO
        done: set[str] = {joined}
        for match in links:
            edges = itertools.islice(memory.graph.out_edges(match.node_id), EDGE_SCAN)
            for edge in edges:
                if edge.kind not in (EdgeKind.GROUNDS, EdgeKind.REINFORCES) or edge.dst in done:
                    continue
                other = memory.graph.get(edge.dst)
                if other is None or other.kind != NodeKind.CONCEPT:
                    continue
                done.add(other.id)
                request.consulted.add(other.id)
                build.add_edge(other.id, joined, kind,
                               f"The linked earlier event grounds '{other.title}', this event "
                               f"the concept it joined: the two concepts are connected.",
                               [other.id, match.node_id])  # fmt: skip
                if len(done) > MAX_CONCEPT_LINKS:
                    return

    # --------------------------------------------------------------------- time
    def _times(self, request: PlanRequest, build: _Builder, joined: str | None) -> None:
        event = request.event
        for mention in find_dates(event.text, event.ts):
            stamp = mention.when.strftime("%Y-%m-%d %H:%M" if mention.has_time else "%Y-%m-%d")
            what = "Deadline" if mention.deadline else "Date"
            fields: dict[str, object] = {"text": mention.phrase}
            fields["deadline" if mention.deadline else "ts"] = mention.when
            ref = build.add_node(NodeKind.TIME, f"{what} {stamp}",
                                 f"The text mentions '{mention.phrase}', resolved against the "
                                 f"event time to {stamp}.", [], **fields)  # fmt: skip
            weight = 1.0 if mention.deadline else 0.6
            build.add_edge(ref, request.event_node.id, EdgeKind.DEADLINE_FOR,
                           f"{what} {stamp} anchors this event.", [], weight)  # fmt: skip
            if joined is not None:
                build.add_edge(ref, joined, EdgeKind.DEADLINE_FOR,
                               f"{what} {stamp} applies to the concept this event joined.",
                               [joined], weight)  # fmt: skip
