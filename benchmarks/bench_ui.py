"""The explorer page (/ui) at 100k nodes: the API calls of each view, over loopback HTTP.

    .venv/bin/python -m benchmarks.bench_ui [--size 100000] [--repeat 7]

The tenant is the read-path benchmark's synthetic graph (:func:`benchmarks.bench_read_speed.
build`: events, concepts, revised facts) plus what the page shows that it lacks: intents in
every status, each triggered by two concepts, and one hub concept grounded by a quarter of all
events (the neighbourhood a bounded view must not read whole). It is written to a data dir's
SQLite store and served by ``foldmem serve``'s app (``build_hub`` + ``create_app``) on a
loopback port; the client sends what the page sends, view by view, and each view's time is
the sum of its calls (the page issues the board's columns at once; summing is the worst
case). Reported: median and worst of ``--repeat`` loads after one warm-up, wall and this
process's CPU time (server and client share the process), and the bytes each view fetched.
Writes benchmarks/results/ui.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from benchmarks.bench_read_speed import DIM, build
from benchmarks.common import RESULTS, machine, quiet_logs, stamp
from schemas.graph import Edge, EdgeKind, Node, NodeKind
from schemas.intents import IntentStatus
from stream_app.api.app import create_app
from stream_app.api.server import ApiServer
from stream_app.factory import build_hub
from stream_app.settings import Settings
from topologies.memory import ChangeSet, event_node_id

TENANT = "bench"
STATUSES = [
    IntentStatus.PENDING,
    IntentStatus.PENDING,
    IntentStatus.ACTION_SCHEDULED,
    IntentStatus.DEFERRED,
    IntentStatus.RESOLVED,
    IntentStatus.REJECTED,
]
CATEGORIES = ["work", "health", "home", "travel", "family_social"]


def tenant_changes(size: int, seed: int = 11) -> tuple[ChangeSet, list[str]]:
    """The synthetic tenant as one ChangeSet (EVENT ids as the engine makes them)."""
    memory, queries = build(size)
    rng = random.Random(seed)
    vectors = np.random.default_rng(seed)
    rename = {
        n.id: event_node_id(TENANT, n.source_event_id or n.id)
        for n in memory.graph.nodes(NodeKind.EVENT)
    }
    nodes = {}
    for node in memory.graph.nodes():
        renamed = node.model_copy(update={"id": rename.get(node.id, node.id)})
        nodes[renamed.id] = renamed
    edges = {}
    for edge in memory.graph.edges():
        moved = edge.model_copy(
            update={"src": rename.get(edge.src, edge.src), "dst": rename.get(edge.dst, edge.dst)}
        )
        edges[moved.key] = moved
    events = [n for n in nodes.values() if n.kind == NodeKind.EVENT]
    concepts = [n for n in nodes.values() if n.kind == NodeKind.CONCEPT]
    t0 = min(n.ts for n in events if n.ts is not None)
    hub = Node(
        id="c-hub",
        kind=NodeKind.CONCEPT,
        tenant=TENANT,
        title="Weekly sync",
        ts=t0,
        created_at=t0,
        updated_at=t0,
    )
    nodes[hub.id] = hub
    for event in events[::4]:
        when = event.ts or t0
        edge = Edge(
            src=event.id, dst=hub.id, kind=EdgeKind.GROUNDS, w0=1.0, t_last=when, created_at=when
        )
        edges[edge.key] = edge
    for i in range(max(30, size // 500)):
        grounds = rng.sample(concepts, 2)
        when = (grounds[0].ts or t0) + timedelta(days=1)
        intent = Node(
            id=f"i-{i:05d}",
            kind=NodeKind.INTENT,
            tenant=TENANT,
            title=f"Follow up on {grounds[0].title}",
            text=f"This came up because 12 events point to the same goal ({grounds[0].title}). "
            "It started with an email and a note.",
            ts=when,
            created_at=when,
            updated_at=when,
            status=STATUSES[i % len(STATUSES)],
            category=CATEGORIES[i % len(CATEGORIES)],
            deadline=when + timedelta(days=rng.randrange(3, 40)),
        )
        nodes[intent.id] = intent
        for concept in grounds:
            edge = Edge(
                src=concept.id,
                dst=intent.id,
                kind=EdgeKind.TRIGGERS,
                w0=0.8,
                t_last=when,
                created_at=when,
            )
            edges[edge.key] = edge
    original = {new: old for old, new in rename.items()}
    vecs: dict[tuple[str, str], Any] = {}
    for node in nodes.values():
        vec = memory.vector(original.get(node.id, node.id))
        if vec is None:
            vec = vectors.standard_normal(DIM).astype(np.float32)
            vec /= np.linalg.norm(vec)
        vecs[(node.kind.value, node.id)] = vec
    change = ChangeSet(
        TENANT,
        nodes=dict(nodes),
        edges=dict(edges),
        vectors=vecs,
        meta=dict(memory.meta),
        events={n.source_event_id: "folded" for n in events if n.source_event_id},
    )
    return change, queries


Call = Callable[[httpx.AsyncClient], Awaitable[httpx.Response]]


def views(ids: dict[str, str], query_text: str) -> dict[str, list[tuple[str, Call]]]:
    """What the page requests for each view (the board: its five columns, then a click)."""
    t = f"/tenants/{TENANT}"
    board: list[tuple[str, Call]] = [("GET /explore/tenants", lambda c: c.get("/explore/tenants"))]
    for column in ("pending", "scheduled", "deferred", "resolved", "closed"):
        board.append(
            (
                f"GET explore/intents?status={column}",
                lambda c, s=column: c.get(
                    f"{t}/explore/intents", params={"status": s, "limit": 20}
                ),
            )
        )
    return {
        "intents board": board,
        "intent opened": [
            ("GET explore/intents/{id}", lambda c: c.get(f"{t}/explore/intents/{ids['intent']}"))
        ],
        "search": [
            ("POST query", lambda c: c.post(f"{t}/query", json={"text": query_text, "k": 10})),
            (
                "GET explore/events?ids=...",
                lambda c: c.get(f"{t}/explore/events", params={"ids": ids["cited"].split(",")}),
            ),
        ],
        "graph (hub concept)": [
            (
                "GET explore/nodes?kind=CONCEPT",
                lambda c: c.get(f"{t}/explore/nodes", params={"kind": "CONCEPT", "limit": 30}),
            ),
            (
                "GET explore/nodes/{hub}/neighbourhood",
                lambda c: c.get(f"{t}/explore/nodes/c-hub/neighbourhood", params={"limit": 24}),
            ),
        ],
        "beliefs": [
            (
                "GET explore/nodes?kind=FACT&chained",
                lambda c: c.get(
                    f"{t}/explore/nodes",
                    params={"kind": "FACT", "chained": "true", "limit": 50},
                ),
            ),
            (
                "GET explore/nodes/{id}/chain",
                lambda c: c.get(f"{t}/explore/nodes/{ids['fact']}/chain"),
            ),
        ],
    }


async def load_view(
    client: httpx.AsyncClient, calls: list[tuple[str, Call]]
) -> tuple[float, float, int]:
    wall, cpu, size = time.perf_counter(), time.process_time(), 0
    for _, call in calls:
        response = await call(client)
        response.raise_for_status()
        size += len(response.content)
    return time.perf_counter() - wall, time.process_time() - cpu, size


async def measure(data_dir: Path, size: int, repeat: int) -> dict[str, Any]:
    change, queries = tenant_changes(size)
    settings = Settings(
        data_dir=data_dir,
        embedder="hashing",
        hashing_dim=DIM,
        sweep_interval=0,
        log_level="warning",
    )
    started = time.perf_counter()
    hub = build_hub(settings, sinks=[])
    hub.store.apply(change)
    write_s = time.perf_counter() - started
    del change
    started = time.perf_counter()
    hub.view(TENANT)  # load the tenant from SQLite, as a started server does on first use
    load_s = time.perf_counter() - started
    memory = hub.view(TENANT)
    server = ApiServer(create_app(hub, settings), "127.0.0.1", 0)
    server.start()
    await server.started()
    rows: dict[str, dict[str, Any]] = {}
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            query_text = queries[0]
            hit = (await client.post(f"/tenants/{TENANT}/query", json={"text": query_text})).json()
            intent = (
                await client.get(f"/tenants/{TENANT}/explore/intents", params={"limit": 1})
            ).json()
            fact = (
                await client.get(
                    f"/tenants/{TENANT}/explore/nodes", params={"kind": "FACT", "chained": "true"}
                )
            ).json()
            ids = {
                "intent": intent["items"][0]["id"],
                "fact": fact["items"][0]["id"],
                "cited": ",".join(
                    sorted({e for item in hit["items"] for e in item["event_ids"][:5]})
                ),
            }
            for name, calls in views(ids, query_text).items():
                await load_view(client, calls)  # warm: the first query builds read indexes
                samples = [await load_view(client, calls) for _ in range(repeat)]
                rows[name] = {
                    "calls": len(calls),
                    "wall_ms": 1000 * statistics.median(s[0] for s in samples),
                    "wall_max_ms": 1000 * max(s[0] for s in samples),
                    "cpu_ms": 1000 * statistics.median(s[1] for s in samples),
                    "kb": samples[0][2] / 1024,
                }
    finally:
        await server.stop()
        hub.store.close()
    return {
        "nodes": memory.graph.count(),
        "edges": memory.graph.edge_count(),
        "hub_degree": memory.graph.degree("c-hub"),
        "intents": memory.graph.count(NodeKind.INTENT),
        "write_s": write_s,
        "load_s": load_s,
        "views": rows,
    }


def write(result: dict[str, Any], args: argparse.Namespace, loads: list[float]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "ui.md"
    lines = [
        "# Explorer page at scale",
        "",
        f"{stamp()}, {machine()}, load average {loads[0]:.1f} before / {loads[1]:.1f} after;",
        f"`.venv/bin/python -m benchmarks.bench_ui --size {args.size} --repeat {args.repeat}`.",
        f"Tenant: {result['nodes']:,} nodes, {result['edges']:,} edges, {result['intents']} "
        f"intents, a hub concept with {result['hub_degree']:,} links; written to SQLite in "
        f"{result['write_s']:.1f} s, loaded by the hub in {result['load_s']:.1f} s (once, at "
        "start-up; not in the figures below).",
        "",
        "Each view's API calls over loopback HTTP, one after the other (median and worst of "
        f"{args.repeat} loads after a warm-up; CPU is this process's, server and client):",
        "",
        "| view | calls | wall ms (median) | wall ms (worst) | CPU ms (median) | KB fetched |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, row in result["views"].items():
        lines.append(
            f"| {name} | {row['calls']} | {row['wall_ms']:.1f} | {row['wall_max_ms']:.1f} | "
            f"{row['cpu_ms']:.1f} | {row['kb']:.1f} |"
        )
    worst = max(row["wall_max_ms"] for row in result["views"].values())
    lines += [
        "",
        f"Slowest view, worst load: {worst:.0f} ms ({'under' if worst < 1000 else 'OVER'} the "
        "one-second budget).",
        "",
    ]
    path.write_text("\n".join(lines))
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    quiet_logs()
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="foldmem-bench-ui-") as tmp:
        result = asyncio.run(measure(Path(tmp) / "data", args.size, args.repeat))
    loads.append(os.getloadavg()[0])
    print(write(result, args, loads).read_text())


if __name__ == "__main__":
    main()
