"""Fold latency and throughput of the heuristic planner as the graph grows.

    .venv/bin/python -m benchmarks.bench_fold [--max-nodes 100000] [--embedder hashing|minilm]

Folds a seeded synthetic stream into one tenant and times every fold (ingest + plan + apply +
consolidate + emerge). For each checkpoint (1k, 10k, 30k, 100k nodes) it reports p50/p99
latency (wall clock and this process's CPU time, which other jobs on the machine do not
inflate), throughput over the `--window` events folded right after the graph reached that
size, and the slowest fold since the previous checkpoint (a vector index trains its IVF layout
in one fold). `--profile-dir` also profiles one more window per checkpoint (cProfile files).
Writes benchmarks/results/fold_<embedder>.md and .png.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import logging
import platform
import resource
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import structlog

from benchmarks.synthetic import SyntheticStream
from topologies.config import EngineConfig
from topologies.embedding import Embedder, HashingEmbedder, MiniLmOnnxEmbedder
from topologies.engine import FoldEngine
from topologies.heuristic_planner import HeuristicPlanner
from topologies.vector_index import use_single_thread

RESULTS = Path(__file__).parent / "results"


def build_embedder(name: str, threads: int = 2) -> Embedder:
    """``threads``: MiniLM's intra-op threads (the runtime's FOLDMEM_MINILM_THREADS)."""
    return MiniLmOnnxEmbedder(threads=threads) if name == "minilm" else HashingEmbedder(dim=256)


async def run(
    max_nodes: int, window: int, embedder_name: str, profile_dir: Path | None = None
) -> list[dict[str, float]]:
    use_single_thread()  # as the runtime does (stream_app.factory.build_engine)
    embedder = build_embedder(embedder_name)
    config = EngineConfig()
    engine = FoldEngine(embedder, HeuristicPlanner(embedder, config), config)
    memory = engine.new_memory("bench")
    checkpoints = [c for c in (1_000, 10_000, 30_000, 100_000) if c <= max_nodes]
    rows: list[dict[str, float]] = []
    pending = list(checkpoints)
    measuring: tuple[int, list[float], list[float], float] | None = None
    profiling: tuple[int, cProfile.Profile, int] | None = None  # checkpoint, profile, folds left
    stream = SyntheticStream(seed=7, topics=max(50, max_nodes // 250))
    slowest = 0.0  # the longest fold, retrains of a vector index's layout included
    for event in stream.events(max_nodes * 2):
        if profiling is not None:  # an extra window after the timed one, not in the figures
            checkpoint, profile, left = profiling
            profile.enable()
            await engine.fold(memory, event)
            profile.disable()
            profiling = (checkpoint, profile, left - 1) if left > 1 else None
            if profiling is None:
                assert profile_dir is not None
                profile.dump_stats(profile_dir / f"fold_{checkpoint}.pstats")
                if not pending:
                    break
            continue
        started, cpu_started = time.perf_counter(), time.process_time()
        await engine.fold(memory, event)
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
        size = len(memory.graph)
        slowest = max(slowest, elapsed)
        if measuring is None and pending and size >= pending[0]:
            measuring = (pending.pop(0), [], [], time.perf_counter())
            continue
        if measuring is not None:
            checkpoint, samples, cpu_samples, began = measuring
            samples.append(elapsed)
            cpu_samples.append(cpu)
            if len(samples) >= window:
                wall = time.perf_counter() - began
                rows.append(
                    summarise(
                        checkpoint,
                        memory_nodes=size,
                        samples=samples,
                        cpu_samples=cpu_samples,
                        wall=wall,
                        edges=memory.graph.edge_count(),
                    )
                )
                rows[-1]["slowest_ms"] = slowest * 1000.0  # since the previous checkpoint
                slowest = 0.0
                print(rows[-1], flush=True)
                measuring = None
                if profile_dir is not None:
                    profiling = (checkpoint, cProfile.Profile(), window)
                elif not pending:
                    break
    return rows


def summarise(
    checkpoint: int,
    memory_nodes: int,
    samples: list[float],
    cpu_samples: list[float],
    wall: float,
    edges: int,
) -> dict[str, float]:
    arr = np.array(samples) * 1000.0
    cpu = np.array(cpu_samples) * 1000.0
    return {
        "cpu_p50_ms": float(np.percentile(cpu, 50)),  # this process's CPU time: what the fold
        "cpu_p99_ms": float(np.percentile(cpu, 99)),  # costs, whatever else the machine runs
        "checkpoint": float(checkpoint),
        "nodes": float(memory_nodes),
        "edges": float(edges),
        "p50_ms": float(np.percentile(arr, 50)),
        "p99_ms": float(np.percentile(arr, 99)),
        "mean_ms": float(arr.mean()),
        "events_per_s": len(samples) / wall,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
    }


def write(rows: list[dict[str, float]], embedder_name: str, window: int, command: str) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    lines = [
        f"# Heuristic fold latency vs graph size ({embedder_name} embedder)",
        "",
        f"- date: {datetime.now(UTC):%Y-%m-%d}; machine: {platform.machine()}, "
        f"{platform.processor() or 'cpu'}, Python {platform.python_version()}",
        f"- command: `{command}`; window: {window} events after each checkpoint",
        "",
        "| graph size | nodes | edges | p50 ms | p99 ms | CPU p50 ms | CPU p99 ms | mean ms | "
        "events/s | max RSS MB | slowest fold ms |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {int(r['checkpoint']):,} | {int(r['nodes']):,} | {int(r['edges']):,} | "
            f"{r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['cpu_p50_ms']:.2f} | "
            f"{r['cpu_p99_ms']:.2f} | {r['mean_ms']:.2f} | "
            f"{r['events_per_s']:.0f} | {r['rss_mb']:.0f} | {r['slowest_ms']:.0f} |"
        )
    (RESULTS / f"fold_{embedder_name}.md").write_text("\n".join(lines) + "\n")
    plot(rows, embedder_name)


def plot(rows: list[dict[str, float]], embedder_name: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r["checkpoint"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(sizes, [r["p50_ms"] for r in rows], marker="o", label="p50")
    ax.plot(sizes, [r["p99_ms"] for r in rows], marker="o", label="p99")
    ax.plot(sizes, [r["cpu_p50_ms"] for r in rows], marker="s", ls="--", label="CPU p50")
    ax.set_xscale("log")
    ax.set_xlabel("graph size (nodes)")
    ax.set_ylabel("fold latency (ms)")
    ax.set_title(f"Heuristic fold latency ({embedder_name})")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / f"fold_{embedder_name}.png", dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--max-nodes", type=int, default=100_000)
    parser.add_argument("--window", type=int, default=500)
    parser.add_argument("--embedder", choices=("hashing", "minilm"), default="hashing")
    parser.add_argument(
        "--profile-dir", type=Path, help="also profile one window after each checkpoint"
    )
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    rows = asyncio.run(run(args.max_nodes, args.window, args.embedder, args.profile_dir))
    command = (
        f"python -m benchmarks.bench_fold --max-nodes {args.max_nodes} "
        f"--window {args.window} --embedder {args.embedder}"
    )
    write(rows, args.embedder, args.window, command)


if __name__ == "__main__":
    main()
