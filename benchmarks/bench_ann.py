"""Exact scan vs. the inverted file of topologies.vector_index: search latency and recall.

    .venv/bin/python -m benchmarks.bench_ann [--sizes 10000,30000,100000,200000] [--queries 300]

Fills one VectorIndex per size with the synthetic stream's event texts (hashing embedder, as
bench_fold), one upsert at a time as a fold would (so the layout is trained and retrained where
it would be in production), and times single-query searches against an exact flat twin of the
same vectors. Recall@10 is the overlap of the two top-10s, top-1 the share of equal first
hits. The retrain column is the longest single upsert (the one that trained a layout).
Writes benchmarks/results/ann.md and ann.png.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.common import EMBED_CACHE, RESULTS, machine, quiet_logs, stamp
from benchmarks.synthetic import SyntheticStream
from topologies.config import AnnConfig
from topologies.embedding import HashingEmbedder, MiniLmOnnxEmbedder
from topologies.vector_index import VectorIndex, use_single_thread


def cached_minilm() -> np.ndarray | None:
    """MiniLM vectors of real text: the LoCoMo turns and questions that bench_locomo embedded
    (its cache outside the repository), or None if that benchmark has not run here."""
    path = EMBED_CACHE / f"{MiniLmOnnxEmbedder().model_id}.npz"  # lazy: loads no model
    if not path.exists():
        return None
    with np.load(path, allow_pickle=False) as data:
        matrix = np.asarray(data["vectors"], dtype=np.float32)
    return matrix[np.random.default_rng(3).permutation(len(matrix))]


def vectors(count: int) -> np.ndarray:
    embedder = HashingEmbedder(dim=256)
    stream = SyntheticStream(seed=7, topics=max(50, count // 500))
    texts = [f"{e.title}\n{e.body}" for e in stream.events(count)]
    return embedder.embed(texts)


def timed_searches(index: VectorIndex, queries: np.ndarray) -> tuple[list[list[str]], float]:
    found: list[list[str]] = []
    started = time.perf_counter()
    for query in queries:
        found.append([name for name, _ in index.search(query, 10)])
    return found, (time.perf_counter() - started) / len(queries) * 1000.0


def measure(
    size: int, queries: int, ann: AnnConfig, matrix: np.ndarray | None = None
) -> dict[str, float]:
    matrix = vectors(size + queries) if matrix is None else matrix[: size + queries]
    data, probes = matrix[:size], matrix[size:]
    dim = matrix.shape[1]
    index = VectorIndex(dim, ann)
    exact = VectorIndex(dim, AnnConfig(min_vectors=10**12))
    slowest = 0.0
    for row, vec in enumerate(data):
        started = time.perf_counter()
        index.upsert(f"n{row}", vec)
        slowest = max(slowest, time.perf_counter() - started)
        exact.upsert(f"n{row}", vec)
    approx_hits, approx_ms = timed_searches(index, probes)
    exact_hits, exact_ms = timed_searches(exact, probes)
    pairs = list(zip(approx_hits, exact_hits, strict=True))
    recall = np.mean([len(set(a) & set(e)) / 10 for a, e in pairs])
    top1 = np.mean([a[:1] == e[:1] for a, e in pairs])
    return {
        "dim": float(dim),
        "size": float(size),
        "lists": float(index.lists),
        "exact_ms": exact_ms,
        "ivf_ms": approx_ms,
        "recall10": float(recall),
        "top1": float(top1),
        "retrain_ms": slowest * 1000.0,
    }


def write(rows: list[dict[str, float]], command: str, ann: AnnConfig) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    lines = [
        "# Vector index: exact scan vs. inverted file",
        "",
        f"- {stamp()}; {machine()}; one FAISS thread",
        f"- command: `{command}`; nprobe {ann.nprobe}, exact below {ann.min_vectors:,} vectors",
        "",
        "Hashing rows: the synthetic stream's event texts (as bench_fold). MiniLM row: real "
        "conversation text (LoCoMo turns and questions embedded by bench_locomo), the queries "
        "held out, the exact range lowered to its size so that it is searched as a 10k index "
        "would be (128 lists, nprobe 16).",
        "",
        "| vectors | embedder | IVF lists | exact ms/search | IVF ms/search | recall@10 | top-1 | "
        "slowest upsert ms (retrain) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        embedder = (
            f"MiniLM, dim {int(r['dim'])}" if r["dim"] == 384 else f"hashing, dim {int(r['dim'])}"
        )
        lines.append(
            f"| {int(r['size']):,} | {embedder} | {int(r['lists'])} | {r['exact_ms']:.2f} | "
            f"{r['ivf_ms']:.3f} | {r['recall10']:.3f} | {r['top1']:.3f} | "
            f"{r['retrain_ms']:.0f} |"
        )
    (RESULTS / "ann.md").write_text("\n".join(lines) + "\n")
    plot(rows)


def plot(rows: list[dict[str, float]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r["size"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(sizes, [r["exact_ms"] for r in rows], marker="o", label="exact scan")
    ax.plot(sizes, [r["ivf_ms"] for r in rows], marker="o", label="inverted file")
    ax.set_xscale("log")
    ax.set_xlabel("vectors in the index")
    ax.set_ylabel("ms per single-query search")
    ax.set_title("kNN search cost (one FAISS thread)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "ann.png", dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="10000,30000,100000,200000")
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    quiet_logs()
    use_single_thread()
    ann = AnnConfig()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        rows.append(measure(size, args.queries, ann))
        print(rows[-1], flush=True)
    minilm = cached_minilm()
    if minilm is not None:  # fewer than min_vectors texts: the row lowers it to use the IVF
        size = len(minilm) - args.queries
        lowered = ann.model_copy(update={"min_vectors": min(ann.min_vectors, size)})
        rows.append(measure(size, args.queries, lowered, minilm))
        print(rows[-1], flush=True)
    command = f"python -m benchmarks.bench_ann --sizes {args.sizes} --queries {args.queries}"
    write(rows, command, ann)


if __name__ == "__main__":
    main()
