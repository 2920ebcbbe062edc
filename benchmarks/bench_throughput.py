"""Fold throughput of the batched fold against the cost of embedding the same texts alone.

    .venv/bin/python -m benchmarks.bench_throughput [--sizes 1000,10000,100000]
        [--embedders hashing,minilm] [--minilm-max 10000] [--batch 64] [--stream 300]
        [--no-ahead] [--minilm-threads 2]

For each embedder and size N, one run on a fresh tenant:

1. **fold**: the first N events of the seeded synthetic stream (``benchmarks.synthetic``)
   folded with ``FoldEngine.fold_batch`` in batches of ``--batch`` (heuristic planner, engine
   only, no store), each told the next (``ahead``: its texts are embedded while this batch
   folds, and parsed in the reader process on another core, as the ingest driver and the
   factory do; ``--no-ahead``: neither): events/s on the wall clock and CPU milliseconds per
   event (this process and its reader process; ONNX's threads count, other jobs on the
   machine do not). ``--minilm-threads``: MiniLM's intra-op threads (the runtime's default
   is 2);
2. **embedding floor**: the same N event texts embedded alone, in batches of ``--batch``, by a
   fresh embedder of the same kind: what no fold can beat. ``fold / floor`` reads as a ratio;
3. **streaming**: ``--stream`` more events folded one at a time (a batch of one, as a live
   stream arrives) on the graph the fold left: latency p50 / p99 per event.

The default embedder's 100k run takes hours on two cores: ``--minilm-max`` (default 10,000)
skips its larger sizes, which the table says. Writes ``benchmarks/results/throughput.md`` and
``throughput.png``. ``--runtime`` measures the runtime instead (``throughput_runtime.md``):
``foldmem run --once`` in-process with batches of 1 and 64 while its ``/health`` is probed
from another thread, and with ``--kafka`` the Kafka workers (``benchmarks.bench_kafka``'s
burst: 1 worker one message at a time, 1 and 2 workers with batches). ``--rows PATH`` also
keeps every row measured in a JSON-lines file and renders the table from all of them, so
sizes measured by separate runs share one table.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import io
import json
import os
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np

from benchmarks.bench_fold import build_embedder
from benchmarks.common import RESULTS, machine, quiet_logs, stamp
from benchmarks.synthetic import SyntheticStream
from schemas.events import RawEvent
from stream_app.collector import tune_collector
from stream_app.hub.reader import ReaderProcess, cores, shared_reader
from stream_app.settings import Settings
from topologies.config import EngineConfig
from topologies.engine import FoldEngine
from topologies.fold_steps import FOLD_STEPS, StepTimes
from topologies.heuristic_planner import HeuristicPlanner
from topologies.vector_index import use_single_thread

TOPICS_PER_EVENT = 1 / 250  # synthetic themes: one per 250 events, at least 50


@dataclass
class Row:
    embedder: str
    events: int
    nodes: int = 0
    fold_s: float = 0.0
    fold_cpu_s: float = 0.0
    floor_s: float = 0.0
    floor_cpu_s: float = 0.0
    stream_ms: list[float] = field(default_factory=list)
    stream_cpu_ms: list[float] = field(default_factory=list)
    steps: dict[str, float] = field(default_factory=dict)  # fold seconds per step (fold_steps)
    measured: str = ""  # date and load average when measured
    command: str = ""  # the run that measured it

    @property
    def fold_rate(self) -> float:
        return self.events / self.fold_s

    @property
    def floor_rate(self) -> float:
        return self.events / self.floor_s

    @property
    def fold_cpu_rate(self) -> float:
        """Events per CPU-second of this process: the rate on an idle core (MiniLM's two
        threads both count)."""
        return self.events / self.fold_cpu_s

    @property
    def floor_cpu_rate(self) -> float:
        return self.events / self.floor_cpu_s

    @property
    def cpu_ms_per_event(self) -> float:
        return 1000.0 * self.fold_cpu_s / self.events


def stream_of(count: int) -> list[RawEvent]:
    topics = max(50, int(count * TOPICS_PER_EVENT))
    return list(SyntheticStream(seed=7, topics=topics).events(count))


def embedding_floor(
    embedder_name: str, events: Sequence[RawEvent], batch: int
) -> tuple[float, float]:
    """Wall and CPU seconds to embed the events' texts alone, ``batch`` at a time."""
    embedder = build_embedder(embedder_name)
    embedder.embed(["warm up"])  # the model's load is not embedding
    texts = [event.text or event.id for event in events]
    started, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), batch):
        embedder.embed(texts[start : start + batch])
    return time.perf_counter() - started, time.process_time() - cpu


