"""Structural quality of the folded graph on the CogEval-style scenarios (SPEC section 5).

    .venv/bin/python -m benchmarks.bench_structural [--data-dir ../shared/data] [--embedder minilm]

Each scenario's events are folded in order through FoldEngine with the heuristic planner;
the resulting graph is scored against the scenario's gold graph with the functions of
benchmarks.metrics_structural. Writes benchmarks/results/structural.md and structural.png.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import metrics_structural as m
from benchmarks.common import DEFAULT_DATA_DIR, RESULTS, machine, quiet_logs, stamp
from schemas.events import RawEvent
from schemas.graph import EdgeKind, NodeKind
from topologies.config import EngineConfig
from topologies.embedding import Embedder, HashingEmbedder, MiniLmOnnxEmbedder
from topologies.engine import FoldEngine
from topologies.heuristic_planner import HeuristicPlanner
from topologies.memory import TenantMemory, event_node_id
from topologies.read.evidence import supporters

METRICS = (
    "concept_f1",
    "concept_f1@0.5",
    "purity",
    "compression",
    "chains",
    "chain_hops",
    "clustering",
    "modularity",
    "edge_entropy",
    "pagerank_gini",
    "proactivity",
    "intent_recall",
    "intent_recall@0.5",
)


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


async def fold(scenario: dict[str, Any], embedder: Embedder) -> TenantMemory:
    config = EngineConfig()
    engine = FoldEngine(embedder, HeuristicPlanner(embedder, config), config)
    memory = engine.new_memory(scenario["scenario"])
    for raw in scenario["events"]:
        await engine.fold(memory, to_event(scenario["scenario"], raw))
    return memory


def score(scenario: dict[str, Any], memory: TenantMemory, embedder: Embedder) -> dict[str, float]:
    graph = memory.graph
    tenant = scenario["scenario"]
    gold = scenario["gold"]
    label_of = {
        event_node_id(tenant, e["id"]): e.get("gold_concept") or "distractor"
        for e in scenario["events"]
    }
    concepts = list(graph.nodes(NodeKind.CONCEPT))
    intents = list(graph.nodes(NodeKind.INTENT))

    def embed(texts: list[str]) -> np.ndarray:
        return embedder.embed(texts) if texts else np.zeros((0, embedder.dim), np.float32)

    gold_c = embed([f"{c['label']}: {c['description']}" for c in gold["concepts"]])
    pred_c = embed([n.embed_text for n in concepts])
    gold_i = embed([f"{i['label']}: {i['trigger']}" for i in gold["intents"]])
    pred_i = embed([n.embed_text for n in intents])
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
        "concepts": len(concepts),
        "intents": len(intents),
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


def write(rows: dict[str, dict[str, float]], args: argparse.Namespace, took: float) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    cols = ("events", "nodes", "edges", "concepts", "intents", *METRICS)
    mean = {c: float(np.mean([r[c] for r in rows.values()])) for c in cols}
    lines = [
        "# Structural quality on the CogEval-style scenarios",
        "",
        f"- date: {stamp()}",
        f"- machine: {machine()}",
        f"- command: `.venv/bin/python -m benchmarks.bench_structural --embedder {args.embedder}`",
        f"- heuristic planner; soft match cosine >= 0.75 (Hungarian); chains: every hop "
        f"pair within 4 undirected hops; {took:.0f} s",
        "",
        "| scenario | " + " | ".join(cols) + " |",
        "|---" * (len(cols) + 1) + "|",
    ]
    for name, r in [*rows.items(), ("**mean**", mean)]:
        lines.append(
            f"| {name} | "
            + " | ".join(
                f"{r[c]:.0f}"
                if c in ("events", "nodes", "edges", "concepts", "intents")
                else f"{r[c]:.3f}"
                for c in cols
            )
            + " |"
        )
    path = RESULTS / "structural.md"
    path.write_text("\n".join(lines) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [c for c in METRICS if c != "compression"]
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.bar(shown, [mean[c] for c in shown], color="#4C72B0")
    ax.set_ylim(0, 1)
    ax.set_title(
        f"CogEval-style structure, mean of {len(rows)} scenarios "
        f"(compression {mean['compression']:.1f})"
    )
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
    fig.tight_layout()
    fig.savefig(RESULTS / "structural.png", dpi=120)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    args = parser.parse_args(argv)
    quiet_logs()
    files = sorted((args.data_dir / "cogeval").glob("*.json"))
    if not files:
        raise SystemExit(f"no scenarios under {args.data_dir}/cogeval (use --data-dir)")
    embedder: Embedder = MiniLmOnnxEmbedder() if args.embedder == "minilm" else HashingEmbedder()
    started = time.perf_counter()
    rows = {}
    for path in files:
        scenario = json.loads(path.read_text())
        memory = asyncio.run(fold(scenario, embedder))
        rows[scenario["scenario"]] = score(scenario, memory, embedder)
    out = write(rows, args, time.perf_counter() - started)
    print(out.read_text())


if __name__ == "__main__":
    main()
