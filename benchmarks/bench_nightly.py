"""Nightly engine benchmark on the CogEval scenarios (../shared/data/cogeval/*.json).

Each scenario is folded into its own tenant (heuristic planner + fact step), then one nightly
run (core schemas enabled) is timed per tenant. A sixth-plus-one tenant, ``life``, holds all six
streams (one person, six life domains) to exercise the cross-domain sweeper. Then a second night
after more events checks that the graph is extended, not rebuilt.

    .venv/bin/python -m benchmarks.bench_nightly [--embedder minilm|hashing] [--data DIR]

Writes benchmarks/results/nightly.md and nightly.png. The data are read in place, never copied.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.common import DEFAULT_DATA_DIR, RESULTS, CachingEmbedder, machine, stamp
from schemas.events import RawEvent
from schemas.graph import NodeKind
from topologies.config import EngineConfig
from topologies.embedding import Embedder, HashingEmbedder, MiniLmOnnxEmbedder
from topologies.engine import FoldEngine
from topologies.heuristic_planner import HeuristicPlanner
from topologies.memory import TenantMemory
from topologies.nightly.run import NightlyReport, run_nightly
from topologies.privacy import set_layers

PRIVACY_NOW = datetime(2026, 12, 1, tzinfo=UTC)  # when the user asked (audit time)

COGEVAL_DIR = DEFAULT_DATA_DIR / "cogeval"


def scenario_files(data_dir: Path = COGEVAL_DIR) -> list[Path]:
    return sorted(data_dir.glob("*.json")) if data_dir.is_dir() else []


def load_cogeval(path: Path, tenant: str) -> list[RawEvent]:
    """A scenario's events as RawEvents of ``tenant``, in time order."""
    data = json.loads(path.read_text(encoding="utf-8"))
    events = []
    for raw in data["events"]:
        participants = [p for p in [raw.get("from"), *(raw.get("to") or [])] if p]
        events.append(
            RawEvent(
                id=f"{data['scenario']}:{raw['id']}",
                tenant=tenant,
                source=raw.get("source", "note"),
                ts=datetime.fromisoformat(raw["ts"]),
                title=raw.get("title", ""),
                body=raw.get("body", ""),
                participants=participants[:50],
            )
        )
    events.sort(key=lambda e: (e.ts, e.id))
    return events


def build_engine(embedder: Embedder) -> FoldEngine:
    config = EngineConfig()
    return FoldEngine(embedder, HeuristicPlanner(embedder, config), config)


async def fold_all(engine: FoldEngine, memory: TenantMemory, events: list[RawEvent]) -> float:
    started = time.perf_counter()
    for event in events:
        await engine.fold(memory, event)
    return time.perf_counter() - started


def enable_core(memory: TenantMemory) -> None:
    set_layers(memory, {"core_schemas": True}, actor="benchmark", now=PRIVACY_NOW)


@dataclass
class Row:
    tenant: str
    events: int
    facts: int
    fold_s: float
    report: NightlyReport

    def cells(self) -> list[str]:
        r = self.report
        return [
            self.tenant,
            str(self.events),
            str(self.facts),
            f"{self.fold_s:.2f}",
            str(r.fresh_facts),
            str(r.clusters),
            str(len(r.schemas_created)),
            str(len(set(r.schemas_extended))),
            str(len(r.intents_created)),
            str(r.collisions),
            str(len(r.core_created)),
            f"{r.seconds * 1000:.0f}",
        ]


HEADER = [
    "tenant",
    "events",
    "facts",
    "fold s",
    "fresh facts",
    "clusters",
    "schemas new",
    "schemas extended",
    "intents new",
    "collisions",
    "core new",
    "nightly ms",
]


