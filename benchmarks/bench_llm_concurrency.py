"""LLM planner throughput: concurrent tenants vs one event at a time, and calls skipped.

A fake OpenAI-compatible model (real HTTP on loopback) answers every request after
``--latency`` seconds (default 0.5) with a valid plan. Each tenant's events are folded strictly
in order; tenants run concurrently, bounded by the planner's ``llm_concurrency`` semaphore.
The one-at-a-time baseline folds every event sequentially (on ``--baseline-tenants`` tenants:
its rate does not depend on the size). Also folds examples/sample_stream.jsonl once to report
the share of events that needed a call on the sample stream.

    .venv/bin/python benchmarks/bench_llm_concurrency.py            # 100 tenants x 10 events
    .venv/bin/python benchmarks/bench_llm_concurrency.py --tenants 20 --concurrency 1 8 32

Writes benchmarks/results/llm_concurrency.md and .png.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import structlog  # noqa: E402

from adapters.llm.client import CapabilityMemory  # noqa: E402
from adapters.llm.factory import llm_planner  # noqa: E402
from foldmem_testing.fakeserver import FakeOpenAI  # noqa: E402
from schemas.events import RawEvent  # noqa: E402
from topologies.config import EngineConfig  # noqa: E402
from topologies.embedding import HashingEmbedder  # noqa: E402
from topologies.engine import FoldEngine  # noqa: E402
from topologies.executor import PlanExecutor  # noqa: E402
from topologies.heuristic_planner import HeuristicPlanner  # noqa: E402
from topologies.llm.config import LLMConfig  # noqa: E402
from topologies.llm.planner import LLMPlanner  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
T0 = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
TOPICS = [
    "launch plan",
    "dentist appointment",
    "passport renewal",
    "birthday gift",
    "bathroom ceiling leak",
    "running training",
    "school pickup",
    "tax return",
    "flight booking",
    "budget review",
    "team offsite",
    "car service",
]
RECURRING = [
    "Weekly sync with {who}",
    "Daily standup",
    "Newsletter: this week in the Kiez",
    "Reminder: {topic} tomorrow",
]
NOTE = (
    "Why it plateaus near 12 events/s: everything runs on one event loop (one core), and a "
    "fold costs ~80 ms of CPU here (engine context assembly ~50 ms; openai client + the in-"
    "process fake server ~30 ms), so from ~32 requests in flight the 500 ms model latency is "
    "fully hidden and the CPU is the ceiling. A remote model removes the server's share."
)
PEOPLE = ["Farida", "Ruben", "Ming", "Kasia", "Tobias", "Jonas", "Leonie"]


def tenant_events(tenant: str, count: int, rng: random.Random) -> list[RawEvent]:
    """Mostly distinct events, with recurring ones repeating verbatim (as real streams do)."""
    events: list[RawEvent] = []
    recurring = [r.format(who=rng.choice(PEOPLE), topic=rng.choice(TOPICS)) for r in RECURRING]
    for i in range(count):
        if i >= 2 and rng.random() < 0.3:
            title, body = rng.choice(recurring[:2]), "Agenda as usual."
        else:
            topic = rng.choice(TOPICS)
            title = f"{topic.capitalize()} #{i}: {rng.choice(PEOPLE)} {rng.randint(1, 10_000)}"
            body = f"Notes about the {topic} with {rng.choice(PEOPLE)}, item {rng.random():.6f}."
        events.append(
            RawEvent(
                id=f"{tenant}-{i:03d}",
                tenant=tenant,
                source="note",
                ts=T0 + timedelta(hours=i),
                title=title,
                body=body,
            )
        )
    return events


@dataclass
class Run:
    label: str
    concurrency: int
    events: int
    seconds: float
    calls: int
    skipped: int
    max_in_flight: int

    @property
    def rate(self) -> float:
        return self.events / self.seconds if self.seconds else 0.0


def make_engine(base_url: str, concurrency: int) -> tuple[FoldEngine, LLMPlanner]:
    embedder = HashingEmbedder(dim=256)
    config = EngineConfig()
    heuristic = HeuristicPlanner(embedder, config)
    llm = LLMConfig(
        base_url=base_url, model="fake", server="hosted", concurrency=concurrency, timeout_s=30.0
    )
    validator = PlanExecutor(embedder, config).validate
    planner = llm_planner(
        llm, heuristic=heuristic, validator=validator, capabilities=CapabilityMemory()
    )
    return FoldEngine(embedder, planner, config, fallback=heuristic), planner


async def run(
    fake: FakeOpenAI,
    streams: dict[str, list[RawEvent]],
    concurrency: int,
    sequential: bool,
    label: str,
) -> Run:
    engine, planner = make_engine(fake.base_url, concurrency)
    memories = {tenant: engine.new_memory(tenant) for tenant in streams}
    calls_before = fake.calls
    fake.max_in_flight = 0

    async def one_tenant(tenant: str) -> None:
        for event in streams[tenant]:  # strictly in order per tenant
            await engine.fold(memories[tenant], event)

    started = time.perf_counter()
    if sequential:
        for tenant in streams:
            await one_tenant(tenant)
    else:
        await asyncio.gather(*(one_tenant(t) for t in streams))
    seconds = time.perf_counter() - started
    totals = planner.ledger.totals()
    assert all(not m.pending_events() for m in memories.values()), "an event was not folded"
    await planner.aclose()
    return Run(
        label,
        concurrency,
        sum(len(v) for v in streams.values()),
        seconds,
        fake.calls - calls_before,
        totals.skipped_duplicate,
        fake.max_in_flight,
    )


async def sample_stream_share() -> dict[str, Any]:
    path = ROOT / "examples" / "sample_stream.jsonl"
    if not path.exists():
        return {}
    events = [
        RawEvent.model_validate(json.loads(line))
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    async with FakeOpenAI() as fake:
        engine, planner = make_engine(fake.base_url, 8)
        memories: dict[str, Any] = {}
        for event in events:
            memory = memories.setdefault(event.tenant, engine.new_memory(event.tenant))
            await engine.fold(memory, event)
        summary = planner.ledger.summary()
        await planner.aclose()
    return {
        "events": len(events),
        "calls": fake.calls,
        "skipped": summary["totals"]["skipped_duplicate"],
        "tokens_per_event": summary["tokens_per_event"],
    }


def write_results(runs: list[Run], sample: dict[str, Any], args: argparse.Namespace) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    base = next((r for r in runs if r.label == "one at a time"), runs[0])
    lines = [
        "# LLM planner: concurrency and calls skipped",
        "",
        f"Fake OpenAI-compatible model on loopback answering in {args.latency * 1000:.0f} ms; "
        f"{args.tenants} tenants x {args.events} events (one-at-a-time baseline on "
        f"{args.baseline_tenants} tenants); HashingEmbedder; each tenant's events in order.",
        "Command: `.venv/bin/python benchmarks/bench_llm_concurrency.py "
        + " ".join(sys.argv[1:])
        + "`",
        "",
        "| mode | llm_concurrency | events | seconds | events/s | speed-up | model calls "
        "| skipped call (near-duplicate) | max requests in flight |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in runs:
        lines.append(
            f"| {r.label} | {r.concurrency} | {r.events} | {r.seconds:.1f} | {r.rate:.1f} | "
            f"{r.rate / base.rate:.1f}x | {r.calls} | {r.skipped / r.events:.0%} | "
            f"{r.max_in_flight} |"
        )
    if sample:
        lines += [
            "",
            f"Sample stream (examples/sample_stream.jsonl, {sample['events']} events, "
            f"fake model): {sample['calls']} calls, {sample['skipped']} events "
            f"({sample['skipped'] / sample['events']:.0%}) skipped the call as "
            f"near-duplicates; {1 - sample['skipped'] / sample['events']:.0%} needed one. "
            f"Fake-model tokens/event (prompt chars/4): {sample['tokens_per_event']}.",
        ]
    lines += [
        "",
        "The synthetic streams repeat recurring events verbatim about 30% of the time "
        "(after the first two events), so their skip share is a property of the generator;"
        " the sample-stream figure is the one to quote.",
        "",
        NOTE,
    ]
    (RESULTS / "llm_concurrency.md").write_text("\n".join(lines) + "\n")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    labels = [f"{r.label}\n(c={r.concurrency})" for r in runs]
    ax.bar(labels, [r.rate for r in runs], color=["#999"] + ["#2a7"] * (len(runs) - 1))
    for i, r in enumerate(runs):
        ax.text(i, r.rate, f"{r.rate:.1f}", ha="center", va="bottom")
    ax.set_ylabel("events / s")
    ax.set_title(
        f"LLM planner, fake model {args.latency * 1000:.0f} ms, "
        f"{args.tenants} tenants x {args.events} events"
    )
    fig.tight_layout()
    fig.savefig(RESULTS / "llm_concurrency.png", dpi=120)


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tenants", type=int, default=100)
    parser.add_argument("--events", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32, 100])
    parser.add_argument("--baseline-tenants", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))

    rng = random.Random(args.seed)
    streams = {
        f"t{i:03d}": tenant_events(f"t{i:03d}", args.events, rng) for i in range(args.tenants)
    }
    baseline = dict(list(streams.items())[: args.baseline_tenants])
    runs: list[Run] = []
    async with FakeOpenAI(latency=args.latency) as fake:
        runs.append(await run(fake, baseline, 1, True, "one at a time"))
        print(f"one at a time: {runs[-1].rate:.2f} events/s", flush=True)
        for c in args.concurrency:
            runs.append(await run(fake, streams, c, False, "concurrent tenants"))
            print(f"concurrency {c}: {runs[-1].rate:.2f} events/s", flush=True)
    sample = await sample_stream_share()
    write_results(runs, sample, args)
    print((RESULTS / "llm_concurrency.md").read_text())


if __name__ == "__main__":
    asyncio.run(main())
