"""Concept boundaries: a concept whose members diverge splits in two (docs/DESIGN.md
section 4, compression's
counterpart; merging concepts whose members converge is in ``Consolidator.compress``, which
asks ``code_share`` how far two concepts' members name the same tickets and mail threads).

Per fold, for the concepts the fold created or reinforced (at most ``MAX_SPLIT_CHECKS``): a
concept with at least ``split_min_members`` members is examined again each time it has gained
``split_every`` members since its last examination (``attrs["split_checked_at"]``). Its most
recent members (at most ``topics.MAX_MEMBERS``) are split by spherical 2-means in topic space
(deterministic: seeded by the member farthest from the centroid and the member farthest from
that one). The split happens when both sides keep ``split_min_group`` members and their
centroids' cosine is below ``split_similarity`` (two themes, not one theme's spread).

The side holding fewer members moves to a new concept (id derived from the fold's event and the
old id, so a replay makes the same one); the larger side keeps the old id, so every reference
to it, and every alias resolving to it, keeps working. Moved members carry their evidence edges
(GROUNDS with the old edge's weight and time; DERIVED_FROM) and the TIME anchors they mention;
the two concepts are linked by RELATED_TO (they were one), centroids are recomputed from their
members and both are relabelled. Everything goes through the fold's transaction: a failing fold
rolls a split back with the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
import structlog

from schemas.graph import EDGE_PRIOR_WEIGHT, Edge, EdgeKind, Node, NodeKind
from topologies import topics
from topologies.config import EngineConfig
from topologies.embedding import Embedder
from topologies.entities import entities_of
from topologies.graph import MemoryGraph
from topologies.memory import TenantMemory, stable_id
from topologies.naming import Namer
from topologies.scope import FoldScope
from topologies.summaries import concept_text
from topologies.text import categorize, keywords
from topologies.vector_index import Vector, normalize

log = structlog.get_logger(__name__)

MAX_SPLIT_CHECKS = 4  # concepts examined for a split per fold
KMEANS_ROUNDS = 12
LABEL_TEXTS = 12  # member texts read to name a concept
KEYWORDS = 12
CHECKED_ATTR = "split_checked_at"
CODE_ENTITIES = frozenset({"ticket", "thread"})  # entities that name one matter
MIN_TYING_MEMBERS = 2  # members of the larger concept that must name a tying code

Relabel = Callable[[TenantMemory, FoldScope, str], None]


def member_texts(memory: TenantMemory, concept_id: str, limit: int = LABEL_TEXTS) -> list[str]:
    """Title and text of the concept's most recent member events."""
    graph = memory.graph
    return [
        f"{graph.node(e).title}\n{graph.node(e).text}"
        for e in topics.member_events(memory, concept_id, limit)
    ]


def relabelled(memory: TenantMemory, namer: Namer, concept_id: str) -> Node | None:
    """The concept named from its members' words, its text summing them up and its keywords
    theirs (its members changed: a split, a merge, a deletion), not yet stored; None when it
    has no member left."""
    texts = member_texts(memory, concept_id)
    if not texts:
        return None
    graph = memory.graph
    node = graph.node(concept_id)
    members = topics.member_events(memory, concept_id)
    combined = "\n".join(texts)
    return node.model_copy(
        update={
            "title": namer.label_concept(memory, members, concept_id),
            "text": concept_text(graph.node(e) for e in members),
            "attrs": {
                **node.attrs,
                "keywords": keywords(combined, KEYWORDS, exclude=[memory.tenant]),
            },
        }
    )


