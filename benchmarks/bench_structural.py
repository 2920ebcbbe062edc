"""Structural quality of the folded graph: CogEval-style scenarios, the sample stream, LoCoMo.

    .venv/bin/python -m benchmarks.bench_structural [--embedder minilm|hashing] [--locomo]
        [--json PATH] [--scenario NAME ...] [--no-sample] [--name structural]

Each dev scenario (``<data-dir>/cogeval/*.json``) is folded in order through FoldEngine with
the heuristic planner and scored against its gold graph; so is ``examples/sample_stream.jsonl``
against ``examples/sample_themes.json`` (tenant alice). ``--locomo`` also folds each LoCoMo-10
conversation as a stream of chat events (one tenant each; turns turned into events by
``benchmarks.bench_locomo.load``) and counts its concepts, announced and pending intents.
Embeddings are cached on disk (``benchmarks.common.CachingEmbedder``; batch and single
embeddings are identical, so a cached run gives the same figures as a cold one).

The issue 11 figures (``structural_report.DEFINITIONS``, repeated in every result file):

- ``label_f1@0.6`` / ``label_f1@0.75``: titles of the live CONCEPT nodes (not superseded;
  merged ones are gone) against the gold concept labels, embedder (MiniLM) cosine, one-to-one
  Hungarian (``metrics_structural.soft_match``).
- ``grounded_f1``: each live concept's member events against each gold concept's events,
  one-to-one Hungarian on Jaccard, a pair counts at Jaccard >= 0.3
  (``metrics_structural.set_match``). Members: the EVENT nodes among the concept's direct
  evidence (``topologies.read.evidence.supporters``: GROUNDS / REINFORCES in-edges and
  DERIVED_FROM out-edges); a merge hands the absorbed concept's edges to the keeper, so events
  of merged concepts count for the keeper.
- ``intent_title_recall@0.5``: share of gold intents whose label is matched one-to-one
  (Hungarian) by an intent title at cosine >= 0.5.
- ``intent_evidence_precision`` / ``intent_evidence_recall``: an intent's evidence is the
  public view's ``evidence_event_ids`` (``topologies.intents.intent_view``: events grounding or
  reinforcing the intent or its supporting concepts); a gold intent's evidence is the events of
  its supporting concepts; see ``metrics_structural.evidence_match``.

Writes ``benchmarks/results/<name>.md``, ``<name>_names.md`` (the names a person reads) and
``<name>.png``; ``--json PATH`` writes every figure for diffing runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import metrics_structural as m
from benchmarks.bench_locomo import load as load_locomo
from benchmarks.bench_locomo import make_embedder
from benchmarks.common import DEFAULT_DATA_DIR, ROOT, CachingEmbedder, quiet_logs
from benchmarks.naming_oracle import OracleGroup, oracle
from benchmarks.structural_report import Run, Scored, write_all
from schemas.events import RawEvent
from schemas.graph import EdgeKind, Node, NodeKind
from schemas.intents import IntentStatus
from topologies.config import EngineConfig
from topologies.embedding import Embedder
from topologies.engine import FoldEngine
from topologies.graph import MemoryGraph
from topologies.heuristic_planner import HeuristicPlanner
from topologies.intents import intent_view
from topologies.memory import TenantMemory, event_node_id
from topologies.naming import Namer
from topologies.naming.activities import lexicon
from topologies.naming.phrases import PhraseParser, shared_parser
from topologies.read.evidence import supporters
from topologies.vector_index import use_single_thread

SAMPLE_STREAM = ROOT / "examples" / "sample_stream.jsonl"
SAMPLE_THEMES = ROOT / "examples" / "sample_themes.json"

LABEL_COSINES = (0.6, 0.75)
GROUNDED_JACCARD = 0.3
TITLE_COSINE = 0.5
EVIDENCE_MINIMUM = 2


@dataclass(frozen=True)
class GoldItem:
    """A gold concept or intent: its label and the RawEvent ids it stands for."""

    id: str
    label: str
    events: frozenset[str]


# ----------------------------------------------------------------------------- folding
def to_event(scenario: str, raw: dict[str, Any]) -> RawEvent:
    people = [
        *raw.get("attendees", []),
        *([raw["from"]] if raw.get("from") else []),
        *(raw.get("to") or []),
    ]
    extra: dict[str, Any] = {k: raw[k] for k in ("attendees", "from", "to") if k in raw}
    return RawEvent(
        id=raw["id"],
        tenant=scenario,
        source=raw["source"],
        ts=datetime.fromisoformat(raw["ts"]),
        title=raw.get("title", ""),
        body=raw.get("body", ""),
        participants=[str(p) for p in people][:50],
        attrs=extra,
    )


def scenario_events(scenario: dict[str, Any]) -> list[RawEvent]:
    return [to_event(scenario["scenario"], raw) for raw in scenario["events"]]


@dataclass
class Folded:
    """A folded stream and the intent messages its folds published."""

    memory: TenantMemory
    announced: int = 0  # intent.created messages: notifications of a new intent
    status_changes: int = 0  # intent.status_changed messages
    updates: int = 0  # intent.updated messages: an intent's title or deadline changed
    events: int = 0
    naming_cpu: float = 0.0  # process CPU seconds spent naming concepts and intents
    namings: int = 0


def naming_embedder(embedder: Embedder) -> Embedder:
    """The embedder names are computed with: the model itself, not the benchmark's disk
    cache of event vectors, so the naming CPU measured is what a fresh process spends."""
    return embedder.inner if isinstance(embedder, CachingEmbedder) else embedder


async def fold_stream(tenant: str, events: Iterable[RawEvent], embedder: Embedder) -> Folded:
    """Fold events in order into a fresh memory (heuristic planner, default EngineConfig)."""
    config = EngineConfig()
    namer = Namer(naming_embedder(embedder))
    engine = FoldEngine(embedder, HeuristicPlanner(embedder, config, namer), config, namer=namer)
    folded = Folded(engine.new_memory(tenant))
    for event in events:
        result = await engine.fold(folded.memory, event)
        folded.events += 1
        for message in result.messages:
            if message.type == "intent.created":
                folded.announced += 1
            elif message.type == "intent.updated":
                folded.updates += 1
            else:
                folded.status_changes += 1
    folded.naming_cpu, folded.namings = namer.cpu_seconds, namer.namings
    return folded


async def fold(scenario: dict[str, Any], embedder: Embedder) -> Folded:
    return await fold_stream(scenario["scenario"], scenario_events(scenario), embedder)


# ------------------------------------------------------------------------ graph reading
def live_concepts(graph: MemoryGraph) -> list[Node]:
    """CONCEPT nodes not superseded (merged ones are removed), oldest first."""
    concepts = [c for c in graph.nodes(NodeKind.CONCEPT) if c.superseded_by is None]
    return sorted(concepts, key=lambda n: (n.created_at, n.id))


def live_intents(graph: MemoryGraph) -> list[Node]:
    return sorted(graph.nodes(NodeKind.INTENT), key=lambda n: (n.created_at, n.id))


def concept_events(graph: MemoryGraph, concept_id: str) -> set[str]:
    """RawEvent ids of the EVENT nodes among the concept's direct evidence."""
    out = set()
    for node_id, _ in supporters(graph, concept_id):
        node = graph.get(node_id)
        if node is not None and node.kind == NodeKind.EVENT and node.source_event_id:
            out.add(node.source_event_id)
    return out


