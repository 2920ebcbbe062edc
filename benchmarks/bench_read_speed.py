"""Read-path latency (p50/p99) and memory per node at 1k, 10k and 100k nodes (synthetic).

    .venv/bin/python -m benchmarks.bench_read_speed [--sizes 1000,10000,100000] [--queries 200]

Graphs are synthetic and bulk-loaded (no fold): EVENT nodes with topic texts (benchmarks.
synthetic vocabulary), a participant from a pool of names and sometimes another name in the
text, one CONCEPT per 10 events grounded by them, RELATED_TO links between concepts of a
topic, and a FACT supersedes chain per 50 events. Node vectors are random unit vectors of
MiniLM's dimension (384); queries are embedded with HashingEmbedder(384), so the numbers
exclude MiniLM's query embedding (measured separately, one line in the table). A third of the
queries name a person, a third a period ("last week", "in March 2026"): every step of the
read path runs. Latency is given as wall time and as this process's CPU time (which other jobs
on a shared machine do not inflate). Memory per node is the RSS growth of building memory +
read indexes, divided by nodes. Writes benchmarks/results/read_speed.md and read_speed.png.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from benchmarks.common import RESULTS, machine, quiet_logs, stamp
from benchmarks.synthetic import SYLLABLES
from schemas.graph import Edge, EdgeKind, Node, NodeKind
from schemas.query import QueryRequest
from topologies.embedding import HashingEmbedder
from topologies.memory import TenantMemory
from topologies.read import Reader
from topologies.vector_index import use_single_thread

DIM = 384


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    import resource

    return pages * resource.getpagesize() / 2**20


def build(size: int, seed: int = 7) -> tuple[TenantMemory, list[str]]:
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    topics = [
        [("".join(rng.choice(SYLLABLES) for _ in range(3))) for _ in range(8)]
        for _ in range(max(20, size // 200))
    ]
    t0 = datetime(2026, 1, 5, tzinfo=UTC)
    nodes: list[Node] = []
    edges: list[Edge] = []
    n_events = int(size * 0.88)
    topic_of: list[int] = []
    people = [_name(rng) for _ in range(max(50, size // 300))]
    for i in range(n_events):
        topic = rng.randrange(len(topics))
        topic_of.append(topic)
        words = rng.sample(topics[topic], 4) + rng.sample(list(SYLLABLES), 2)
        if rng.random() < 0.3:
            words.append(f"with {rng.choice(people)}")
        ts = t0 + timedelta(minutes=7 * i)
        nodes.append(
            Node(
                id=f"ev{i}",
                kind=NodeKind.EVENT,
                tenant="bench",
                title=words[0],
                text=" ".join(words),
                ts=ts,
                created_at=ts,
                updated_at=ts,
                source=rng.choice(("chat", "email", "note")),
                source_event_id=f"e{i}",
                participants=[rng.choice(people)],
            )
        )
    n_concepts = n_events // 10
    for c in range(n_concepts):
        members = range(c * 10, c * 10 + 10)
        topic = topic_of[c * 10]
        ts = t0 + timedelta(minutes=7 * c * 10)
        nodes.append(
            Node(
                id=f"c{c}",
                kind=NodeKind.CONCEPT,
                tenant="bench",
                title=" ".join(topics[topic][:3]),
                ts=ts,
                created_at=ts,
                updated_at=ts,
            )
        )
        edges.extend(
            Edge(src=f"ev{m}", dst=f"c{c}", kind=EdgeKind.GROUNDS, w0=1.0, t_last=ts, created_at=ts)
            for m in members
        )
        if c:
            edges.append(
                Edge(
                    src=f"c{c}",
                    dst=f"c{rng.randrange(c)}",
                    kind=EdgeKind.RELATED_TO,
                    w0=0.4,
                    t_last=ts,
                    created_at=ts,
                )
            )
    n_facts = size - len(nodes)
    for f in range(n_facts):
        ts = t0 + timedelta(minutes=7 * f * 8)
        prev = f"f{f - 1}" if f % 5 else None
        nodes.append(
            Node(
                id=f"f{f}",
                kind=NodeKind.FACT,
                tenant="bench",
                text=f"fact {' '.join(rng.sample(list(SYLLABLES), 3))}",
                ts=ts,
                created_at=ts,
                updated_at=ts,
                supersedes=prev,
                valid_from=ts,
            )
        )
        if prev:
            edges.append(
                Edge(
                    src=f"f{f}",
                    dst=prev,
                    kind=EdgeKind.SUPERSEDES,
                    w0=1.0,
                    t_last=ts,
                    created_at=ts,
                )
            )
    vectors = nprng.standard_normal((len(nodes), DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)  # stored vectors are unit length
    memory = TenantMemory("bench", DIM)
    memory.load(
        nodes,
        edges,
        {},
        [(n.kind.value, n.id, vectors[i]) for i, n in enumerate(nodes)],
        {"clock": (t0 + timedelta(minutes=7 * n_events)).isoformat()},
        {},
    )
    for index in memory.indexes.values():
        index.fit_layout()  # a stored tenant of this size loads with its IVF layout
    end = t0 + timedelta(minutes=7 * n_events)
    queries = []
    for i in range(500):
        words = " ".join(rng.sample(topics[rng.randrange(len(topics))], 3))
        if i % 3 == 1:
            words = f"what did {rng.choice(people)} say about {words}"
        elif i % 3 == 2:
            month = (end - timedelta(days=rng.randrange(20, 300))).strftime("%B %Y")
            words = f"{words} {rng.choice(('last week', 'yesterday', f'in {month}'))}"
        queries.append(words)
    return memory, queries


def _name(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(2)).capitalize()


def measure(size: int, n_queries: int) -> dict[str, float]:
    gc.collect()
    before = _rss_mb()
    memory, queries = build(size)
    reader = Reader(HashingEmbedder(DIM))
    started = time.perf_counter()
    reader.build(memory)
    index_s = time.perf_counter() - started
    gc.collect()
    per_node_kb = (_rss_mb() - before) * 1024 / size
    row: dict[str, float] = {
        "nodes": float(len(memory.graph)),
        "edges": float(memory.graph.edge_count()),
        "kb_per_node": per_node_kb,
        "index_s": index_s,
    }
    for name, kwargs in (("full", {}), ("hybrid", {"expand": False, "surface": False})):
        for text in queries[:10]:  # warm: the first query builds the read indexes
            reader.query(memory, QueryRequest(text=text, k=10, **kwargs))  # type: ignore[arg-type]
        took: list[float] = []
        cpu: list[float] = []
        for text in queries[:n_queries]:
            t, c = time.perf_counter(), time.process_time()
            reader.query(memory, QueryRequest(text=text, k=10, **kwargs))  # type: ignore[arg-type]
            cpu.append(1000 * (time.process_time() - c))
            took.append(1000 * (time.perf_counter() - t))
        row[f"{name}_p50"] = float(np.percentile(took, 50))
        row[f"{name}_p99"] = float(np.percentile(took, 99))
        row[f"{name}_cpu50"] = float(np.percentile(cpu, 50))
        row[f"{name}_cpu99"] = float(np.percentile(cpu, 99))
    del memory, reader
    return row


def minilm_query_ms() -> float | None:
    try:
        from topologies.embedding import MiniLmOnnxEmbedder

        emb = MiniLmOnnxEmbedder()
        emb.embed(["warm up"])
        t = time.perf_counter()
        for _ in range(20):
            emb.embed(["when did Caroline go to the support group?"])
        return 1000 * (time.perf_counter() - t) / 20
    except Exception:  # the packages may be absent; the table says so
        return None


def write(
    rows: list[dict[str, float]],
    args: argparse.Namespace,
    minilm: float | None,
    loads: list[float],
) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    lines = [
        "# Read-path latency and memory vs graph size (synthetic)",
        "",
        f"- date: {stamp()}",
        f"- machine: {machine()}",
        f"- command: `.venv/bin/python -m benchmarks.bench_read_speed --sizes "
        f"{args.sizes} --queries {args.queries}`",
        "- random 384-d node vectors, queries embedded with HashingEmbedder(384); "
        "latency excludes MiniLM query embedding"
        + (f" (MiniLM adds {minilm:.1f} ms per query here)" if minilm else ""),
        f"- load average (1 min) while measuring: {', '.join(f'{x:.1f}' for x in loads)} "
        "(at the start, then after each size); one FAISS thread, as the runtime",
        "",
        "| nodes | edges | full p50 ms | full p99 ms | full CPU p50 ms | full CPU p99 ms | "
        "no-expansion p50 ms | no-expansion p99 ms | no-expansion CPU p50 / p99 ms | "
        "KB per node | index build s |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['nodes']:,.0f} | {r['edges']:,.0f} | {r['full_p50']:.1f} | "
            f"{r['full_p99']:.1f} | {r['full_cpu50']:.1f} | {r['full_cpu99']:.1f} | "
            f"{r['hybrid_p50']:.1f} | {r['hybrid_p99']:.1f} | "
            f"{r['hybrid_cpu50']:.1f} / {r['hybrid_cpu99']:.1f} | "
            f"{r['kb_per_node']:.1f} | {r['index_s']:.2f} |"
        )
    path = RESULTS / "read_speed.md"
    path.write_text("\n".join(lines) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    xs = [r["nodes"] for r in rows]
    for key, label in (
        ("full_p50", "full p50 (wall)"),
        ("full_p99", "full p99 (wall)"),
        ("full_cpu50", "full p50 (CPU)"),
        ("full_cpu99", "full p99 (CPU)"),
        ("hybrid_p50", "no expansion p50 (wall)"),
    ):
        ax.plot(xs, [r[key] for r in rows], marker="o", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("nodes")
    ax.set_ylabel("query latency (ms)")
    ax.legend()
    ax.set_title("Read-path latency vs graph size")
    fig.tight_layout()
    fig.savefig(RESULTS / "read_speed.png", dpi=120)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    quiet_logs()
    use_single_thread()  # as stream_app.factory does for the runtime
    loads = [os.getloadavg()[0]]
    rows = []
    for size in args.sizes.split(","):
        rows.append(measure(int(size), args.queries))
        loads.append(os.getloadavg()[0])
    path = write(rows, args, minilm_query_ms(), loads)
    print(path.read_text())


if __name__ == "__main__":
    main()