class Boundaries:
    """Splits concepts whose members diverge; relabels concepts whose members changed."""

    def __init__(self, embedder: Embedder, config: EngineConfig, namer: Namer) -> None:
        self.embedder = embedder
        self.config = config
        self.namer = namer
        self.relabel: Relabel = self.label_from_members

    # ------------------------------------------------------------------ naming
    def label_from_members(self, memory: TenantMemory, scope: FoldScope, concept_id: str) -> None:
        """Name the concept from its members' words and sum them up in its text (a split or a
        merge changed them: the text must not quote members it lost); its label vector
        follows both."""
        node = relabelled(memory, self.namer, concept_id)
        if node is None:
            return
        updated = memory.graph.replace_node(node.model_copy(update={"updated_at": scope.now}))
        memory.index(NodeKind.CONCEPT).upsert(
            concept_id, self.embedder.embed([updated.embed_text])[0]
        )
        scope.touch(concept_id)

    # ------------------------------------------------------------------ splits
    def split(self, memory: TenantMemory, scope: FoldScope) -> int:
        """Examine the concepts this fold grew; split those whose members form two groups."""
        done = 0
        for concept_id in self._due(memory, scope):
            if self._split_one(memory, scope, concept_id):
                done += 1
        return done

    def _due(self, memory: TenantMemory, scope: FoldScope) -> list[str]:
        cfg = self.config.topics
        graph = memory.graph
        concepts = graph.ids(NodeKind.CONCEPT)
        due: list[str] = []
        for raw in sorted(scope.created) + sorted(scope.reinforced):
            concept_id = graph.resolve(raw)
            if concept_id not in concepts or concept_id in due:
                continue
            node = graph.node(concept_id)
            members = int(node.attrs.get(topics.MEMBERS_ATTR, 0))
            checked = int(node.attrs.get(CHECKED_ATTR, 0))
            if node.core or node.superseded_by or members < cfg.split_min_members:
                continue
            if checked and members - checked < cfg.split_every:
                continue
            due.append(concept_id)
            if len(due) >= MAX_SPLIT_CHECKS:
                break
        return due

    def _split_one(self, memory: TenantMemory, scope: FoldScope, concept_id: str) -> bool:
        cfg = self.config.topics
        graph = memory.graph
        node = graph.node(concept_id)
        members = int(node.attrs.get(topics.MEMBERS_ATTR, 0))
        graph.replace_node(node.model_copy(update={"attrs": {**node.attrs, CHECKED_ATTR: members}}))
        events = topics.member_events(memory, concept_id)
        vectors = topics.event_topics(memory, events, cfg)
        pairs = [(e, v) for e, v in zip(events, vectors, strict=True) if v is not None]
        if len(pairs) < 2 * cfg.split_min_group:
            return False
        matrix = np.stack([v for _, v in pairs])
        side, similarity = two_means(matrix)
        count = int(side.sum())
        if min(count, len(pairs) - count) < cfg.split_min_group:
            return False
        if similarity >= cfg.split_similarity:
            return False
        moving = side if count * 2 < len(pairs) else ~side
        if count * 2 == len(pairs):  # a tie: the side of the oldest member (listed last) stays
            moving = ~side if bool(side[-1]) else side
        moved = [e for (e, _), flag in zip(pairs, moving, strict=True) if flag]
        new_id = self._new_concept(memory, scope, concept_id, moved)
        log.info(
            "concept_split",
            tenant=memory.tenant,
            concept=concept_id,
            new=new_id,
            moved=len(moved),
            kept=len(pairs) - len(moved),
            similarity=round(similarity, 3),
        )
        return True

    def _new_concept(
        self, memory: TenantMemory, scope: FoldScope, old_id: str, moved: list[str]
    ) -> str:
        graph = memory.graph
        old = graph.node(old_id)
        new_id = stable_id("c", memory.tenant, scope.event_id, f"split:{old_id}")
        texts = [f"{graph.node(e).title}\n{graph.node(e).text}" for e in moved[:LABEL_TEXTS]]
        graph.add_node(
            Node(
                id=new_id,
                kind=NodeKind.CONCEPT,
                tenant=memory.tenant,
                title=old.title,  # renamed below, once its members are attached
                text=concept_text(graph.node(e) for e in moved),
                ts=scope.now,
                created_at=scope.now,
                updated_at=scope.now,
                category=categorize("\n".join(texts)),
                inferred=True,
                source_event_id=scope.event_id or None,
                attrs={"split_from": old_id, CHECKED_ATTR: len(moved)},
            )
        )
        for event_id in moved:
            self._move_member(memory, scope, event_id, old_id, new_id)
        _link(graph, scope, new_id, old_id, EdgeKind.RELATED_TO)
        for concept_id in (old_id, new_id):
            topics.recompute(memory, concept_id, self.config.topics)
        scope.created.add(new_id)
        scope.touch(new_id)
        scope.touch(old_id)
        self.relabel(memory, scope, new_id)
        self.relabel(memory, scope, old_id)
        if new_id not in memory.index(NodeKind.CONCEPT):  # a relabel hook that does not embed
            memory.index(NodeKind.CONCEPT).upsert(
                new_id, self.embedder.embed([graph.node(new_id).embed_text])[0]
            )
        return new_id

    @staticmethod
    def _move_member(
        memory: TenantMemory, scope: FoldScope, event_id: str, old_id: str, new_id: str
    ) -> None:
        """The event's evidence edges to the old concept go to the new one, with their weight
        and time; so do the TIME anchors the event mentions."""
        graph = memory.graph
        weight: Edge | None = None
        for kind in topics.MEMBER_EDGES:
            edge = graph.remove_edge(event_id, old_id, kind)
            if edge is not None and (weight is None or edge.w0 > weight.w0):
                weight = edge
        derived = graph.remove_edge(old_id, event_id, EdgeKind.DERIVED_FROM)
        if weight is not None:
            graph.put_edge(weight.model_copy(update={"dst": new_id, "kind": EdgeKind.GROUNDS}))
        if derived is not None:
            graph.put_edge(derived.model_copy(update={"src": new_id}))
        else:
            _link(graph, scope, new_id, event_id, EdgeKind.DERIVED_FROM)
        times = graph.ids(NodeKind.TIME)
        for edge in list(graph.in_edges(event_id, EdgeKind.DEADLINE_FOR)):
            if edge.src in times and graph.edge(edge.src, new_id, EdgeKind.DEADLINE_FOR) is None:
                graph.put_edge(edge.model_copy(update={"dst": new_id, "t_last": scope.now}))