def _cpu_seconds(reader: ReaderProcess | None) -> float:
    """The CPU time of this process and of its reader process (the fold's, both)."""
    return time.process_time() + (reader.cpu_seconds() if reader is not None else 0.0)


async def measure(
    embedder_name: str,
    size: int,
    batch: int,
    stream: int,
    ahead: bool = True,
    threads: int = 2,
) -> Row:
    events = stream_of(size + stream)
    embedder = build_embedder(embedder_name, threads)
    config = EngineConfig(embed_ahead=ahead)
    # as the factory builds it: the next batch parsed in the reader process, on another core
    reader = shared_reader() if ahead and cores() > 1 else None
    planner = HeuristicPlanner(embedder, config)
    engine = FoldEngine(embedder, planner, config, reader=reader)
    memory = engine.new_memory("bench")
    engine.warm_up()  # models and word lists load (as a server does at start): not folding
    warm = events[0].model_copy(update={"tenant": "warm-up"})
    await engine.fold_batch(engine.new_memory("warm-up"), [warm])
    if reader is not None:  # its process starts (as at a server's first backlog): not folding
        reader.submit([], [warm.text or warm.id]).result(timeout=120)
    row = Row(embedder_name, size)
    steps = StepTimes()
    started, cpu = time.perf_counter(), _cpu_seconds(reader)
    for start in range(0, size, batch):
        stop = min(size, start + batch)  # the next batch is embedded while this one folds
        folded = await engine.fold_batch(
            memory, events[start:stop], ahead=events[stop : min(size, stop + batch)]
        )
        steps.merge(folded.steps)
    row.steps = steps.seconds
    row.fold_s, row.fold_cpu_s = time.perf_counter() - started, _cpu_seconds(reader) - cpu
    for event in events[size:]:
        one, one_cpu = time.perf_counter(), time.process_time()
        await engine.fold_batch(memory, [event])
        row.stream_ms.append(1000.0 * (time.perf_counter() - one))
        row.stream_cpu_ms.append(1000.0 * (time.process_time() - one_cpu))
    row.nodes = len(memory.graph)
    row.floor_s, row.floor_cpu_s = embedding_floor(embedder_name, events[:size], batch)
    row.measured = f"{stamp()}, load average {os.getloadavg()[0]:.1f}"
    print(summary(row), flush=True)
    return row


def pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def summary(row: Row) -> str:
    return (
        f"{row.embedder} {row.events}: fold {row.fold_rate:.0f} ev/s "
        f"({row.cpu_ms_per_event:.2f} CPU ms/ev), floor {row.floor_rate:.0f} ev/s, "
        f"stream p50 {pct(row.stream_ms, 50):.1f} ms p99 {pct(row.stream_ms, 99):.1f} ms"
    )


def table(rows: Sequence[Row], skipped: Sequence[str]) -> list[str]:
    lines = [
        "| embedder | events | measured | nodes | fold events/s | embedding-only events/s | "
        "fold / embedding-only | fold events per CPU-s | embedding-only events per CPU-s | "
        "fold / embedding-only (CPU) | fold CPU ms/event | streaming p50 ms | streaming p99 ms "
        "| streaming CPU p99 ms |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.embedder} | {r.events:,} | {r.measured} | {r.nodes:,} | {r.fold_rate:.0f} | "
            f"{r.floor_rate:.0f} | {r.fold_rate / r.floor_rate:.2f} | {r.fold_cpu_rate:.0f} | "
            f"{r.floor_cpu_rate:.0f} | {r.fold_cpu_rate / r.floor_cpu_rate:.2f} | "
            f"{r.cpu_ms_per_event:.2f} | {pct(r.stream_ms, 50):.1f} | "
            f"{pct(r.stream_ms, 99):.1f} | {pct(r.stream_cpu_ms, 99):.1f} |"
        )
    lines += [f"| {name} | (skipped: see --minilm-max) |" + " |" * 12 for name in skipped]
    return lines


