"""Grid over read-path parameters on LoCoMo (the tuning behind ReadConfig's defaults).

    .venv/bin/python -m benchmarks.tune_read [--limit 3] [--no-fold]

Builds the memories once, then prints R@10 (and R@5/R@20) for each configuration.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from benchmarks.bench_locomo import DEFAULT_DATA_DIR, build, evaluate, load, make_embedder
from benchmarks.common import quiet_logs
from schemas.query import QueryRequest
from topologies.read import ReadConfig, Reader

GRID: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    # round 1 (4 conversations, no fold): BM25 0.613, dense 0.433, hybrid 1:1 0.553,
    # hybrid 1:0.5 0.580, full 1:1 0.601, full 1:0.7 without contiguity 0.558 (R@10)
    # round 2: full 1:0.5 0.629, 1:0.3 0.653, 1:0.2 0.674; pagerank 0 -> 0.624, 0.4 -> 0.668;
    # hops 1 -> 0.633; rank_decay 0.2 -> 0.628, 1.0 -> 0.662; contiguity weight 0.8 -> 0.663
    ("bm25", {}, {"mode": "bm25", "expand": False, "surface": False}),
    ("hybrid 1:0.2", {"dense_weight": 0.2}, {"expand": False, "surface": False}),
    (
        "A dw.2 pr.4 exp.5 rank1",
        {"dense_weight": 0.2, "pagerank_weight": 0.4, "expansion_weight": 0.5, "rank_decay": 1.0},
        {},
    ),
    (
        "B dw.2 pr.4 exp.5 dec.7",
        {"dense_weight": 0.2, "pagerank_weight": 0.4, "expansion_weight": 0.5, "hop_decay": 0.7},
        {},
    ),
    ("C dw.2 pr.4", {"dense_weight": 0.2, "pagerank_weight": 0.4}, {}),
    (
        "D dw.2 pr.4 exp.5 dec.7 cw.8 rank1",
        {
            "dense_weight": 0.2,
            "pagerank_weight": 0.4,
            "expansion_weight": 0.5,
            "hop_decay": 0.7,
            "contiguity_weight": 0.8,
            "rank_decay": 1.0,
        },
        {},
    ),
    (
        "E dw.1 pr.4 exp.5",
        {"dense_weight": 0.1, "pagerank_weight": 0.4, "expansion_weight": 0.5},
        {},
    ),
]


FOLDED_GRID: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("bm25", {}, {"mode": "bm25", "expand": False, "surface": False}),
    ("full", {}, {}),
    ("full, events only", {}, {"kinds": ["EVENT"]}),
    ("full, no surfacing", {}, {"surface": False}),
    ("full, exp .2 pr .1", {"expansion_weight": 0.2, "pagerank_weight": 0.1}, {}),
    (
        "full, events only, exp .2 pr .1",
        {"expansion_weight": 0.2, "pagerank_weight": 0.1},
        {"kinds": ["EVENT"]},
    ),
]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--limit", type=int, default=3)
    parser.add_argument("--no-fold", action="store_true")
    parser.add_argument("--only", default="", help="comma-separated names to run")
    parser.add_argument("--grid", choices=("events", "folded"), default="events")
    args = parser.parse_args(argv)
    quiet_logs()
    conversations = load(args.data_dir, args.limit)
    embedder = make_embedder("minilm")
    embedder.warm([e.text for c in conversations for e in c.events])
    embedder.warm([q.text for c in conversations for q in c.questions])
    embedder.save()
    memories = asyncio.run(build(conversations, embedder, fold=not args.no_fold))
    print(
        "nodes",
        {t: len(m.graph) for t, m in memories.items()},
        "edges",
        {t: m.graph.edge_count() for t, m in memories.items()},
        flush=True,
    )
    only = {n.strip() for n in args.only.split(",") if n.strip()}
    for name, cfg, req in GRID if args.grid == "events" else FOLDED_GRID:
        if only and name.strip() not in only:
            continue
        reader = Reader(embedder, ReadConfig(**cfg))

        def make(text: str, req: dict[str, Any] = req) -> QueryRequest:
            return QueryRequest(text=text, k=20, **req)

        r = evaluate(conversations, memories, reader, make)
        print(
            f"{name:32s} R@5 {r['all@5']:.3f} R@10 {r['all@10']:.3f} R@20 {r['all@20']:.3f}"
            f"  mh {r['1@10']:.3f} tmp {r['2@10']:.3f} od {r['3@10']:.3f} sh {r['4@10']:.3f}"
            f"  {r['p50_ms']:.1f}ms",
            flush=True,
        )


if __name__ == "__main__":
    main()
