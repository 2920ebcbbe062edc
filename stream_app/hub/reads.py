"""The reads of the :class:`stream_app.hub.Hub` contract, written once over a hub's ``view``,
and :func:`fold_each`, a batch folded one event at a time through a hub's ``fold``.

Both hubs inherit :class:`HubReads`: they differ in where a tenant's memory comes from
(``view``) and in how writes reach durable state, not in what a read returns. Reads run in
the event loop between the writers' awaits, so they see committed state without a lock.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import structlog

from schemas.errors import FoldmemError
from schemas.events import RawEvent
from schemas.graph import NodeKind
from schemas.intents import Intent, IntentStatus
from schemas.query import QueryRequest, QueryResponse
from stream_app.hub import views
from stream_app.hub.protocol import (
    CheckpointFn,
    FoldFailedError,
    FoldOutcome,
    Hub,
    TransientError,
)
from topologies.engine import FoldEngine
from topologies.memory import ChangeSet, TenantMemory
from topologies.privacy import audit_log, export_tenant, layers
from topologies.read import Reader

log = structlog.get_logger(__name__)


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
            self._reader = Reader(self.engine.embedder, self.engine.config)
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
        return export_tenant(self.view(tenant), datetime.now(UTC))

    def audit(self, tenant: str) -> list[dict[str, Any]]:
        return audit_log(self.view(tenant))

    def folded_by(self, tenant: str) -> dict[str, Any]:
        return views.folded_by(self.view(tenant), self.engine.planner)


async def fold_each(
    hub: Hub, events: Sequence[RawEvent], checkpoints: CheckpointFn | None
) -> list[FoldOutcome]:
    """:meth:`stream_app.hub.Hub.fold_batch` as one ``hub.fold`` per event. A bug in a fold
    becomes a FoldFailedError outcome (logged with its traceback): the stream goes on."""
    outcomes: list[FoldOutcome] = []
    busy: dict[str, TransientError] = {}
    for event in events:
        if event.tenant in busy:
            outcomes.append(busy[event.tenant])
            continue
        try:
            outcomes.append(await hub.fold(event, checkpoints))
        except TransientError as exc:
            busy[event.tenant] = exc
            outcomes.append(exc)
        except FoldmemError as exc:
            outcomes.append(exc)
        except Exception as exc:  # a bug must not stop the stream; the event stays "stored"
            log.exception("fold_crashed", tenant=event.tenant, event_id=event.id)
            outcomes.append(FoldFailedError(f"{type(exc).__name__}: {exc}"))
    return outcomes
