"""Belief revisions in plain wording: supersede precision, recall and chain completeness.

    .venv/bin/python -m benchmarks.bench_beliefs [--embedder minilm] [--locomo N] [--sample 30]

The set is ``tests/fixtures/beliefs/revisions.json`` (written before the reconcile rules were
tuned; ``split`` marks the dev half the rules may be tuned on and the held-out test half).
Per split, every chain is folded as events into ONE tenant, interleaved in time (a statement
every 20 days per chain, chains one hour apart), so a link across chains counts against
precision; every near-miss pair is folded into a tenant of its own. A statement from
``speaker`` X is a chat message with participant X (``attrs.from``); the owner's have none.

- precision: SUPERSEDES links between statements of the same chain, older one superseded, over
  all links written (near-miss links and links across chains are wrong);
- recall: consecutive statement pairs of a chain linked newer -> older, over all such pairs;
- completeness: chains whose read-path chain (``topologies.read.chains.chain_of``) of the last
  statement is exactly the chain's statements, oldest first;
- near-miss links: pairs where the second statement superseded the first.

``--locomo N`` also folds the first N LoCoMo-10 conversations (``bench_locomo.load``, one
tenant each, the fact step's work only: no planner) and counts the SUPERSEDES written;
``--sample K`` prints K of them (seeded) to stdout for reading. LoCoMo is CC BY-NC: its text
is printed, never written to the results file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.common import DEFAULT_DATA_DIR, RESULTS, machine, quiet_logs, stamp
from schemas.events import RawEvent
from schemas.graph import NodeKind
from schemas.plans import UpdatePlan
from topologies.config import EngineConfig
from topologies.embedding import Embedder
from topologies.engine import FoldEngine
from topologies.facts.step import FactStep
from topologies.memory import TenantMemory
from topologies.planner import PlanRequest
from topologies.read.chains import chain_of

FIXTURE = (
    Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "beliefs" / "revisions.json"
)
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
STEP = timedelta(days=20)

Key = tuple[str, int]  # (chain or pair id, statement index)


class NoPlanner:
    """The fact step does not depend on the plan: skip planning to keep the run short."""

    name = "none"

    async def plan(self, request: PlanRequest) -> UpdatePlan:
        return UpdatePlan(planner=self.name)


def load_set(path: Path = FIXTURE) -> dict[str, Any]:
    return dict(json.loads(path.read_text()))


def statement_event(
    tenant: str, key: Key, text: str, speaker: str | None, when: datetime
) -> RawEvent:
    extra: dict[str, Any] = {}
    if speaker:
        extra = {"participants": [speaker], "attrs": {"from": speaker}}
    return RawEvent(
        id=f"{key[0]}-{key[1]}",
        tenant=tenant,
        source="chat",
        ts=when,
        title=speaker or "chat",
        body=text,
        **extra,
    )


def chain_events(chains: list[dict[str, Any]], tenant: str) -> list[RawEvent]:
    events = []
    for i, chain in enumerate(chains):
        for j, text in enumerate(chain["statements"]):
            when = T0 + timedelta(hours=i) + STEP * j
            events.append(statement_event(tenant, (chain["id"], j), text, chain["speaker"], when))
    return sorted(events, key=lambda e: e.ts)


def pair_events(pair: dict[str, Any]) -> list[RawEvent]:
    tenant = f"pair-{pair['id']}"
    return [
        statement_event(
            tenant, (pair["id"], 0), pair["first"]["text"], pair["first"]["speaker"], T0
        ),
        statement_event(
            tenant, (pair["id"], 1), pair["second"]["text"], pair["second"]["speaker"], T0 + STEP
        ),
    ]


def key_of(event_id: str | None) -> Key | None:
    if not event_id or "-" not in event_id:
        return None
    name, _, index = event_id.rpartition("-")
    return (name, int(index)) if index.isdigit() else None


def links(memory: TenantMemory) -> list[tuple[Key, Key]]:
    """(newer, older) statement keys of every SUPERSEDES written between facts."""
    out = []
    for node in memory.graph.nodes(NodeKind.FACT):
        if not node.supersedes:
            continue
        old = memory.graph.get(node.supersedes)
        new_key, old_key = (
            key_of(node.source_event_id),
            key_of(old.source_event_id if old else None),
        )
        if new_key and old_key:
            out.append((new_key, old_key))
    return out


def facts_by_statement(memory: TenantMemory) -> dict[Key, list[str]]:
    out: dict[Key, list[str]] = {}
    for node in memory.graph.nodes(NodeKind.FACT):
        key = key_of(node.source_event_id)
        if key:
            out.setdefault(key, []).append(node.id)
    return out


def read_chain(memory: TenantMemory, node_id: str) -> list[Key]:
    keys: list[Key] = []
    for node in chain_of(memory.graph, node_id):
        key = key_of(node.source_event_id)
        if key and (not keys or keys[-1] != key):
            keys.append(key)
    return keys


@dataclass
class Score:
    links: int = 0
    correct: int = 0
    gold: int = 0
    found: int = 0
    chains: int = 0
    complete: int = 0
    pairs: int = 0
    pair_links: int = 0
    no_fact: int = 0
    statements: int = 0
    wrong: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)

    def row(self) -> dict[str, float]:
        return {
            "precision": self.correct / self.links if self.links else 1.0,
            "recall": self.found / self.gold if self.gold else 0.0,
            "completeness": self.complete / self.chains if self.chains else 0.0,
            "near_miss_links": self.pair_links / self.pairs if self.pairs else 0.0,
        }


async def fold_all(engine: FoldEngine, memory: TenantMemory, events: Iterable[RawEvent]) -> None:
    for event in events:
        await engine.fold(memory, event)


def make_engine(embedder: Embedder, facts: FactStep | None = None) -> FoldEngine:
    return FoldEngine(embedder, NoPlanner(), EngineConfig(), facts=facts)


async def score_split(
    data: dict[str, Any], split: str, embedder: Embedder, engine: FoldEngine | None = None
) -> Score:
    engine = engine or make_engine(embedder)
    score = Score()
    chains = [c for c in data["chains"] if c["split"] == split]
    texts = {(c["id"], j): t for c in chains for j, t in enumerate(c["statements"])}
    memory = engine.new_memory(f"chains-{split}")
    await fold_all(engine, memory, chain_events(chains, memory.tenant))
    by_statement = facts_by_statement(memory)
    written = links(memory)
    score.links += len(written)
    for new, old in written:
        if new[0] == old[0] and old[1] < new[1]:
            score.correct += 1
        else:
            score.wrong.append(f"{texts.get(new, new)!r} -> {texts.get(old, old)!r}")
    pairs_written = set(written)
    for chain in chains:
        n = len(chain["statements"])
        score.chains += 1
        score.statements += n
        score.gold += n - 1
        keys = [(chain["id"], j) for j in range(n)]
        score.no_fact += sum(1 for k in keys if k not in by_statement)
        for j in range(1, n):
            if (keys[j], keys[j - 1]) in pairs_written:
                score.found += 1
            else:
                score.missed.append(f"{texts[keys[j]]!r} -/-> {texts[keys[j - 1]]!r}")
        last = by_statement.get(keys[-1], [])
        if any(read_chain(memory, fid) == keys for fid in last):
            score.complete += 1
    for pair in (p for p in data["near_misses"] if p["split"] == split):
        memory = engine.new_memory(f"pair-{pair['id']}")
        await fold_all(engine, memory, pair_events(pair))
        written = links(memory)
        score.pairs += 1
        score.statements += 2
        score.no_fact += sum(
            1 for k in ((pair["id"], 0), (pair["id"], 1)) if k not in facts_by_statement(memory)
        )
        score.links += len(written)
        if written:
            score.pair_links += 1
            score.wrong.append(
                f"[{pair['kind']}] {pair['second']['text']!r} -> {pair['first']['text']!r}"
            )
    return score


# ------------------------------------------------------------------ LoCoMo


def _slots_line(node: Any) -> str:
    a = node.attrs
    return f"{a.get('holder', '?')} {a.get('attributes', '?')} cue={a.get('cue', '?')}"


async def locomo_supersedes(
    data_dir: Path, limit: int, embedder: Embedder
) -> tuple[int, int, int, list[tuple[str, str, str, str]]]:
    from benchmarks.bench_locomo import load

    conversations = load(data_dir, limit)
    engine = make_engine(embedder)
    pairs: list[tuple[str, str, str, str]] = []
    facts = turns = 0
    for conv in conversations:
        memory = engine.new_memory(conv.tenant)
        await fold_all(engine, memory, conv.events)
        turns += len(conv.events)
        facts += memory.graph.count(NodeKind.FACT)
        for node in memory.graph.nodes(NodeKind.FACT):
            if node.supersedes:
                old = memory.graph.node(node.supersedes)
                why = (
                    f"{node.attrs.get('reconcile', '')}; {_slots_line(old)} -> {_slots_line(node)}"
                )
                pairs.append((conv.tenant, why, old.text, node.text))
    pairs.sort()
    return turns, facts, len(pairs), pairs


def write(rows: dict[str, Score], args: argparse.Namespace, extra: list[str]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    lines = [
        "# Belief revisions in plain wording",
        "",
        f"- date: {stamp()}",
        f"- machine: {machine()}",
        f"- command: `.venv/bin/python -m benchmarks.bench_beliefs --embedder {args.embedder}"
        f"{f' --locomo {args.locomo}' if args.locomo else ''}`",
        f"- set: `tests/fixtures/beliefs/revisions.json` (label: {args.label})",
        "",
        "| split | chains | gold links | links written | precision | recall | complete chains "
        "| near-miss pairs linked | statements without a fact |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for split, s in rows.items():
        r = s.row()
        lines.append(
            f"| {split} | {s.chains} | {s.gold} | {s.links} | {r['precision']:.3f} | "
            f"{r['recall']:.3f} | {s.complete}/{s.chains} ({r['completeness']:.3f}) | "
            f"{s.pair_links}/{s.pairs} | {s.no_fact}/{s.statements} |"
        )
    lines += ["", *extra]
    path = RESULTS / f"{args.name}.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def make_embedder(name: str) -> Embedder:
    from benchmarks.bench_locomo import make_embedder as locomo_embedder

    return locomo_embedder(name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    parser.add_argument("--locomo", type=int, default=0, help="fold the first N conversations")
    parser.add_argument("--sample", type=int, default=0, help="print K LoCoMo supersedes")
    parser.add_argument("--show", choices=("dev", "test"), help="print wrong and missed links")
    parser.add_argument("--splits", default="dev,test", help="comma-separated splits to score")
    parser.add_argument("--label", default="current rules")
    parser.add_argument("--name", default="beliefs", help="results file name")
    args = parser.parse_args(argv)
    quiet_logs()
    embedder = make_embedder(args.embedder)
    data = load_set()
    rows: dict[str, Score] = {}
    for split in args.splits.split(","):
        rows[split] = asyncio.run(score_split(data, split, embedder))
        if args.show == split:
            s = rows[split]
            print(f"== {split}: wrong", *s.wrong, f"== {split}: missed", *s.missed, sep="\n  ")
    extra: list[str] = []
    if args.locomo:
        started = time.process_time()
        turns, facts, n, pairs = asyncio.run(
            locomo_supersedes(args.data_dir, args.locomo, embedder)
        )
        cpu = time.process_time() - started
        extra += [
            f"LoCoMo-10, first {args.locomo} conversations folded (fact step, no planner): "
            f"{turns} turns, {facts} facts, **{n} SUPERSEDES** ({cpu:.0f} s CPU).",
        ]
        if args.sample:
            rng = random.Random(11)
            for tenant, rule, old, new in rng.sample(pairs, min(args.sample, len(pairs))):
                print(f"[{tenant}] ({rule})\n   old: {old}\n   new: {new}")
    if hasattr(embedder, "save"):
        embedder.save()
    path = write(rows, args, extra)
    print(path.read_text())


if __name__ == "__main__":
    main()
