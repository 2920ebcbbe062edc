"""Grid over read-path parameters on LoCoMo (the tuning behind ReadConfig's defaults).

    .venv/bin/python -m benchmarks.tune_read [--half a | --limit 10] [--only NAME,NAME]
        [--try "NAME:key=value,q.key=value"]...

Tune on one half of the conversations (``--half a``: the first five) and check on the other
(``--half b``). Builds (or restores) the folded memories once, then prints the client measure
items@k (exactly k items of every kind, the first k distinct cited events) for each
configuration, per category, with fresh@10 (items that bring an event no earlier item cited).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from benchmarks.bench_locomo import add_arguments, evaluate, prepare
from benchmarks.common import quiet_logs
from schemas.query import QueryRequest
from topologies.config import EngineConfig
from topologies.read import ReadConfig, Reader

Grid = list[tuple[str, dict[str, Any], dict[str, Any]]]

# the parts of the read path one by one (no names, periods, feedback or second hop)
_BARE: dict[str, Any] = {
    "entity_boost": 0.0,
    "entity_hop_weight": 0.0,
    "entity_max_postings": 1 << 30,
    "time_weight": 0.0,
    "time_boost": 0.0,
    "feedback_weight": 0.0,
}
_NAMES: dict[str, Any] = {**_BARE, "entity_boost": 10.0, "entity_max_postings": 16}

# (name, ReadConfig overrides, QueryRequest overrides); the table in docs/read_path.md
GRID: Grid = [
    ("items only", _BARE, {}),
    ("+ names", _NAMES, {}),
    ("+ second hop", {**_NAMES, "entity_hop_weight": 0.3}, {}),
    ("+ periods", {"feedback_weight": 0.0}, {}),
    ("+ feedback (default)", {}, {}),
    ("EVENT and FACT items", {}, {"kinds": ["EVENT", "FACT"]}),
    ("concepts cite 1", {"surfaced_cites": 1}, {}),
    ("no MMR", {"mmr_weight": 0.0}, {}),
    ("names: boost 2, mentions 1", {"entity_boost": 2.0, "mention_weight": 1.0}, {}),
    ("no expansion", {}, {"expand": False, "surface": False}),
]


def parse_try(spec: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """'name:key=value,q.key=value': ReadConfig overrides, ``q.`` for QueryRequest ones
    (values are JSON, or a bare string; '|' separates list items, e.g. q.kinds=EVENT|FACT)."""
    name, _, body = spec.partition(":")
    cfg: dict[str, Any] = {}
    req: dict[str, Any] = {}
    for pair in filter(None, body.split(",")):
        key, _, value = pair.partition("=")
        parsed: Any
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = value.split("|") if "|" in value else value
        if key.startswith("q."):
            req[key[2:]] = parsed if key != "q.kinds" or isinstance(parsed, list) else [parsed]
        else:
            cfg[key] = parsed
    return name, cfg, req


def run(args: argparse.Namespace, grid: Grid) -> None:
    setup = prepare(args)
    only = {n.strip() for n in args.only.split(",") if n.strip()}
    for name, cfg, req in grid:
        if only and name not in only:
            continue
        reader = Reader(setup.embedder, EngineConfig(read=ReadConfig(**cfg)))

        def make(text: str, k: int, req: dict[str, Any] = req) -> QueryRequest:
            return QueryRequest(text=text, k=k, **req)

        ks = (5, 10, 20) if args.all_k else (10,)
        r = evaluate(setup.conversations, setup.memories, reader, make, per_k=True, ks=ks)
        wide = f"R@5 {r['all@5']:.3f} R@20 {r['all@20']:.3f}  " if args.all_k else ""
        print(
            f"{name:28s} R@10 {r['all@10']:.3f} {wide} mh {r['1@10']:.3f} tmp {r['2@10']:.3f}"
            f" od {r['3@10']:.3f} sh {r['4@10']:.3f}"
            f"  fresh@10 {r['fresh@10']:.2f}  {r['p50_ms']:.1f}ms",
            flush=True,
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    parser.add_argument("--only", default="", help="comma-separated names to run")
    parser.add_argument("--all-k", action="store_true", help="k = 5, 10, 20 (default: 10)")
    parser.add_argument(
        "--try", dest="tries", action="append", default=[], help="name:key=value,q.key=value"
    )
    args = parser.parse_args(argv)
    if args.half is None and args.limit is None:
        args.half = "a"
    quiet_logs()
    run(args, [parse_try(t) for t in args.tries] if args.tries else GRID)


if __name__ == "__main__":
    main()
