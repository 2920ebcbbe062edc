"""Hand-built memories for read-path tests (no planner involved), and data dirs folded by the
runtime's hub from a few events (hashing embedder)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from schemas.events import RawEvent
from schemas.graph import EDGE_PRIOR_WEIGHT, Edge, EdgeKind, Node, NodeKind
from schemas.query import QueryRequest, QueryResponse
from stream_app.factory import build_hub
from stream_app.settings import Settings
from topologies.config import EngineConfig
from topologies.embedding import Embedder
from topologies.memory import ChangeSet, TenantMemory, event_node_id
from topologies.read import ReadConfig, Reader

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
TENANT = "alice"


class Builder:
    """Adds nodes (with vectors) and edges to a memory in one transaction per call."""

    def __init__(self, embedder: Embedder, tenant: str = TENANT) -> None:
        self.embedder = embedder
        self.memory = TenantMemory(tenant, embedder.dim)
        self.changes: list[ChangeSet] = []
        self.memory.set_meta("clock", (T0 + timedelta(days=30)).isoformat())

    def event(
        self, event_id: str, title: str, body: str = "", *, hours: float = 0.0, source: str = "note"
    ) -> str:
        node_id = event_node_id(self.memory.tenant, event_id)
        ts = T0 + timedelta(hours=hours)
        node = Node(
            id=node_id,
            kind=NodeKind.EVENT,
            tenant=self.memory.tenant,
            title=title,
            text=body,
            ts=ts,
            created_at=ts,
            updated_at=ts,
            source=source,
            source_event_id=event_id,
        )
        self._add(node)
        return node_id

    def node(
        self,
        node_id: str,
        kind: NodeKind,
        title: str,
        text: str = "",
        *,
        hours: float = 0.0,
        **extra: Any,
    ) -> str:
        ts = T0 + timedelta(hours=hours)
        node = Node(
            id=node_id,
            kind=kind,
            tenant=self.memory.tenant,
            title=title,
            text=text,
            ts=ts,
            created_at=ts,
            updated_at=ts,
            **extra,
        )
        self._add(node)
        return node_id

    def edge(
        self,
        src: str,
        dst: str,
        kind: EdgeKind,
        w0: float | None = None,
        when: datetime | None = None,
    ) -> None:
        t = when or T0 + timedelta(days=30)
        self.memory.begin()
        self.memory.graph.put_edge(
            Edge(
                src=src,
                dst=dst,
                kind=kind,
                w0=EDGE_PRIOR_WEIGHT[kind] if w0 is None else w0,
                t_last=t,
                created_at=t,
            )
        )
        self.changes.append(self.memory.commit())

    def _add(self, node: Node) -> None:
        self.memory.begin()
        self.memory.graph.add_node(node)
        if node.kind.value in self.memory.indexes:
            vec = self.embedder.embed([node.embed_text])[0]
            self.memory.index(node.kind).upsert(node.id, vec)
        self.changes.append(self.memory.commit())


def eid(b: Builder, event_id: str) -> str:
    """The EVENT node id of a RawEvent id."""
    return event_node_id(b.memory.tenant, event_id)


def ask(b: Builder, text: str, config: ReadConfig | None = None, **kw: Any) -> QueryResponse:
    """One query with a fresh Reader."""
    return Reader(b.embedder, EngineConfig(read=config or ReadConfig())).query(
        b.memory, QueryRequest(text=text, **kw)
    )


def set_participants(b: Builder, who: dict[str, list[str]]) -> None:
    """Give events their participants (the Builder makes events without)."""
    b.memory.begin()
    for event_id, people in who.items():
        node = b.memory.graph.node(eid(b, event_id))
        b.memory.graph.replace_node(node.model_copy(update={"participants": people}))
    b.changes.append(b.memory.commit())


def hashing_settings(data_dir: Path) -> Settings:
    """The runtime's settings over ``data_dir``, with the hashing embedder and no sweeps."""
    return Settings(data_dir=data_dir, embedder="hashing", sweep_interval=0, log_level="warning")


def fold_into(data_dir: Path, events: Sequence[RawEvent]) -> Path:
    """Fold ``events`` in order into a store at ``data_dir`` as the runtime does; the store is
    closed after, for a reader (or a CLI) to open."""
    hub = build_hub(hashing_settings(data_dir), sinks=[])

    async def go() -> None:
        for event in events:
            await hub.fold(event)

    try:
        asyncio.run(go())
    finally:
        hub.store.close()
    return data_dir