def flatness(rows: Sequence[Row]) -> list[str]:
    """Per-event CPU cost at each size relative to the smallest size of the same embedder."""
    out = []
    for name in dict.fromkeys(r.embedder for r in rows):
        mine = [r for r in rows if r.embedder == name]
        base = mine[0]
        ratios = ", ".join(
            f"{r.events:,}: {r.cpu_ms_per_event / base.cpu_ms_per_event:.2f}x" for r in mine[1:]
        )
        if ratios:
            out.append(f"- {name}: CPU per event vs {base.events:,} events: {ratios}")
    return out


STEP_GROUPS = {  # steps whose removal together the budget table prices
    "context + facts + emerge": ("context", "facts", "emerge"),
}


def budget(rows: Sequence[Row]) -> list[str]:
    """Where the fold's wall time went at each embedder's largest size: each step's
    milliseconds per event on the fold's thread, its share, and the events/s the fold would
    reach were that step free and nothing else changed (an upper bound: Amdahl's law)."""
    largest = {r.embedder: r for r in rows if r.steps}  # rows are ordered by size
    if not largest:
        return []
    names = list(largest)
    lines = [
        "Where a fold's time goes (the fold's thread; `topologies/fold_steps.py`): "
        "milliseconds per event, share of the fold's wall time, and events/s were the step "
        "free (everything else as measured: an upper bound).",
        "",
        "| step | " + " | ".join(f"{n} {largest[n].events:,}" for n in names) + " |",
        "|---|" + "---:|" * len(names),
    ]

    def cell(row: Row, seconds: float) -> str:
        ms = 1000.0 * seconds / row.events
        free = row.events / max(row.fold_s - seconds, 1e-9)
        return f"{ms:.2f} ms ({100.0 * seconds / row.fold_s:.0f}%), {free:.0f}/s"

    for step in FOLD_STEPS:
        cells = [cell(largest[n], largest[n].steps.get(step, 0.0)) for n in names]
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    for label, group in STEP_GROUPS.items():
        cells = [cell(largest[n], sum(largest[n].steps.get(s, 0.0) for s in group)) for n in names]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    untimed = [cell(largest[n], largest[n].fold_s - sum(largest[n].steps.values())) for n in names]
    lines.append("| untimed (batching, the event loop) | " + " | ".join(untimed) + " |")
    return lines


def write(rows: Sequence[Row], skipped: Sequence[str], command: str, batch: int) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    commands = list(dict.fromkeys(r.command for r in rows if r.command)) or [command]
    lines = [
        "# Fold throughput: batched fold vs embedding alone",
        "",
        f"- date: {stamp()}; machine: {machine()} (shared with other jobs: wall-clock "
        "figures are noisy, CPU figures less so)",
        *(f"- command: `{c}`" for c in commands),
        f"- heuristic planner, engine only (no store), batches of {batch}; streaming: one "
        "event at a time on the graph the fold left",
        "",
        *table(rows, skipped),
        "",
        *flatness(rows),
        "",
        *budget(rows),
        "",
        "![throughput](throughput.png)",
    ]
    (RESULTS / "throughput.md").write_text("\n".join(lines) + "\n")
    plot(rows)


def plot(rows: Sequence[Row]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for name in dict.fromkeys(r.embedder for r in rows):
        mine = [r for r in rows if r.embedder == name]
        sizes = [r.events for r in mine]
        ax.plot(sizes, [r.fold_rate for r in mine], marker="o", label=f"fold ({name})")
        ax.plot(sizes, [r.floor_rate for r in mine], marker="s", ls="--",
                label=f"embedding only ({name})")  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("events folded")
    ax.set_ylabel("events/s")
    ax.set_title("Batched fold vs embedding alone")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "throughput.png", dpi=120)


async def run(args: argparse.Namespace) -> tuple[list[Row], list[str]]:
    use_single_thread()  # as the runtime does (stream_app.factory.build_engine)
    rows: list[Row] = []
    skipped: list[str] = []
    for name in args.embedders.split(","):
        for size in (int(s) for s in args.sizes.split(",")):
            if name == "minilm" and size > args.minilm_max:
                skipped.append(f"{name} {size:,}")
                continue
            rows.append(
                await measure(
                    name, size, args.batch, args.stream, not args.no_ahead, args.minilm_threads
                )
            )
    return rows, skipped


