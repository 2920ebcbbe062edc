"""Read-path routes: POST /tenants/{tenant}/query and POST /tenants/{tenant}/recall.

Query is a pure read (runs in the event loop between writers' awaits, like the core routes).
Recall is a write: it takes the tenant's lock and persists the recall history it changed.
Listed in ``stream_app.api.app.ROUTER_MODULES``; the bearer-token dependency is added there.
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from schemas.query import QueryRequest, QueryResponse, RecallRequest, RecallResponse
from stream_app.api.core import HubDep
from stream_app.embedded.hub import MemoryHub
from topologies.memory import TenantMemory

router = APIRouter(tags=["read"])


def run_query(hub: MemoryHub, tenant: str, request: QueryRequest) -> QueryResponse:
    return hub.reader.query(hub.view(tenant), request)


async def run_recall(hub: MemoryHub, tenant: str, request: RecallRequest) -> RecallResponse:
    """Cued recall under the tenant's lock; the recall history is persisted before returning."""
    reader = hub.reader

    async def attempt(memory: TenantMemory) -> RecallResponse:
        response, changes = reader.recall(memory, request)
        if not changes.empty:
            hub.persist(tenant, [changes])
        return response

    async with hub.lock(tenant):
        return await hub.retrying(tenant, attempt)


@router.post("/tenants/{tenant}/query", response_model=QueryResponse)
async def query(tenant: str, body: QueryRequest, hub: HubDep, request: Request) -> QueryResponse:
    """Hybrid retrieval + graph expansion; every hit cites the event ids behind it."""
    return run_query(hub, tenant, body)


@router.post("/tenants/{tenant}/recall", response_model=RecallResponse)
async def recall(tenant: str, body: RecallRequest, hub: HubDep) -> RecallResponse:
    """Cued recall (Hou et al.): memories with recall probability >= threshold (a write)."""
    return await run_recall(hub, tenant, body)