def intent_events(memory: TenantMemory, intent: Node) -> set[str]:
    """RawEvent ids of the intent's evidence as the public view shows it."""
    return set(intent_view(memory, intent).evidence_event_ids)


def embed(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    return embedder.embed(list(texts)) if texts else np.zeros((0, embedder.dim), np.float32)


# ----------------------------------------------------------------------------- scoring
def cogeval_gold(scenario: dict[str, Any]) -> tuple[list[GoldItem], list[GoldItem]]:
    """Gold concepts (their events) and gold intents (the events of their supporting concepts)."""
    events: dict[str, set[str]] = {}
    for raw in scenario["events"]:
        if raw.get("gold_concept"):
            events.setdefault(raw["gold_concept"], set()).add(raw["id"])
    gold = scenario["gold"]
    concepts = [
        GoldItem(c["id"], c["label"], frozenset(events.get(c["id"], ()))) for c in gold["concepts"]
    ]
    intents = [
        GoldItem(
            i["id"],
            i["label"],
            frozenset(e for c in i["supporting"] for e in events.get(c, ())),
        )
        for i in gold["intents"]
    ]
    return concepts, intents


def score_issue(
    memory: TenantMemory,
    gold_concepts: Sequence[GoldItem],
    gold_intents: Sequence[GoldItem],
    embedder: Embedder,
    announced: int | None = None,
) -> Scored:
    """The issue 11 figures of one folded stream, and the names behind them.

    ``announced``: intent.created messages of the fold (defaults to the intents in the graph).
    """
    graph = memory.graph
    concepts = live_concepts(graph)
    intents = live_intents(graph)
    titles = [c.title for c in concepts]
    pred_c = embed(embedder, titles)
    gold_c = embed(embedder, [g.label for g in gold_concepts])
    members = [concept_events(graph, c.id) for c in concepts]
    grounded = m.set_match(members, [g.events for g in gold_concepts], GROUNDED_JACCARD)
    intent_titles = [i.title for i in intents]
    evidence = [intent_events(memory, i) for i in intents]
    pred_i = embed(embedder, intent_titles)
    gold_i = embed(embedder, [g.label for g in gold_intents])
    by_title = m.soft_match(pred_i, gold_i, TITLE_COSINE)
    by_evidence = m.evidence_match(evidence, [g.events for g in gold_intents], EVIDENCE_MINIMUM)
    figures: dict[str, float] = {
        "concepts": len(concepts),
        "gold_concepts": len(gold_concepts),
        "intents": len(intents),
        "announced": len(intents) if announced is None else announced,
        "pending": sum(1 for i in intents if i.status == IntentStatus.PENDING),
        "gold_intents": len(gold_intents),
        "concept_ratio": len(concepts) / len(gold_concepts) if gold_concepts else 0.0,
        "grounded_f1": grounded.f1,
        "grounded_precision": grounded.precision,
        "grounded_recall": grounded.recall,
        "intent_title_recall@0.5": by_title.recall,
        "intent_evidence_precision": by_evidence.precision,
        "intent_evidence_recall": by_evidence.recall,
        "intent_duplicates": m.duplicate_matches(by_evidence.matches),
    }
    for cosine in LABEL_COSINES:
        figures[f"label_f1@{cosine}"] = m.soft_match(pred_c, gold_c, cosine).f1
    label_pairs = m.soft_match(pred_c, gold_c, -1.0).pairs  # every assigned pair
    title_pairs = m.soft_match(pred_i, gold_i, -1.0).pairs
    names = {
        "concepts": _concept_names(gold_concepts, titles, members, label_pairs, grounded.pairs),
        "unmatched_concepts": [
            f"{titles[p]} ({len(members[p])} events)"
            for p in range(len(concepts))
            if not any(r == p and c >= LABEL_COSINES[0] for r, _, c in label_pairs)
        ],
        "intents": [
            {
                "gold": g.label,
                **_partner(title_pairs, j, intent_titles, TITLE_COSINE),
                "by_evidence": [
                    intent_titles[i] for i, row in enumerate(by_evidence.matches) if j in row
                ],
            }
            for j, g in enumerate(gold_intents)
        ],
        "emitted": [
            {
                "title": i.title,
                "status": str(i.status),
                "evidence": len(evidence[n]),
                "matches": [gold_intents[j].label for j in by_evidence.matches[n]],
                "description": i.text,
            }
            for n, i in enumerate(intents)
        ],
    }
    return Scored(figures, names)


def _partner(
    pairs: list[tuple[int, int, float]], gold: int, texts: list[str], threshold: float
) -> dict[str, Any]:
    """The text assigned to gold item ``gold``: matched (>= threshold) or only nearest."""
    for r, c, cosine in pairs:
        if c == gold:
            hit = cosine >= threshold
            return {"matched": texts[r] if hit else None, "nearest": texts[r], "cosine": cosine}
    return {"matched": None, "nearest": None, "cosine": None}


def _concept_names(
    gold: Sequence[GoldItem],
    titles: list[str],
    members: list[set[str]],
    label_pairs: list[tuple[int, int, float]],
    grounded_pairs: list[tuple[int, int, float]],
) -> list[dict[str, Any]]:
    out = []
    for j, g in enumerate(gold):
        row = {"gold": g.label, "events": len(g.events)}
        row.update(_partner(label_pairs, j, titles, LABEL_COSINES[0]))
        holder = next(((r, jac) for r, c, jac in grounded_pairs if c == j), None)
        row["holder"] = None if holder is None else titles[holder[0]]
        row["holder_events"] = None if holder is None else len(members[holder[0]])
        row["jaccard"] = None if holder is None else holder[1]
        out.append(row)
    return out


def structure(
    scenario: dict[str, Any], memory: TenantMemory, embedder: Embedder
) -> dict[str, float]:
    """The earlier structural metrics (metrics_structural.py) of one scenario."""
    graph = memory.graph
    tenant = scenario["scenario"]
    gold = scenario["gold"]
    label_of = {
        event_node_id(tenant, e["id"]): e.get("gold_concept") or "distractor"
        for e in scenario["events"]
    }
    concepts = live_concepts(graph)
    intents = live_intents(graph)
    gold_c = embed(embedder, [f"{c['label']}: {c['description']}" for c in gold["concepts"]])
    pred_c = embed(embedder, [n.embed_text for n in concepts])
    gold_i = embed(embedder, [f"{i['label']}: {i['trigger']}" for i in gold["intents"]])
    pred_i = embed(embedder, [n.embed_text for n in intents])
    clusters = []
    for concept in concepts:
        members = [label_of[s] for s, _ in supporters(graph, concept.id) if s in label_of]
        clusters.append(members)
    chains = [[event_node_id(tenant, e) for e in chain["events"]] for chain in gold["chains"]]
    whole, hops = m.chain_discovery(graph.g, chains, max_hops=4)
    links = []
    for intent in intents:
        count = sum(
            1
            for kind in (EdgeKind.GROUNDS, EdgeKind.REINFORCES, EdgeKind.TRIGGERS)
            for _ in graph.in_edges(intent.id, kind)
        )
        count += sum(1 for _ in graph.out_edges(intent.id, EdgeKind.DERIVED_FROM))
        links.append(count)
    return {
        "events": len(scenario["events"]),
        "nodes": len(graph),
        "edges": graph.edge_count(),
        "concept_f1": m.soft_match(pred_c, gold_c, 0.75).f1,
        "concept_f1@0.5": m.soft_match(pred_c, gold_c, 0.5).f1,  # diagnostic, looser match
        "purity": m.purity(clusters),
        "compression": m.compression(len(scenario["events"]), len(concepts)),
        "chains": whole,
        "chain_hops": hops,
        "clustering": m.clustering(graph.g),
        "modularity": m.modularity(graph.g),
        "edge_entropy": m.entropy((e.kind for e in graph.edges()), normalise_by=len(EdgeKind)),
        "pagerank_gini": m.pagerank_gini(graph.g),
        "proactivity": m.proactivity(links),
        "intent_recall": m.soft_match(pred_i, gold_i, 0.75).recall,
        "intent_recall@0.5": m.soft_match(pred_i, gold_i, 0.5).recall,
    }


def score(scenario: dict[str, Any], folded: Folded, embedder: Embedder) -> Scored:
    """Every figure of one dev scenario: issue 11's and the earlier structural ones."""
    concepts, intents = cogeval_gold(scenario)
    scored = score_issue(folded.memory, concepts, intents, embedder, folded.announced)
    scored.figures.update(structure(scenario, folded.memory, embedder))
    scored.figures.update(naming_cost(folded))
    return scored


def naming_cost(folded: Folded) -> dict[str, float]:
    """CPU milliseconds spent naming, per folded event, and the namings behind them."""
    return {
        "naming_ms_per_event": 1000 * folded.naming_cpu / max(1, folded.events),
        "namings": folded.namings,
    }


# -------------------------------------------------------------------------- the sample
@dataclass(frozen=True)
class Theme:
    id: str
    label: str
    kind: str  # goal | recurring | distractor
    goal: str | None
    events: frozenset[str]


def load_themes(path: Path = SAMPLE_THEMES) -> list[Theme]:
    data = json.loads(path.read_text())
    return [
        Theme(t["id"], t["label"], t["kind"], t.get("goal"), frozenset(t["events"]))
        for t in data["themes"]
    ]


def load_sample(
    stream: Path = SAMPLE_STREAM, themes_path: Path = SAMPLE_THEMES
) -> tuple[list[RawEvent], list[Theme]]:
    """The sample events and their themes; every event must sit in exactly one theme."""
    events = [RawEvent.model_validate_json(line) for line in stream.read_text().splitlines()]
    themes = load_themes(themes_path)
    placed = [e for t in themes for e in t.events]
    ids = {e.id for e in events}
    if len(placed) != len(set(placed)) or set(placed) != ids:
        raise SystemExit(
            f"{themes_path.name} must place each of the {len(ids)} events in exactly one theme"
        )
    return events, themes


def score_sample(folded: Folded, themes: Sequence[Theme], embedder: Embedder) -> Scored:
    """Issue 11 figures against the themes (gold concepts: every theme but the distractors;
    gold intents: the goals) and, per theme, the intents and concepts whose evidence is
    mostly there."""
    concepts_gold = [GoldItem(t.id, t.label, t.events) for t in themes if t.kind != "distractor"]
    goals = [GoldItem(t.id, t.goal, t.events) for t in themes if t.goal]
    memory = folded.memory
    scored = score_issue(memory, concepts_gold, goals, embedder, folded.announced)
    scored.figures.update(naming_cost(folded))
    graph = memory.graph
    groups = {t.id: set(t.events) for t in themes}
    intents = [(i, m.majority_group(intent_events(memory, i), groups)) for i in live_intents(graph)]
    concepts = [
        (c, m.majority_group(concept_events(graph, c.id), groups)) for c in live_concepts(graph)
    ]
    rows = []
    for t in themes:
        mine = [i for i, theme in intents if theme == t.id]
        rows.append(
            {
                "theme": t.id,
                "label": t.label,
                "kind": t.kind,
                "goal": t.goal,
                "events": len(t.events),
                "pending": sum(1 for i in mine if i.status == IntentStatus.PENDING),
                "scheduled": sum(1 for i in mine if i.status == IntentStatus.ACTION_SCHEDULED),
                "resolved": sum(1 for i in mine if i.status == IntentStatus.RESOLVED),
                "intents": len(mine),
                "concepts": sum(1 for _, theme in concepts if theme == t.id),
            }
        )
    goal_ids = {t.id for t in themes if t.goal}
    pending = [(i, theme) for i, theme in intents if i.status == IntentStatus.PENDING]
    scored.figures.update(
        {
            "events": sum(len(t.events) for t in themes),
            "goal_themes": len(goal_ids),
            "goal_themes_with_one_pending": sum(
                1 for r in rows if r["theme"] in goal_ids and r["pending"] == 1
            ),
            # a goal reached within the stream (the party is over, the review was a GO): one
            # resolved intent and none open is the one intent that goal should have; one whose
            # action is scheduled (the passport applied for) is still its one open intent
            "goal_themes_with_one_goal": sum(
                1
                for r in rows
                if r["theme"] in goal_ids
                and (
                    r["pending"] + r["scheduled"] == 1
                    or (r["pending"] + r["scheduled"] == 0 and r["resolved"] == 1)
                )
            ),
            "pending_off_goal": sum(1 for _, theme in pending if theme not in goal_ids),
            "intents_mixed": sum(1 for _, theme in intents if theme is None),
        }
    )
    scored.names["themes"] = rows
    scored.names["sample_intents"] = [
        {
            "title": i.title,
            "status": str(i.status),
            "theme": theme or "mixed",
            "description": i.text,
        }
        for i, theme in intents
    ]
    scored.names["sample_concepts"] = [
        {"title": c.title, "members": len(concept_events(graph, c.id)), "theme": theme or "mixed"}
        for c, theme in concepts
    ]
    return scored


# ----------------------------------------------------------------------- naming oracle
def oracle_scenario(scenario: dict[str, Any], embedder: Embedder) -> Scored:
    """The namer's names of a dev scenario's gold concepts and intents, scored."""
    events: dict[str, set[str]] = {}
    for raw in scenario["events"]:
        if raw.get("gold_concept"):
            events.setdefault(raw["gold_concept"], set()).add(raw["id"])
    gold = scenario["gold"]
    concepts = [
        OracleGroup(c["id"], c["label"], frozenset(events.get(c["id"], ())))
        for c in gold["concepts"]
    ]
    intents = [
        OracleGroup(
            i["id"],
            i["label"],
            frozenset(e for c in i["supporting"] for e in events.get(c, ())),
            tuple(i["supporting"]),
            datetime.fromisoformat(i["deadline"]) if i.get("deadline") else None,
        )
        for i in gold["intents"]
    ]
    namer = Namer(naming_embedder(embedder), PhraseParser())  # its own cache of parses
    figures, names = oracle(
        scenario["scenario"], scenario_events(scenario), concepts, intents, embedder, namer
    )
    return Scored(figures, names)


def oracle_sample(
    events: Sequence[RawEvent], themes: Sequence[Theme], embedder: Embedder
) -> Scored:
    """The namer's names of the sample's themes (concepts) and goals (intents), scored."""
    concepts = [OracleGroup(t.id, t.label, t.events) for t in themes if t.kind != "distractor"]
    goals = [OracleGroup(t.id, t.goal, t.events, (t.id,)) for t in themes if t.goal]
    namer = Namer(naming_embedder(embedder), PhraseParser())
    figures, names = oracle(events[0].tenant, events, concepts, goals, embedder, namer)
    return Scored(figures, names)


# ----------------------------------------------------------------------------- LoCoMo
def locomo(data_dir: Path, embedder: CachingEmbedder, limit: int | None) -> dict[str, Any]:
    """Fold each LoCoMo-10 conversation (its turns as chat events, by bench_locomo's loader)
    and count its intents and concepts."""
    if not (data_dir / "locomo" / "locomo10.json").exists():
        raise SystemExit(f"LoCoMo not found under {data_dir}/locomo (use --data-dir)")
    conversations = load_locomo(data_dir, limit)
    embedder.warm([e.text for c in conversations for e in c.events])
    rows: dict[str, dict[str, float]] = {}
    titles: dict[str, list[str]] = {}
    concepts: dict[str, list[str]] = {}
    for conv in conversations:
        wall, cpu = time.perf_counter(), time.process_time()
        folded = asyncio.run(fold_stream(conv.tenant, conv.events, embedder))
        memory = folded.memory
        intents = live_intents(memory.graph)
        pending = [i for i in intents if i.status == IntentStatus.PENDING]
        rows[conv.tenant] = {
            "turns": len(conv.events),
            "concepts": len(live_concepts(memory.graph)),
            "intents": len(intents),
            "announced": folded.announced,
            "updates": folded.updates,
            "pending": len(pending),
            "seconds": time.perf_counter() - wall,
            "cpu_seconds": time.process_time() - cpu,
            **naming_cost(folded),
        }
        titles[conv.tenant] = [i.title for i in pending]
        by_size = sorted(
            live_concepts(memory.graph),
            key=lambda c: (-len(concept_events(memory.graph, c.id)), c.created_at, c.id),
        )
        concepts[conv.tenant] = [
            f"{c.title} ({len(concept_events(memory.graph, c.id))})" for c in by_size
        ]
    return {"conversations": rows, "pending_titles": titles, "concept_names": concepts}


# -------------------------------------------------------------------------------- main
def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    parser.add_argument(
        "--scenario", action="append", default=None, help="only this dev scenario (repeatable)"
    )
    parser.add_argument("--no-sample", action="store_true", help="skip the sample stream")
    parser.add_argument("--locomo", action="store_true", help="also fold LoCoMo-10 (minutes)")
    parser.add_argument("--locomo-limit", type=int, default=None, help="first N conversations")
    parser.add_argument(
        "--oracle-groups",
        action="store_true",
        help="also name the gold concepts and intents from their own events (naming alone)",
    )
    parser.add_argument(
        "--oracle-only", action="store_true", help="only the --oracle-groups figures (no fold)"
    )
    parser.add_argument("--json", type=Path, default=None, help="write every figure here")
    parser.add_argument("--name", default="structural", help="results file stem")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    command = " ".join(
        [
            ".venv/bin/python -m benchmarks.bench_structural",
            *(sys.argv[1:] if argv is None else argv),
        ]
    )
    quiet_logs()
    use_single_thread()  # as the runtime does (stream_app.factory.build_engine)
    files = sorted((args.data_dir / "cogeval").glob("*.json"))
    if args.scenario:
        files = [f for f in files if f.stem in set(args.scenario)]
    if not files:
        raise SystemExit(f"no scenarios under {args.data_dir}/cogeval (use --data-dir)")
    embedder = make_embedder(args.embedder)
    run = Run(command=command, embedder=embedder.model_id)
    scenarios = [json.loads(path.read_text()) for path in files]
    embedder.warm([e.text for s in scenarios for e in scenario_events(s)])
    shared_parser()  # loaded once per process, as in the runtime: not a cost of naming
    lexicon()  # the same for the nouns of doing (activity labels)
    naming_embedder(embedder).embed(["warm up"])
    for scenario in [] if args.oracle_only else scenarios:
        with run.timed(scenario["scenario"]):
            folded = asyncio.run(fold(scenario, embedder))
            run.scenarios[scenario["scenario"]] = score(scenario, folded, embedder)
    if not args.no_sample and not args.oracle_only:
        events, themes = load_sample()
        embedder.warm([e.text for e in events])
        with run.timed("sample"):
            folded = asyncio.run(fold_stream(events[0].tenant, events, embedder))
            run.sample = score_sample(folded, themes, embedder)
    if args.oracle_groups or args.oracle_only:  # after the folds: no parse served to them
        for scenario in scenarios:
            run.oracle[scenario["scenario"]] = oracle_scenario(scenario, embedder)
        if not args.no_sample:
            events, themes = load_sample()
            run.oracle["sample"] = oracle_sample(events, themes, embedder)
    if args.locomo:
        with run.timed("locomo"):
            run.locomo = locomo(args.data_dir, embedder, args.locomo_limit)
    embedder.save()
    paths = write_all(run, args.name, args.json)
    print(paths[0].read_text())
    if run.sample is not None:
        print(paths[1].read_text().split("## Sample stream", 1)[-1])


if __name__ == "__main__":
    main()