def kept_rows(path: Path, new: Sequence[Row]) -> list[Row]:
    """Append ``new`` to the JSON-lines file; every row it holds, the latest per (embedder,
    size), ordered by embedder then size."""
    with path.open("a") as out:
        for row in new:
            out.write(json.dumps(dataclasses.asdict(row)) + "\n")
    latest: dict[tuple[str, int], Row] = {}
    for line in path.read_text().splitlines():
        row = Row(**json.loads(line))
        latest[(row.embedder, row.events)] = row
    order = {"hashing": 0, "minilm": 1}
    return sorted(latest.values(), key=lambda r: (order.get(r.embedder, 2), r.events))


# ------------------------------------------------------------------------------ runtime


@dataclass
class RuntimeRow:
    what: str
    events: int
    seconds: float
    cpu_s: float = float("nan")  # this process (the embedded runner); nan for Kafka workers
    health_ms: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.events / self.seconds


def _probe(url: list[str], latencies: list[float], done: threading.Event) -> None:
    """GET /health every 20 ms from another thread while the runner folds."""
    while not url and not done.is_set():
        time.sleep(0.01)
    with httpx.Client(timeout=30.0) as client:
        while not done.is_set():
            started = time.perf_counter()
            try:
                client.get(f"{url[0]}/health")
            except httpx.HTTPError:
                return  # the runner stopped its API
            latencies.append(1000.0 * (time.perf_counter() - started))
            time.sleep(0.02)


async def embedded_run(events: Sequence[RawEvent], batch: int, workdir: Path) -> RuntimeRow:
    """``foldmem run --once`` on a JSON-lines file of the events (SQLite store, FULL sync,
    its API served and probed), folding batches of ``batch``."""
    from stream_app.api.app import create_app
    from stream_app.embedded.runner import Runner, RunOptions
    from stream_app.factory import build_hub

    workdir.mkdir(parents=True, exist_ok=True)
    source = workdir / "events.jsonl"
    source.write_text("".join(e.model_dump_json() + "\n" for e in events))
    settings = Settings(
        data_dir=workdir / "data", embedder="hashing", sweep_interval=0, api_port=0,
        log_level="warning", fold_batch_size=batch,
    )  # fmt: skip
    hub = build_hub(settings, sinks=[])
    options = RunOptions([source], once=True, serve_api=True, progress=False)
    runner = Runner(settings, hub, options, app_factory=lambda: create_app(hub, settings),
                    out=io.StringIO())  # fmt: skip
    url: list[str] = []
    latencies: list[float] = []
    done = threading.Event()
    probe = threading.Thread(target=_probe, args=(url, latencies, done), daemon=True)
    probe.start()

    async def publish_url() -> None:
        while runner.api_url is None:
            await asyncio.sleep(0.01)
        url.append(runner.api_url)

    watcher = asyncio.create_task(publish_url())
    reader = hub.engine.reader if isinstance(hub.engine.reader, ReaderProcess) else None
    started, cpu = time.perf_counter(), _cpu_seconds(reader)
    try:
        stats = await runner.run()
    finally:
        done.set()
        watcher.cancel()
        hub.store.close()
    elapsed, used = time.perf_counter() - started, _cpu_seconds(reader) - cpu
    probe.join(30)
    what = f"embedded (SQLite), batches of {batch}"
    return RuntimeRow(what, stats.folded, elapsed, used, latencies)


def kafka_runs(tenants: int, per_tenant: int, workdir: Path) -> list[RuntimeRow]:
    """benchmarks.bench_kafka's burst: every event produced at once, folded by 1 or 2 worker
    processes (batches of 64, and one message at a time for comparison)."""
    from benchmarks.bench_kafka import burst, make_events
    from stream_app.devbroker import start_tansu, stop

    workdir.mkdir(parents=True, exist_ok=True)
    events = make_events(tenants, per_tenant)
    with (workdir / "tansu.log").open("wb") as log:
        broker_proc, broker = start_tansu(log)
        try:
            rows = []
            for workers, batch in ((1, 1), (1, 64), (2, 64)):
                env = {"FOLDMEM_KAFKA_FOLD_BATCH_SIZE": str(batch)}
                got = burst(broker, workdir, workers, events, env)
                what = f"Kafka, {workers} worker{'s' if workers > 1 else ''}, batches of {batch}"
                rows.append(RuntimeRow(what, len(events), float(got["seconds"])))
                print(what, f"{rows[-1].rate:.1f} ev/s", flush=True)
        finally:
            stop(broker_proc)
    return rows


