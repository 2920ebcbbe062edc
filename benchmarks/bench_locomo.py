"""Evidence recall of the read path on LoCoMo-10 (no LLM judge), measured as a client gets it.

    .venv/bin/python -m benchmarks.bench_locomo [--data-dir ../shared/data] [--embedder minilm]

Each conversation is one tenant; its turns are folded in order as chat events (session
date-time + one minute per turn as event time) through FoldEngine with the heuristic planner.
Each question of categories 1-4 is a query.

Two measures, in the same run:

- **items@k** (what a client gets): the query asks for exactly k items of every kind (EVENT,
  FACT, CONCEPT, INTENT), as an agent with a budget of k memories would; the cited events are
  each item's ``event_ids`` in item order, and the first k distinct ones count. An item that
  cites nothing new (a fact citing the turn an event item already cites) wastes a slot; a
  concept citing twenty turns cannot buy recall beyond the k-turn budget. ``fresh@k`` is the
  mean number of the k items that cite an event no earlier item cited (k when every item
  brings its own evidence).
- **turns@k** (the earlier measure): 20 EVENT items, the first k distinct cited turns.

Baselines over the raw turns (the turns ingested as EVENT nodes only, no graph): BM25, dense
(the same embedder) and plain reciprocal rank fusion of the two (weights 1:1, k = 60). For a
list of turns, items@k and turns@k are the same number.

``--no-fold`` ingests only (EVENT nodes). ``--half a|b`` keeps the first / second five
conversations (tune on one half, report on the other). Writes benchmarks/results/<name>.md and
<name>.png (default name: locomo). Folded memories are cached under ~/.cache/foldmem-bench,
keyed by the source of the write path, so a read-path change does not re-fold.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import pickle
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.common import (
    DEFAULT_DATA_DIR,
    EMBED_CACHE,
    RESULTS,
    ROOT,
    CachingEmbedder,
    machine,
    quiet_logs,
    stamp,
)
from schemas.events import RawEvent
from schemas.graph import Edge, Node, NodeKind
from schemas.query import QueryRequest, QueryResponse
from topologies.config import EngineConfig
from topologies.embedding import Embedder, HashingEmbedder, MiniLmOnnxEmbedder
from topologies.engine import FoldEngine
from topologies.heuristic_planner import HeuristicPlanner
from topologies.memory import TenantMemory
from topologies.read import ReadConfig, Reader

KS = (5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
HALVES = {"a": slice(0, 5), "b": slice(5, 10)}
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


def load(data_dir: Path, limit: int | None = None, half: str | None = None) -> list[Conversation]:
    raw = json.loads((data_dir / "locomo" / "locomo10.json").read_text())
    chosen = raw[HALVES[half]] if half else raw[:limit]
    conversations = []
    for item in chosen:
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


# ------------------------------------------------------------------------ building
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


def _write_path_digest() -> str:
    """Hash of the code that shapes a folded memory (everything but the read path)."""
    digest = hashlib.sha256()
    for folder in ("topologies", "schemas"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "read" in path.relative_to(ROOT / folder).parts[:1]:
                continue
            digest.update(str(path.relative_to(ROOT)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _snapshot(memory: TenantMemory) -> dict[str, Any]:
    graph = memory.graph
    return {
        "nodes": [n.model_dump_json() for n in graph.nodes()],
        "edges": [e.model_dump_json() for e in graph.edges()],
        "aliases": dict(graph.aliases),
        "vectors": [
            (name, node_id, index.get(node_id))
            for name, index in memory.indexes.items()
            for node_id in index.ids()
        ],
        "meta": dict(memory.meta),
        "events": dict(memory.event_states),
    }


def _restore(tenant: str, dim: int, snap: dict[str, Any]) -> TenantMemory:
    memory = TenantMemory(tenant, dim)
    memory.load(
        [Node.model_validate_json(n) for n in snap["nodes"]],
        [Edge.model_validate_json(e) for e in snap["edges"]],
        snap["aliases"],
        [(name, nid, vec) for name, nid, vec in snap["vectors"] if vec is not None],
        snap["meta"],
        snap["events"],
    )
    return memory


def build_cached(
    conversations: list[Conversation], embedder: CachingEmbedder, fold: bool
) -> tuple[dict[str, TenantMemory], float]:
    """Folded memories, from the cache when the write path and the data are unchanged."""
    key = hashlib.sha256(
        json.dumps(
            [_write_path_digest(), embedder.model_id, fold]
            + [[c.tenant, len(c.events)] for c in conversations]
        ).encode()
    ).hexdigest()[:16]
    path = EMBED_CACHE / f"locomo-memories-{key}.pkl"
    started = time.perf_counter()
    if path.exists():
        snaps = pickle.loads(path.read_bytes())
        return {t: _restore(t, embedder.dim, s) for t, s in snaps.items()}, 0.0
    memories = asyncio.run(build(conversations, embedder, fold=fold))
    built = time.perf_counter() - started
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".tmp")
    partial.write_bytes(pickle.dumps({t: _snapshot(m) for t, m in memories.items()}))
    partial.replace(path)
    return memories, built


# ------------------------------------------------------------------------ measuring
EVENTS = [NodeKind.EVENT]


def fresh(items: Sequence[Any]) -> int:
    """How many items cite at least one event that no earlier item cited."""
    seen: set[str] = set()
    count = 0
    for item in items:
        new = set(item.event_ids) - seen
        count += bool(new)
        seen |= new
    return count


def cited(items: Sequence[Any], budget: int) -> list[tuple[int, int]]:
    """The first ``budget`` distinct turns cited by ``items`` (event_ids, in item order)."""
    out: list[tuple[int, int]] = []
    for item in items:
        for event_id in item.event_ids:
            for dia in parse_dia(event_id):
                if dia not in out:
                    out.append(dia)
    return out[:budget]


@dataclass
class Config:
    """One line of the table: how to ask, and whether each k is its own query of k items."""

    name: str
    make: Callable[[str, int], QueryRequest]
    per_k: bool  # True: exactly k items per k (items@k); False: one query, first k turns
    raw: bool = False  # run on the raw-turn memories (baselines)
    reader: str = "read"


def client(text: str, k: int) -> QueryRequest:
    return QueryRequest(text=text, k=k)


def events_20(text: str, k: int) -> QueryRequest:
    return QueryRequest(text=text, k=max(KS), kinds=EVENTS)


def raw_mode(mode: str) -> Callable[[str, int], QueryRequest]:
    def make(text: str, k: int) -> QueryRequest:
        return QueryRequest(text=text, k=max(KS), mode=mode, expand=False, surface=False)  # type: ignore[arg-type]

    return make


CONFIGS = [
    Config("foldmem, k items (items@k)", client, per_k=True),
    Config("foldmem, 20 EVENT items (turns@k)", events_20, per_k=False),
    Config("BM25, raw turns", raw_mode("bm25"), per_k=False, raw=True, reader="raw"),
    Config("dense, raw turns", raw_mode("dense"), per_k=False, raw=True, reader="raw"),
    Config("RRF 1:1, raw turns", raw_mode("hybrid"), per_k=False, raw=True, reader="raw"),
]


def evaluate(
    conversations: list[Conversation],
    memories: dict[str, TenantMemory],
    reader: Reader,
    make: Callable[[str, int], QueryRequest],
    per_k: bool,
    ks: Sequence[int] = KS,
) -> dict[str, Any]:
    """Mean recall@k per category and overall, distinct citations, latency."""
    per: dict[int, dict[int, list[float]]] = {c: {k: [] for k in ks} for c in CATEGORIES}
    fresh_items: dict[int, list[int]] = {k: [] for k in ks}
    took: list[float] = []

    def score(q: Question, response: QueryResponse, k: int) -> None:
        items = response.items[:k] if per_k else response.items
        got = cited(items, k)
        fresh_items[k].append(fresh(items[:k]))
        per[q.category][k].append(len(q.evidence & set(got)) / len(q.evidence))

    for conv in conversations:
        memory = memories[conv.tenant]
        for q in conv.questions:
            if per_k:
                for k in ks:
                    started = time.perf_counter()
                    response = reader.query(memory, make(q.text, k))
                    if k == ks[len(ks) // 2]:
                        took.append(time.perf_counter() - started)
                    score(q, response, k)
            else:
                started = time.perf_counter()
                response = reader.query(memory, make(q.text, max(ks)))
                took.append(time.perf_counter() - started)
                for k in ks:
                    score(q, response, k)
    result: dict[str, Any] = {"n": sum(len(v[ks[0]]) for v in per.values())}
    for k in ks:
        every = [x for c in CATEGORIES for x in per[c][k]]
        result[f"all@{k}"] = sum(every) / max(1, len(every))
        result[f"fresh@{k}"] = sum(fresh_items[k]) / max(1, len(fresh_items[k]))
        for c in CATEGORIES:
            vals = per[c][k]
            result[f"{c}@{k}"] = sum(vals) / max(1, len(vals))
    took.sort()
    result["p50_ms"] = 1000 * took[len(took) // 2] if took else 0.0
    return result


def rrf_config() -> ReadConfig:
    """Plain reciprocal rank fusion (1:1, k = 60) for the raw-turn baselines: no feedback,
    no names, no periods, no MMR."""
    return ReadConfig(
        bm25_weight=1.0,
        dense_weight=1.0,
        feedback_weight=0.0,
        time_weight=0.0,
        time_boost=0.0,
        entity_boost=0.0,
        entity_hop_weight=0.0,
        entity_max_postings=1 << 30,  # no name is common: the query text stays whole
        mmr_weight=0.0,
    )


# ------------------------------------------------------------------------ report
def command(args: argparse.Namespace) -> str:
    parts = [".venv/bin/python -m benchmarks.bench_locomo", f"--embedder {args.embedder}"]
    if args.no_fold:
        parts.append("--no-fold")
    if args.limit:
        parts.append(f"--limit {args.limit}")
    if args.half:
        parts.append(f"--half {args.half}")
    if args.name != "locomo":
        parts.append(f"--name {args.name}")
    return " ".join(parts)


def table(results: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| configuration | R@5 | R@10 | R@20 | "
        + " | ".join(f"{CATEGORIES[c]} R@10" for c in CATEGORIES)
        + " | fresh@10 | p50 ms |",
        "|---|---|---|---|" + "---|" * len(CATEGORIES) + "---|---|",
    ]
    for name, r in results.items():
        cats = " | ".join(f"{r[f'{c}@10']:.3f}" for c in CATEGORIES)
        lines.append(
            f"| {name} | {r['all@5']:.3f} | {r['all@10']:.3f} | {r['all@20']:.3f} | "
            f"{cats} | {r['fresh@10']:.2f} | {r['p50_ms']:.1f} |"
        )
    return lines


def write(results: dict[str, dict[str, Any]], args: argparse.Namespace, info: str) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    lines = [
        "# LoCoMo-10 evidence recall (categories 1-4)",
        "",
        f"- date: {stamp()}",
        f"- machine: {machine()}",
        f"- command: `{command(args)}`",
        f"- {info}",
        "",
        *table(results),
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
    lines += [
        "",
        "fresh@k: of the first k items, how many cite an event that no earlier item cited:",
        "",
        "| configuration | fresh@5 | fresh@10 | fresh@20 |",
        "|---|---|---|---|",
    ]
    for name, r in results.items():
        lines.append(f"| {name} | {r['fresh@5']:.2f} | {r['fresh@10']:.2f} | {r['fresh@20']:.2f} |")
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


@dataclass
class Setup:
    conversations: list[Conversation]
    embedder: CachingEmbedder
    memories: dict[str, TenantMemory]
    raw: dict[str, TenantMemory]
    built: float


def prepare(args: argparse.Namespace) -> Setup:
    """Load the data, warm the embedding cache, fold (or restore) the memories."""
    if not (args.data_dir / "locomo" / "locomo10.json").exists():
        raise SystemExit(f"LoCoMo not found under {args.data_dir}/locomo (use --data-dir)")
    conversations = load(args.data_dir, args.limit, args.half)
    embedder = make_embedder(args.embedder)
    embedder.warm([e.text for c in conversations for e in c.events])
    embedder.warm([q.text for c in conversations for q in c.questions])
    embedder.save()
    memories, built = build_cached(conversations, embedder, fold=not args.no_fold)
    raw = memories if args.no_fold else build_cached(conversations, embedder, fold=False)[0]
    return Setup(conversations, embedder, memories, raw, built)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    parser.add_argument("--limit", type=int, default=None, help="first N conversations")
    parser.add_argument("--half", choices=tuple(HALVES), default=None, help="5 conversations")
    parser.add_argument("--no-fold", action="store_true", help="ingest only (EVENT nodes)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    parser.add_argument("--name", default="locomo", help="results file name")
    args = parser.parse_args(argv)
    quiet_logs()
    setup = prepare(args)
    readers = {
        "read": Reader(setup.embedder, EngineConfig()),
        "raw": Reader(setup.embedder, EngineConfig(read=rrf_config())),
    }
    results = {}
    for config in CONFIGS:
        reader = readers[config.reader]
        memories = setup.raw if config.raw else setup.memories
        results[config.name] = evaluate(
            setup.conversations, memories, reader, config.make, config.per_k
        )
        print(config.name, f"R@10 {results[config.name]['all@10']:.3f}", flush=True)
    nodes = sum(len(m.graph) for m in setup.memories.values())
    edges = sum(m.graph.edge_count() for m in setup.memories.values())
    kinds = {
        kind.value: sum(m.graph.count(kind) for m in setup.memories.values()) for kind in NodeKind
    }
    tenants = ", ".join(c.tenant for c in setup.conversations)
    info = (
        f"{len(setup.conversations)} conversations ({tenants}), "
        f"{sum(len(c.events) for c in setup.conversations)} turns, "
        f"{results[CONFIGS[0].name]['n']} questions; graph {nodes} nodes "
        f"({', '.join(f'{k} {v}' for k, v in kinds.items() if v)}), {edges} edges"
        f"{f' (folded in {setup.built:.0f} s)' if setup.built else ' (restored from cache)'}; "
        f"embedder {setup.embedder.model_id}"
    )
    path = write(results, args, info)
    print(path.read_text())


if __name__ == "__main__":
    main()