async def run(embedder: Embedder, data_dir: Path, budget_s: float) -> tuple[list[Row], list[Row]]:
    files = scenario_files(data_dir)
    if not files:
        raise SystemExit(f"no CogEval scenarios under {data_dir}")
    import sklearn.cluster  # noqa: F401  (one-off import cost, not a nightly run's)

    engine = build_engine(embedder)
    rows: list[Row] = []
    life = engine.new_memory("life")
    enable_core(life)
    everything: list[RawEvent] = []
    for path in files:
        tenant = path.stem
        memory = engine.new_memory(tenant)
        enable_core(memory)
        events = load_cogeval(path, tenant)
        fold_s = await fold_all(engine, memory, events)
        report = run_nightly(engine, memory, engine.stream_now(memory), budget_s)
        rows.append(Row(tenant, len(events), memory.graph.count(NodeKind.FACT), fold_s, report))
        everything.extend(e.with_tenant("life") for e in load_cogeval(path, "life"))
    everything.sort(key=lambda e: (e.ts, e.id))
    # two nights for the multi-domain tenant: half the stream, then the rest
    half = len(everything) // 2
    nights: list[Row] = []
    for part, chunk in (("life night 1", everything[:half]), ("life night 2", everything[half:])):
        fold_s = await fold_all(engine, life, chunk)
        report = run_nightly(engine, life, engine.stream_now(life), budget_s)
        nights.append(Row(part, len(chunk), life.graph.count(NodeKind.FACT), fold_s, report))
    return rows, nights


def write(rows: list[Row], nights: list[Row], embedder_name: str, command: str) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    lines = [
        "# Nightly engine (DCPM System 2) on the CogEval scenarios",
        "",
        f"{stamp()} · {machine()} · embedder `{embedder_name}` · `{command}`",
        "",
        "One tenant per scenario (fold with the heuristic planner and the fact step, then one "
        "nightly run with core schemas enabled); `life` holds all six streams (six life "
        "domains) folded in two halves with a night after each.",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
    ]
    lines += ["| " + " | ".join(r.cells()) + " |" for r in [*rows, *nights]]
    per_tenant = [r.report.seconds for r in rows]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines += [
        "",
        f"Load average at the end of the run: {load:.1f} (shared machine; times are wall clock).",
        "",
        "Nightly run time per single-scenario tenant: "
        f"mean {1000 * sum(per_tenant) / len(per_tenant):.0f} ms, "
        f"max {1000 * max(per_tenant):.0f} ms.",
        "",
        "## Core schemas (life tenant)",
        "",
    ]
    return _finish(lines, nights)


def _finish(lines: list[str], nights: list[Row]) -> Path:
    out = RESULTS / "nightly.md"
    for row in nights:
        for core in [*row.report.core_created]:
            lines.append(f"- {row.tenant}: created `{core}`")
        for core in row.report.core_extended:
            lines.append(f"- {row.tenant}: extended `{core}`")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def core_details(memory: TenantMemory) -> list[dict[str, Any]]:
    out = []
    for node in memory.graph.nodes(NodeKind.CONCEPT):
        if node.core:
            members = [
                memory.graph.node(e.src)
                for e in memory.graph.in_edges(node.id)
                if e.kind.value == "PART_OF"
            ]
            out.append(
                {
                    "title": node.title,
                    "members": [(m.title, m.attrs.get("domain")) for m in members],
                }
            )
    return out


def plot(rows: list[Row], nights: list[Row], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    every = [*rows, *nights]
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.bar([r.tenant for r in every], [r.report.seconds * 1000 for r in every], color="#4a7ab5")
    ax.set_ylabel("nightly run (ms)")
    ax.set_title("Nightly engine run time per tenant (CogEval)")
    for i, r in enumerate(every):
        ax.annotate(
            f"{r.report.fresh_facts} facts",
            (i, r.report.seconds * 1000),
            ha="center",
            va="bottom",
            fontsize=7,
        )
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", choices=["minilm", "hashing"], default="minilm")
    parser.add_argument("--data", type=Path, default=COGEVAL_DIR)
    parser.add_argument("--budget", type=float, default=60.0, help="seconds per tenant and night")
    args = parser.parse_args()
    inner: Embedder = MiniLmOnnxEmbedder() if args.embedder == "minilm" else HashingEmbedder(256)
    rows, nights = asyncio.run(run(CachingEmbedder(inner), args.data, args.budget))
    command = f"python -m benchmarks.bench_nightly --embedder {args.embedder}"
    out = write(rows, nights, inner.model_id, command)
    plot(rows, nights, RESULTS / "nightly.png")
    for row in [*rows, *nights]:
        print(json.dumps(row.report.summary()))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
