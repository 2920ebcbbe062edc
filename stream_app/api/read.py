"""Read-path routes: POST /tenants/{tenant}/query and POST /tenants/{tenant}/recall.

Query is a pure read (runs in the event loop between writers' awaits, like the core routes).
Recall is a write: the hub takes the tenant's lock and persists the recall history it changed.
"""

from __future__ import annotations

from fastapi import APIRouter

from schemas.query import QueryRequest, QueryResponse, RecallRequest, RecallResponse
from stream_app.api.core import HubDep

router = APIRouter(tags=["read"])


@router.post("/tenants/{tenant}/query", response_model=QueryResponse)
async def query(tenant: str, body: QueryRequest, hub: HubDep) -> QueryResponse:
    """Hybrid retrieval + graph expansion; every hit cites the event ids behind it."""
    return hub.query(tenant, body)


@router.post("/tenants/{tenant}/recall", response_model=RecallResponse)
async def recall(tenant: str, body: RecallRequest, hub: HubDep) -> RecallResponse:
    """Cued recall (Hou et al.): memories with recall probability >= threshold (a write)."""
    return await hub.recall(tenant, body)
