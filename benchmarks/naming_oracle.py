"""Naming measured on its own: names of the gold groups, not of the folded ones.

``bench_structural --oracle-groups`` stores a stream's events (ingest only: no planner, no
concepts of its own), then names each gold concept from its own events with
``Namer.label_concept`` (in the order the concepts start, each named concept joining the
concept index, so a later label keeps its distance from earlier siblings as in a fold), and
each gold intent from its evidence (the events of its supporting concepts) with
``Namer.title_intent`` (with the gold deadline, so the title carries its "(by ...)" suffix as a
folded one does). Grouping and emergence play no part: a low figure here is the namer's.

Figures (MiniLM cosine against the gold wording):

- ``oracle_label_hit@0.6`` / ``@0.75``: share of gold concepts whose own name reaches the cosine;
- ``oracle_label_f1@0.6``: the end-to-end rule (one-to-one Hungarian over all names);
- ``oracle_title_hit@0.5``: share of gold intents whose own title reaches cosine 0.5;
- ``oracle_title_recall@0.5``: the end-to-end rule (Hungarian);
- ``oracle_label_reachable@0.6``: share of gold concepts for which one of the candidates the
  namer ranked reaches the cosine (what a better ranking could reach); the names list the
  best candidate of each, so the gold concepts where it existed but another was picked show.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from benchmarks import metrics_structural as m
from schemas.events import RawEvent
from schemas.graph import Node, NodeKind
from topologies.config import EngineConfig
from topologies.embedding import Embedder
from topologies.engine import FoldEngine
from topologies.heuristic_planner import HeuristicPlanner
from topologies.memory import TenantMemory, event_node_id, stable_id
from topologies.naming import Namer

LABEL_COSINES = (0.6, 0.75)
TITLE_COSINE = 0.5


@dataclass(frozen=True)
class OracleGroup:
    """A gold group to name: its label (the reference) and its RawEvent ids."""

    id: str
    label: str
    events: frozenset[str]
    supporting: tuple[str, ...] = ()  # intents: the gold concept ids behind it
    deadline: datetime | None = None


def stored(tenant: str, events: Sequence[RawEvent], embedder: Embedder) -> TenantMemory:
    """A memory holding the events as EVENT nodes with their vectors, nothing folded."""
    config = EngineConfig()
    engine = FoldEngine(embedder, HeuristicPlanner(embedder, config), config)
    memory = engine.new_memory(tenant)
    for event in events:
        engine.ingest(memory, event)
    return memory


def _start(memory: TenantMemory, ids: Sequence[str]) -> datetime:
    nodes = [memory.graph.get(i) for i in ids]
    times = [n.ts for n in nodes if n is not None and n.ts is not None]
    return min(times) if times else datetime.max


def _add_concept(memory: TenantMemory, concept_id: str, label: str, ids: Sequence[str]) -> None:
    """The named gold concept joins the graph and the concept index (members' centroid)."""
    events = [memory.graph.node(i) for i in ids]
    when = min(e.created_at for e in events)
    index = memory.index(NodeKind.EVENT)
    vectors = np.vstack([v for v in (index.get(i) for i in ids) if v is not None])
    centroid = vectors.mean(axis=0)
    centroid = centroid / (np.linalg.norm(centroid) or 1.0)
    memory.begin()
    memory.graph.add_node(
        Node(
            id=concept_id,
            kind=NodeKind.CONCEPT,
            tenant=memory.tenant,
            title=label,
            created_at=when,
            updated_at=when,
        )
    )
    memory.index(NodeKind.CONCEPT).upsert(concept_id, centroid.astype(np.float32))
    memory.commit()


@dataclass(frozen=True)
class Named:
    """The namer's names of the gold groups, and the candidates each label was picked from."""

    labels: list[str]
    titles: list[str]
    candidates: list[list[str]]  # per gold concept, best first


def name_groups(
    memory: TenantMemory,
    namer: Namer,
    concepts: Sequence[OracleGroup],
    intents: Sequence[OracleGroup],
) -> Named:
    """The namer's label for each gold concept and title for each gold intent."""
    tenant = memory.tenant
    node_ids = {c.id: [event_node_id(tenant, e) for e in sorted(c.events)] for c in concepts}
    labels: dict[str, str] = {}
    candidates: dict[str, list[str]] = {}
    for concept in sorted(concepts, key=lambda c: (_start(memory, node_ids[c.id]), c.id)):
        ids = node_ids[concept.id]
        if not ids:
            labels[concept.id], candidates[concept.id] = "", []
            continue
        concept_node = stable_id("concept", tenant, concept.id)
        ranked = sorted(namer.label_candidates(memory, ids), key=lambda c: -c.score)
        candidates[concept.id] = [c.label for c in ranked]
        labels[concept.id] = namer.label_concept(memory, ids)
        _add_concept(memory, concept_node, labels[concept.id], ids)
    titles = []
    for intent in intents:
        evidence = [event_node_id(tenant, e) for e in sorted(intent.events)]
        support = [stable_id("concept", tenant, c) for c in intent.supporting if c in labels]
        titles.append(namer.title_intent(memory, evidence, intent.deadline, support))
    return Named([labels[c.id] for c in concepts], titles, [candidates[c.id] for c in concepts])


def _cosines(embedder: Embedder, pred: Sequence[str], gold: Sequence[str]) -> np.ndarray:
    if not pred:
        return np.zeros(0)
    a, b = embedder.embed(list(pred)), embedder.embed(list(gold))
    return np.einsum("ij,ij->i", a, b)


def _best_candidates(
    embedder: Embedder, candidates: Sequence[Sequence[str]], gold: Sequence[str]
) -> list[tuple[str, float]]:
    """Per gold concept, the candidate closest to its gold label and that cosine."""
    out = []
    for names, label in zip(candidates, gold, strict=True):
        if not names:
            out.append(("", 0.0))
            continue
        cosines = embedder.embed(list(names)) @ embedder.embed([label])[0]
        best = int(np.argmax(cosines))
        out.append((names[best], float(cosines[best])))
    return out


def score_names(
    embedder: Embedder,
    concepts: Sequence[OracleGroup],
    intents: Sequence[OracleGroup],
    named: Named,
) -> tuple[dict[str, float], dict[str, Any]]:
    """Oracle figures and the names behind them."""
    labels, titles = named.labels, named.titles
    gold_labels = [c.label for c in concepts]
    pools = [  # the pick itself may be no candidate ("Tickets" for "duplicate tickets")
        [*cands, name] if name and name not in cands else list(cands)
        for cands, name in zip(named.candidates, labels, strict=True)
    ]
    best = _best_candidates(embedder, pools, gold_labels)
    gold_goals = [i.label for i in intents]
    label_cos = _cosines(embedder, labels, gold_labels)
    title_cos = _cosines(embedder, titles, gold_goals)
    figures: dict[str, float] = {}
    for cosine in LABEL_COSINES:
        figures[f"oracle_label_hit@{cosine}"] = float(np.mean(label_cos >= cosine))
    figures["oracle_label_f1@0.6"] = m.soft_match(
        embedder.embed(list(labels)), embedder.embed(gold_labels), LABEL_COSINES[0]
    ).f1
    figures["oracle_label_cosine"] = float(np.mean(label_cos)) if len(label_cos) else 0.0
    figures["oracle_label_reachable@0.6"] = (
        float(np.mean([cos >= LABEL_COSINES[0] for _, cos in best])) if best else 0.0
    )
    if intents:
        figures["oracle_title_hit@0.5"] = float(np.mean(title_cos >= TITLE_COSINE))
        figures["oracle_title_recall@0.5"] = m.soft_match(
            embedder.embed(list(titles)), embedder.embed(gold_goals), TITLE_COSINE
        ).recall
        figures["oracle_title_cosine"] = float(np.mean(title_cos))
    names = {
        "concepts": [
            {
                "gold": g,
                "name": n,
                "cosine": float(c),
                "best_candidate": b,
                "best_cosine": bc,
                "candidates": cands,
            }
            for g, n, c, (b, bc), cands in zip(
                gold_labels, labels, label_cos, best, named.candidates, strict=True
            )
        ],
        "intents": [
            {"gold": g, "title": t, "cosine": float(c)}
            for g, t, c in zip(gold_goals, titles, title_cos, strict=True)
        ],
    }
    return figures, names


def oracle(
    tenant: str,
    events: Sequence[RawEvent],
    concepts: Sequence[OracleGroup],
    intents: Sequence[OracleGroup],
    embedder: Embedder,
    namer: Namer,
) -> tuple[dict[str, float], dict[str, Any]]:
    """Name the gold groups of one stream and score the names."""
    memory = stored(tenant, events, embedder)
    return score_names(embedder, concepts, intents, name_groups(memory, namer, concepts, intents))
