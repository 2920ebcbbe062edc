"""The explorer's routes (``/tenants/{t}/explore/...``): bounded, paged views of a tenant's
memory for the ``/ui`` page and for any client that must not fetch a whole graph
(:mod:`stream_app.hub.explore`). The page's search uses ``POST /tenants/{t}/query`` and its
buttons ``POST /tenants/{t}/intents/{id}/status``; these routes only read.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query

from schemas.graph import NodeKind
from stream_app.api.core import HubDep
from stream_app.hub import explore

router = APIRouter(prefix="/tenants/{tenant}/explore", tags=["explore"])
tenants_router = APIRouter(tags=["explore"])

Offset = Annotated[int, Query(ge=0, le=10_000_000)]
Limit = Annotated[int, Query(ge=1, le=explore.MAX_PAGE)]


@tenants_router.get("/explore/tenants")
async def tenants(hub: HubDep) -> list[dict[str, Any]]:
    """Tenants with their node and open-intent counts (cheap: no pass over a graph)."""
    return explore.tenants(hub)


@router.get("/intents")
async def intents(
    tenant: str,
    hub: HubDep,
    status: Annotated[
        str | None,
        Query(
            max_length=40,
            description="a board column (pending, scheduled, deferred, resolved, closed), "
            "an intent status, or all",
        ),
    ] = None,
    category: Annotated[str | None, Query(max_length=80)] = None,
    offset: Offset = 0,
    limit: Limit = 50,
) -> dict[str, Any]:
    """One page of the intents board: soonest deadline first, with column counts."""
    try:
        return explore.intents_page(hub, tenant, status, category, explore.Page(offset, limit))
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from exc


@router.get("/intents/{intent_id}")
async def intent(tenant: str, intent_id: str, hub: HubDep) -> dict[str, Any]:
    """An intent with its evidence events, supporting concepts and why it emerged."""
    return explore.intent_detail(hub, tenant, intent_id)


@router.get("/events")
async def events(
    tenant: str,
    hub: HubDep,
    ids: Annotated[list[str], Query(max_length=explore.MAX_PAGE, description="RawEvent ids")],
) -> dict[str, Any]:
    """The events behind cited RawEvent ids (title, time, source), oldest first."""
    return explore.events(hub, tenant, ids)


@router.get("/nodes")
async def nodes(
    tenant: str,
    hub: HubDep,
    kind: NodeKind | None = None,
    q: Annotated[str | None, Query(max_length=200)] = None,
    chained: Annotated[
        bool, Query(description="only the newest revision of each supersedes chain")
    ] = False,
    offset: Offset = 0,
    limit: Limit = 50,
) -> dict[str, Any]:
    """Nodes of a kind whose title or text holds ``q``, newest first, one page."""
    return explore.nodes_page(hub, tenant, kind, q, chained, explore.Page(offset, limit))


@router.get("/nodes/{node_id}/neighbourhood")
async def neighbourhood(
    tenant: str,
    node_id: str,
    hub: HubDep,
    limit: Annotated[int, Query(ge=1, le=explore.MAX_NEIGHBOURS)] = 40,
    kind: NodeKind | None = None,
) -> dict[str, Any]:
    """A node and its strongest recent neighbours (at most ``limit``), for a drawing."""
    return explore.neighbourhood(hub, tenant, node_id, limit, kind)


@router.get("/nodes/{node_id}/chain")
async def chain(tenant: str, node_id: str, hub: HubDep) -> dict[str, Any]:
    """A belief's supersedes chain, oldest first."""
    return explore.chain(hub, tenant, node_id)