def code_share(memory: TenantMemory, a: str, b: str) -> float:
    """Share of the smaller concept's members (its latest ``topics.MAX_MEMBERS``) that name a
    ticket or a mail thread one of the other concept's members names: one matter written
    in two registers (a channel's chat and the mails and notes about the same tickets).
    People and names do not tie: the same few people take part in all of a person's themes.
    Nor does one passing mention: unless at least ``MIN_TYING_MEMBERS`` of the larger
    concept's members name what the smaller one's name, the share is 0 (a launch channel's one
    message that names "COVID-19" ties it to no health notes)."""
    first, second = _member_codes(memory, a), _member_codes(memory, b)
    (small, ours), (large, theirs) = sorted((first, second), key=lambda codes: len(codes[0]))
    if not small:
        return 0.0
    if not ours or sum(1 for codes in large if codes & ours) < MIN_TYING_MEMBERS:
        return 0.0
    tied = sum(1 for codes in small if codes & theirs)
    return tied / len(small)


MemberCodes = tuple[list[frozenset[str]], frozenset[str]]


def _member_codes(memory: TenantMemory, concept_id: str) -> MemberCodes:
    """The tickets and mail threads each of the concept's latest members names (the latest
    first), and all of them: read again only when a member changes (``NodeMemo.group``), each
    member's once per version of its node (a pair of concepts near the bar is asked fold
    after fold)."""
    memo = memory.node_memo
    members = memory.graph.nodes_of(topics.member_events(memory, concept_id))

    def codes_of(node: Node) -> frozenset[str]:
        return _codes(entities_of(memory, node))

    def derive(nodes: Sequence[Node]) -> MemberCodes:
        codes = [memo.get("codes", node, codes_of) for node in nodes]
        return codes, frozenset().union(*codes)

    return memo.group("codes", concept_id, members, derive)


def _codes(entities: Sequence[str]) -> frozenset[str]:
    """The tickets and mail threads among an event's entities (read once per version of the
    event, by the planner first: ``entities_of``)."""
    return frozenset(e for e in entities if e.partition(":")[0] in CODE_ENTITIES)


def two_means(matrix: Vector) -> tuple[npt.NDArray[np.bool_], float]:
    """Spherical 2-means of unit rows: (boolean side of each row, cosine of the two centroids).
    Seeds: the row farthest from the mean, then the row farthest from that one."""
    mean = normalize(matrix.mean(axis=0))
    first = int(np.argmin(matrix @ mean))
    second = int(np.argmin(matrix @ matrix[first]))
    a, b = matrix[first], matrix[second]
    side = np.zeros(len(matrix), dtype=bool)
    for _ in range(KMEANS_ROUNDS):
        previous, side = side, (matrix @ a) >= (matrix @ b)
        if side.all() or not side.any():
            return side, 1.0
        a, b = normalize(matrix[side].mean(axis=0)), normalize(matrix[~side].mean(axis=0))
        if np.array_equal(previous, side):
            break
    return side, float(np.dot(a, b))


def _link(graph: MemoryGraph, scope: FoldScope, src: str, dst: str, kind: EdgeKind) -> None:
    if graph.edge(src, dst, kind) is None:
        graph.put_edge(
            Edge(
                src=src,
                dst=dst,
                kind=kind,
                w0=EDGE_PRIOR_WEIGHT[kind],
                t_last=scope.now,
                created_at=scope.now,
            )
        )
