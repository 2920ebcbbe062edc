"""The Namer: names of concepts and intents from the events behind them.

Entry points (all read the memory, none writes it):

- ``label_concept(memory, member_ids, concept_id=None) -> str``: the label of a concept whose
  members are these EVENT node ids (a new concept, one that grew, one just merged or split);
- ``title_intent(memory, evidence_ids, deadline, supporting=()) -> str``: an intent's to-do
  title from its evidence events, with the "(by 18 Dec)" suffix when there is a deadline;
- ``describe_intent(memory, evidence_ids, supporting, deadline, deadline_source)``: why it
  emerged, in sentences;
- ``label_problem(label, names)`` / ``title_problem(title)``: why a proposed name (an LLM's)
  is not one, None when it is.

Costs are bounded: at most ``MAX_MEMBERS`` events (the most central) are read per naming,
each event is parsed once (the parser's cache), phrase vectors are cached, and callers name
a concept when it forms and at growth milestones (:func:`next_naming`), not per event.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime

import numpy as np
import structlog

from schemas.graph import EdgeKind, Node, NodeKind
from topologies import topics
from topologies.embedding import Embedder
from topologies.memory import TenantMemory
from topologies.naming.labels import UNTITLED, Matrix, label_problem, rank_labels
from topologies.naming.phrases import PhraseParser, is_own, name_words
from topologies.naming.titles import (
    describe,
    follow_up,
    rank_actions,
    title_problem,
    with_deadline,
    without_deadline,
)
from topologies.text import label_from_texts

log = structlog.get_logger(__name__)

MAX_MEMBERS = 12  # events read per naming: the most central ones
MAX_SCAN = 200  # predecessors of a concept read to find its members
SIBLINGS = 6  # nearest other concepts whose labels a new label must differ from
VECTOR_CACHE = 4096
EVIDENCE = (EdgeKind.GROUNDS, EdgeKind.REINFORCES)
GROWTH = 2.0  # a concept is renamed when its member count has doubled


def next_naming(named_at: int) -> int:
    """The member count at which a concept named at ``named_at`` members is named again:
    2 -> 4 -> 8 -> 16 -> 32 ... (a logarithmic number of namings per concept)."""
    return max(named_at + 2, math.ceil(named_at * GROWTH))


class Namer:
    def __init__(self, embedder: Embedder, parser: PhraseParser | None = None) -> None:
        self.embedder = embedder
        self.parser = parser if parser is not None else PhraseParser()
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self.namings = 0
        self.cpu_seconds = 0.0  # process CPU time spent naming (for cost reports)

    # ----------------------------------------------------------------- vectors
    def embed(self, texts: list[str]) -> Matrix:
        """Vectors of short phrases, cached (labels and actions recur across namings)."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            for text, vector in zip(missing, self.embedder.embed(missing), strict=True):
                self._vectors[text] = vector
            while len(self._vectors) > VECTOR_CACHE:
                self._vectors.popitem(last=False)
        for text in texts:
            self._vectors.move_to_end(text)
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.vstack([self._vectors[t] for t in texts]).astype(np.float32)

    def _events(self, memory: TenantMemory, ids: Sequence[str]) -> tuple[list[Node], Matrix]:
        """The EVENT nodes among ``ids`` (resolved, deduplicated) and their vectors; at most
        ``MAX_MEMBERS``, the closest to their centroid."""
        graph, index = memory.graph, memory.index(NodeKind.EVENT)
        nodes: dict[str, Node] = {}
        for raw in ids:
            node = graph.get(graph.resolve(raw))
            if node is not None and node.kind == NodeKind.EVENT:
                nodes.setdefault(node.id, node)
        ordered = sorted(nodes.values(), key=lambda n: (n.ts or n.created_at, n.id))
        if not ordered:
            return [], np.zeros((0, self.embedder.dim), dtype=np.float32)
        stored = [index.get(n.id) for n in ordered]
        missing = [n.embed_text for n, v in zip(ordered, stored, strict=True) if v is None]
        fresh = iter(self.embedder.embed(missing)) if missing else iter(())
        vectors = np.vstack([v if v is not None else next(fresh) for v in stored])
        if len(ordered) > MAX_MEMBERS:
            centroid = vectors.mean(axis=0)
            order = np.argsort(-(vectors @ centroid), kind="stable")[:MAX_MEMBERS]
            keep = sorted(int(i) for i in order)
            ordered, vectors = [ordered[i] for i in keep], vectors[keep]
        return ordered, vectors.astype(np.float32)

    # ----------------------------------------------------------------- concepts
    def concept_members(self, memory: TenantMemory, concept_id: str) -> list[str]:
        """EVENT node ids that ground or reinforce the concept, the latest first (a bounded read
        of the newest edges, so a hub concept costs what a small one does)."""
        concept = memory.graph.resolve(concept_id)
        if concept not in memory.graph:
            return []
        return topics.member_events(memory, concept)

    def label_concept(
        self, memory: TenantMemory, member_ids: Sequence[str], concept_id: str | None = None
    ) -> str:
        """The folder name of a concept with these member events (see labels.py)."""
        started = time.process_time()
        try:
            return self._label(memory, member_ids, concept_id)
        finally:
            self.namings += 1
            self.cpu_seconds += time.process_time() - started

    def _label(
        self, memory: TenantMemory, member_ids: Sequence[str], concept_id: str | None
    ) -> str:
        members, vectors = self._events(memory, member_ids)
        if not members:
            return UNTITLED
        siblings = self._sibling_labels(memory, vectors, concept_id)
        ranked = rank_labels(
            self.parser.analyse_nodes(members),
            vectors,
            self.embed,
            siblings,
            self.embed(siblings) if siblings else None,
            self.names_of(members),
        )
        if ranked:
            return ranked[0][1]
        return label_from_texts([n.embed_text for n in members], exclude=[memory.tenant])

    def _sibling_labels(
        self, memory: TenantMemory, vectors: Matrix, concept_id: str | None
    ) -> list[str]:
        graph = memory.graph
        own = graph.resolve(concept_id) if concept_id else None
        centroid = vectors.mean(axis=0)
        norm = float(np.linalg.norm(centroid))
        if not norm:
            return []
        hits = memory.index(NodeKind.CONCEPT).search(
            (centroid / norm).astype(np.float32), SIBLINGS + 1
        )
        labels = []
        for node_id, _ in hits:
            node = graph.get(node_id)
            if node is None or node.id == own or node.superseded_by or not node.title:
                continue
            labels.append(node.title)
        return labels[:SIBLINGS]

    # ------------------------------------------------------------------ intents
    def title_intent(
        self,
        memory: TenantMemory,
        evidence_ids: Sequence[str],
        deadline: datetime | None,
        supporting: Sequence[str] = (),
    ) -> str:
        """A to-do title from the evidence events' own actions (see titles.py); ``supporting``
        are concept node ids (their labels say what the intent is about)."""
        started = time.process_time()
        try:
            title = self._title(memory, evidence_ids, supporting)
        finally:
            self.namings += 1
            self.cpu_seconds += time.process_time() - started
        return title if deadline is None else with_deadline(title, deadline)

    def _title(
        self, memory: TenantMemory, evidence_ids: Sequence[str], supporting: Sequence[str]
    ) -> str:
        labels = self.labels(memory, supporting)
        events, vectors = self._events(memory, evidence_ids)
        own = [is_own(n) for n in events]
        analyses = self.parser.analyse_nodes(events)
        ranked = rank_actions(analyses, vectors, self.embed, labels, own) if events else []
        if ranked:
            return ranked[0][1]
        if events:
            phrases = rank_labels(analyses, vectors, self.embed)
            if phrases:
                return follow_up(phrases[0][1])
        return follow_up(labels[0] if labels else "")

    @staticmethod
    def labels(memory: TenantMemory, concept_ids: Sequence[str]) -> list[str]:
        graph = memory.graph
        nodes = [graph.get(graph.resolve(c)) for c in concept_ids]
        return [n.title for n in nodes if n is not None and n.title]

    def describe_intent(
        self,
        memory: TenantMemory,
        evidence_ids: Sequence[str],
        supporting: Sequence[str],
        deadline: datetime | None,
        deadline_source: str | None = None,
    ) -> str:
        """Why the intent emerged: its evidence events by title and date, and the deadline."""
        graph = memory.graph
        events = [
            n
            for n in (graph.get(graph.resolve(e)) for e in dict.fromkeys(evidence_ids))
            if n is not None and n.kind == NodeKind.EVENT
        ]
        source = graph.get(deadline_source) if deadline_source else None
        if source is not None and source.kind != NodeKind.EVENT:
            source = None
        return describe(events, self.labels(memory, supporting), deadline, source)

    # ------------------------------------------------------------------- checks
    def label_problem(self, label: str, names: frozenset[str] = frozenset()) -> str | None:
        """Why ``label`` is not a folder name (a short noun phrase), None when it is one."""
        return label_problem(label, self.parser.parse(label.strip()), names)

    def title_problem(self, title: str) -> str | None:
        """Why ``title`` is not a to-do item (an action and its object), None when it is."""
        text = without_deadline(title).strip()
        return title_problem(text, self.parser.parse(text[:1].lower() + text[1:]))

    @staticmethod
    def names_of(nodes: Sequence[Node]) -> frozenset[str]:
        """Lower-cased words of the people in these events (for :meth:`label_problem`)."""
        return frozenset().union(*(name_words(n.participants, n.tenant) for n in nodes))
