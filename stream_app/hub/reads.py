"""The reads of the :class:`stream_app.hub.Hub` contract, written once over a hub's ``view``.

Both hubs inherit :class:`HubReads`: they differ in where a tenant's memory comes from
(``view``) and in how writes reach durable state, not in what a read returns. Reads run in
the event loop between the writers' awaits, so they see committed state without a lock.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from schemas.graph import NodeKind
from schemas.intents import Intent, IntentStatus
from schemas.query import QueryRequest, QueryResponse
from stream_app.hub import views
from topologies.engine import FoldEngine
from topologies.memory import ChangeSet, TenantMemory
from topologies.privacy import audit_log, export_tenant, layers
from topologies.read import Reader


class HubReads(ABC):
    engine: FoldEngine
    _reader: Reader | None = None

    @abstractmethod
    def view(self, tenant: str) -> TenantMemory:
        """The tenant's committed memory, to read only. NotFoundError if it has none."""

    @property
    def reader(self) -> Reader:
        """The read path (lexical indexes, timelines), built on first use, kept in step."""
        if self._reader is None:
            self._reader = Reader(self.engine.embedder)
        return self._reader

    def follow(self, changes: Iterable[ChangeSet]) -> None:
        """Keep the read path's indexes in step with committed ChangeSets."""
        if self._reader is not None:
            for change in changes:
                self._reader.apply(change)

    def now(self, tenant: str) -> datetime:
        return self.engine.stream_now(self.view(tenant))

    def graph(
        self,
        tenant: str,
        kind: NodeKind | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        return views.snapshot(self.view(tenant), self.engine.config, kind, since, until, limit)

    def node(self, tenant: str, node_id: str) -> dict[str, Any]:
        return views.neighbourhood(self.view(tenant), node_id, self.engine.config)

    def intents(self, tenant: str, status: IntentStatus | None = None) -> list[Intent]:
        return views.intents(self.view(tenant), status)

    def search(self, tenant: str, text: str, k: int = 10) -> list[dict[str, Any]]:
        return views.search(self.view(tenant), self.engine.embedder, text, k)

    def query(self, tenant: str, request: QueryRequest) -> QueryResponse:
        return self.reader.query(self.view(tenant), request)

    def layers(self, tenant: str) -> dict[str, bool]:
        return layers(self.view(tenant))

    def export(self, tenant: str) -> dict[str, Any]:
        return export_tenant(self.view(tenant))

    def audit(self, tenant: str) -> list[dict[str, Any]]:
        return audit_log(self.view(tenant))