def runtime_table(rows: Sequence[RuntimeRow]) -> list[str]:
    lines = [
        "| runtime | events | events/s | CPU ms/event (runner) | /health p50 ms | "
        "/health p99 ms | /health probes |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        cpu = "" if r.cpu_s != r.cpu_s else f"{1000.0 * r.cpu_s / r.events:.2f}"
        health = (
            f"{pct(r.health_ms, 50):.0f} | {pct(r.health_ms, 99):.0f} | {len(r.health_ms)}"
            if r.health_ms
            else " | | "
        )
        lines.append(f"| {r.what} | {r.events:,} | {r.rate:.1f} | {cpu} | {health} |")
    return lines


async def runtime(args: argparse.Namespace) -> list[RuntimeRow]:
    use_single_thread()
    events = stream_of(args.runtime_events)
    base = Path(tempfile.mkdtemp(prefix="bench_throughput_"))
    rows = []
    for batch in (1, 64):
        rows.append(await embedded_run(events, batch, base / f"embedded-{batch}"))
        print(rows[-1].what, f"{rows[-1].rate:.1f} ev/s", flush=True)
    if args.kafka:
        rows += await asyncio.to_thread(kafka_runs, 8, args.runtime_events // 8, base / "kafka")
    return rows


def write_runtime(rows: Sequence[RuntimeRow], command: str) -> None:
    load = os.getloadavg()
    lines = [
        "# Runtime throughput: embedded runner and Kafka workers, API during a bulk fold",
        "",
        f"- date: {stamp()}; machine: {machine()}; load average at the end {load[0]:.1f} "
        f"(1 min), {load[1]:.1f} (5 min): the machine is shared, wall-clock rates are noisy",
        f"- command: `{command}`",
        "- heuristic planner, hashing embedder, the synthetic stream; embedded: `foldmem run "
        "--once` in-process on a JSON-lines file (SQLite, FULL sync) with its API served and "
        "`/health` asked every 20 ms from another thread (the runner's CPU: its process, the "
        "probing thread's included, and its reader process); Kafka: tansu on loopback, 8 "
        "partitions, 8 tenants, every event produced at once (benchmarks/bench_kafka.py)",
        "",
        *runtime_table(rows),
    ]
    (RESULTS / "throughput_runtime.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--embedders", default="hashing,minilm")
    parser.add_argument("--minilm-max", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--stream", type=int, default=300, help="events folded one at a time")
    parser.add_argument("--no-ahead", action="store_true", help="no batch embedded or parsed ahead")
    parser.add_argument("--minilm-threads", type=int, default=2)
    parser.add_argument("--rows", type=Path, default=None, help="JSON lines of rows to keep")
    parser.add_argument(
        "--render-only", action="store_true", help="measure nothing: write the --rows table"
    )
    parser.add_argument(
        "--runtime", action="store_true", help="the embedded runner (and --kafka) instead"
    )
    parser.add_argument("--runtime-events", type=int, default=2000)
    parser.add_argument("--kafka", action="store_true", help="with --runtime: Kafka workers")
    args = parser.parse_args()
    quiet_logs()
    tune_collector(Settings().gc_threshold)  # as `foldmem run` and `foldmem worker` do at start
    command = (
        f"python -m benchmarks.bench_throughput --sizes {args.sizes} --embedders "
        f"{args.embedders} --minilm-max {args.minilm_max} --batch {args.batch} "
        f"--stream {args.stream}"
        + (" --no-ahead" if args.no_ahead else "")
        + (f" --minilm-threads {args.minilm_threads}" if args.minilm_threads != 2 else "")
        + (f" --rows {args.rows}" if args.rows else "")
    )
    if args.runtime:
        command = (
            f"python -m benchmarks.bench_throughput --runtime --runtime-events "
            f"{args.runtime_events}" + (" --kafka" if args.kafka else "")
        )
    if args.runtime:
        write_runtime(asyncio.run(runtime(args)), command)
        return
    rows, skipped = ([], []) if args.render_only else asyncio.run(run(args))
    for row in rows:
        row.command = command
    if args.rows is not None:
        rows = kept_rows(args.rows, rows)
    write(rows, skipped, command, args.batch)


if __name__ == "__main__":
    main()
