"""Evidence recall of the read path on LoCoMo-10 (no LLM judge).

    .venv/bin/python -m benchmarks.bench_locomo [--data-dir ../shared/data] [--embedder minilm]

Each conversation is one tenant; its turns are folded in order as chat events (session
date-time + one minute per turn as event time) through FoldEngine with the heuristic planner.
Each question of categories 1-4 is a query for EVENT nodes (the labels are turns; the kinds
filter applies to the output, the expansion still walks concepts and facts). Recall@k is
the share of the question's labelled evidence turns among the first k distinct events cited
(event_ids, in result order): every configuration gets the same budget of k cited turns.
``--no-fold`` ingests only (EVENT nodes). Configurations, in the same run: full read path,
hybrid without graph expansion, BM25 alone, dense alone. Writes benchmarks/results/<name>.md
and <name>.png (default name: locomo).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.common import (
    DEFAULT_DATA_DIR,
    EMBED_CACHE,
    RESULTS,
    CachingEmbedder,
    machine,
    quiet_logs,
    stamp,
)
from schemas.events import RawEvent
from schemas.graph import NodeKind
from schemas.query import QueryRequest
from topologies.config import EngineConfig
from topologies.embedding import Embedder, HashingEmbedder, MiniLmOnnxEmbedder
from topologies.engine import FoldEngine
from topologies.heuristic_planner import HeuristicPlanner
from topologies.memory import TenantMemory
from topologies.read import ReadConfig, Reader

KS = (5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_DIA = re.compile(r"D(\d+):(\d+)")


@dataclass
class Question:
    tenant: str
    text: str
    category: int
    evidence: set[tuple[int, int]]


@dataclass
class Conversation:
    tenant: str
    events: list[RawEvent] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def parse_dia(value: str) -> list[tuple[int, int]]:
    """Normalise evidence ids (README quirks: 'D8:6; D9:17', 'D:11:26', 'D30:05')."""
    out = []
    for part in re.split(r"[;\s]+", value):
        match = _DIA.search(part.replace("D:", "D"))
        if match:
            out.append((int(match.group(1)), int(match.group(2))))
    return out


def load(data_dir: Path, limit: int | None = None) -> list[Conversation]:
    raw = json.loads((data_dir / "locomo" / "locomo10.json").read_text())
    conversations = []
    for item in raw[:limit]:
        conv = item["conversation"]
        tenant = item["sample_id"]
        out = Conversation(tenant)
        sessions = sorted(
            int(key.split("_")[1]) for key in conv if re.fullmatch(r"session_\d+", key)
        )
        for n in sessions:
            when = datetime.strptime(conv[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y")
            start = when.replace(tzinfo=UTC)
            for i, turn in enumerate(conv[f"session_{n}"]):
                text = turn["text"]
                if turn.get("blip_caption"):
                    text = f"{text} [shares {turn['blip_caption']}]"
                dia = parse_dia(turn["dia_id"])[0]
                out.events.append(
                    RawEvent(
                        id=f"D{dia[0]}:{dia[1]}",
                        tenant=tenant,
                        source="chat",
                        ts=start + timedelta(minutes=i),
                        title=turn["speaker"],
                        body=text,
                        participants=[turn["speaker"]],
                        attrs={"session": n},
                    )
                )
        for qa in item["qa"]:
            if qa["category"] not in CATEGORIES:
                continue
            evidence = {d for e in qa.get("evidence", []) for d in parse_dia(e)}
            if evidence:
                out.questions.append(Question(tenant, qa["question"], qa["category"], evidence))
        conversations.append(out)
    return conversations


async def build(
    conversations: list[Conversation], embedder: Embedder, fold: bool = True
) -> dict[str, TenantMemory]:
    config = EngineConfig()
    engine = FoldEngine(embedder, HeuristicPlanner(embedder, config), config)
    memories = {}
    for conv in conversations:
        memory = engine.new_memory(conv.tenant)
        for event in conv.events:
            if fold:
                await engine.fold(memory, event)
            else:
                engine.ingest(memory, event)
        memories[conv.tenant] = memory
    return memories


Variant = tuple[str, Callable[[str], QueryRequest]]

EVENTS = [NodeKind.EVENT]  # the labels are turns: every configuration asks for EVENT nodes;
# the kinds filter applies to the output only, so expansion still walks concepts and facts

VARIANTS: list[Variant] = [
    ("full read path", lambda t: QueryRequest(text=t, k=20, kinds=EVENTS)),
    (
        "hybrid, no expansion",
        lambda t: QueryRequest(text=t, k=20, kinds=EVENTS, expand=False, surface=False),
    ),
    (
        "BM25 alone",
        lambda t: QueryRequest(
            text=t, k=20, kinds=EVENTS, mode="bm25", expand=False, surface=False
        ),
    ),
    (
        "dense alone",
        lambda t: QueryRequest(
            text=t, k=20, kinds=EVENTS, mode="dense", expand=False, surface=False
        ),
    ),
]


def cited(response: Any, k: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for item in response.items:
        for event_id in item.event_ids:
            for dia in parse_dia(event_id):
                if dia not in out:
                    out.append(dia)
    return out[:k]


def evaluate(
    conversations: list[Conversation],
    memories: dict[str, TenantMemory],
    reader: Reader,
    make: Callable[[str], QueryRequest],
) -> dict[str, Any]:
    """Mean recall@k per category and overall, plus latency."""
    per: dict[int, dict[int, list[float]]] = {c: {k: [] for k in KS} for c in CATEGORIES}
    took: list[float] = []
    for conv in conversations:
        memory = memories[conv.tenant]
        for q in conv.questions:
            started = time.perf_counter()
            response = reader.query(memory, make(q.text))
            took.append(time.perf_counter() - started)
            got = cited(response, max(KS))
            for k in KS:
                hit = len(q.evidence & set(got[:k]))
                per[q.category][k].append(hit / len(q.evidence))
    result: dict[str, Any] = {"n": sum(len(v[KS[0]]) for v in per.values())}
    for k in KS:
        every = [x for c in CATEGORIES for x in per[c][k]]
        result[f"all@{k}"] = sum(every) / max(1, len(every))
        for c in CATEGORIES:
            vals = per[c][k]
            result[f"{c}@{k}"] = sum(vals) / max(1, len(vals))
    took.sort()
    result["p50_ms"] = 1000 * took[len(took) // 2] if took else 0.0
    return result


def write(results: dict[str, dict[str, Any]], args: argparse.Namespace, info: str) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    lines = [
        "# LoCoMo-10 evidence recall (categories 1-4)",
        "",
        f"- date: {stamp()}",
        f"- machine: {machine()}",
        f"- command: `.venv/bin/python -m benchmarks.bench_locomo --embedder {args.embedder}"
        f"{' --no-fold' if args.no_fold else ''}"
        f"{f' --limit {args.limit}' if args.limit else ''}"
        f"{f' --name {args.name}' if args.name != 'locomo' else ''}`",
        f"- {info}",
        "",
        "| configuration | R@5 | R@10 | R@20 | "
        + " | ".join(f"{CATEGORIES[c]} R@10" for c in CATEGORIES)
        + " | p50 ms |",
        "|---|---|---|---|" + "---|" * len(CATEGORIES) + "---|",
    ]
    for name, r in results.items():
        cats = " | ".join(f"{r[f'{c}@10']:.3f}" for c in CATEGORIES)
        lines.append(
            f"| {name} | {r['all@5']:.3f} | {r['all@10']:.3f} | {r['all@20']:.3f} | "
            f"{cats} | {r['p50_ms']:.1f} |"
        )
    lines += [
        "",
        "Per category, all k:",
        "",
        "| configuration | category | R@5 | R@10 | R@20 |",
        "|---|---|---|---|---|",
    ]
    for name, r in results.items():
        for c, label in CATEGORIES.items():
            lines.append(
                f"| {name} | {label} | {r[f'{c}@5']:.3f} | {r[f'{c}@10']:.3f} | "
                f"{r[f'{c}@20']:.3f} |"
            )
    path = RESULTS / f"{args.name}.md"
    path.write_text("\n".join(lines) + "\n")
    _plot(results, args.name)
    return path


def _plot(results: dict[str, dict[str, Any]], name: str = "locomo") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.8 / max(1, len(results))
    for i, (label, r) in enumerate(results.items()):
        xs = [j + i * width for j in range(len(KS))]
        ax.bar(xs, [r[f"all@{k}"] for k in KS], width, label=label)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(KS))])
    ax.set_xticklabels([f"recall@{k}" for k in KS])
    ax.set_ylim(0, 1)
    ax.set_title("LoCoMo-10 evidence recall, categories 1-4")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / f"{name}.png", dpi=120)
    plt.close(fig)


def make_embedder(name: str) -> CachingEmbedder:
    inner: Embedder = MiniLmOnnxEmbedder() if name == "minilm" else HashingEmbedder(dim=256)
    return CachingEmbedder(inner, EMBED_CACHE)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    parser.add_argument("--limit", type=int, default=None, help="first N conversations")
    parser.add_argument("--no-fold", action="store_true", help="ingest only (EVENT nodes)")
    parser.add_argument("--name", default="locomo", help="results file name")
    args = parser.parse_args(argv)
    quiet_logs()
    if not (args.data_dir / "locomo" / "locomo10.json").exists():
        raise SystemExit(f"LoCoMo not found under {args.data_dir}/locomo (use --data-dir)")
    conversations = load(args.data_dir, args.limit)
    embedder = make_embedder(args.embedder)
    embedder.warm([e.text for c in conversations for e in c.events])
    embedder.warm([q.text for c in conversations for q in c.questions])
    embedder.save()
    started = time.perf_counter()
    memories = asyncio.run(build(conversations, embedder, fold=not args.no_fold))
    built = time.perf_counter() - started
    nodes = sum(len(m.graph) for m in memories.values())
    edges = sum(m.graph.edge_count() for m in memories.values())
    reader = Reader(embedder, ReadConfig())
    results = {name: evaluate(conversations, memories, reader, make) for name, make in VARIANTS}
    info = (
        f"{len(conversations)} conversations, {sum(len(c.events) for c in conversations)} "
        f"turns, {results[VARIANTS[0][0]]['n']} questions; graph {nodes} nodes, {edges} "
        f"edges (built in {built:.0f} s); embedder {embedder.model_id}"
    )
    path = write(results, args, info)
    print(path.read_text())


if __name__ == "__main__":
    main()
