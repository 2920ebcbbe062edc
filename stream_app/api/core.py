"""The core read API routes: health, tenants, graph snapshot, node, intents, search.

Every handler is ``async def``: it runs in the event loop, between the writers' awaits, and
so reads committed in-memory state without locks (see :mod:`stream_app.hub.reads`). Other
modules get the hub and settings with the dependencies :func:`get_hub` and
:func:`get_settings`.
"""

from __future__ import annotations

import hmac
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field

from schemas.errors import InvalidTransitionError, NotFoundError
from schemas.events import require_aware
from schemas.graph import NodeKind
from schemas.intents import Intent, IntentMessage, IntentStatus
from stream_app.hub import Hub, views
from stream_app.settings import Settings

_bearer = HTTPBearer(auto_error=False)

ACTIONS: dict[str, IntentStatus] = {
    "resolve": IntentStatus.RESOLVED,
    "reject": IntentStatus.REJECTED,
    "defer": IntentStatus.DEFERRED,
    "schedule": IntentStatus.ACTION_SCHEDULED,
    "reopen": IntentStatus.PENDING,
}


def get_hub(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def require_token(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """Bearer auth, enforced whenever a token is configured (always when not on loopback)."""
    expected = get_settings(request).token
    if expected is not None:
        check_bearer(credentials, expected)


def check_bearer(credentials: HTTPAuthorizationCredentials | None, expected: str) -> None:
    """401 unless the request's bearer token is ``expected`` (constant-time comparison)."""
    given = credentials.credentials if credentials is not None else ""
    if not hmac.compare_digest(given.encode(), expected.encode()):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "missing or wrong bearer token",
            headers={"WWW-Authenticate": "Bearer"},
        )


HubDep = Annotated[Hub, Depends(get_hub)]
SettingsDep = Annotated[Settings, Depends(get_settings)]


class Health(BaseModel):
    status: str = "ok"
    tenants: int
    planner: str
    embedder: str


class TenantInfo(BaseModel):
    tenant: str
    nodes: int
    edges: int
    nodes_by_kind: dict[str, int]
    events_folded: int
    open_intents: int
    clock: datetime | None


class StatusChange(BaseModel):
    status: IntentStatus | str = Field(
        description="pending, action_scheduled, resolved, rejected, deferred "
        "(or the verbs resolve, reject, defer, schedule, reopen)"
    )
    note: str = Field(default="", max_length=4096)


class StatusChanged(BaseModel):
    intent: Intent
    messages: list[IntentMessage]


def _not_found(exc: NotFoundError) -> HTTPException:
    return HTTPException(status.HTTP_404_NOT_FOUND, str(exc))


health_router = APIRouter(tags=["health"])
router = APIRouter(tags=["memory"])


@health_router.get("/health", response_model=Health)
async def health(hub: HubDep) -> Health:
    return Health(
        tenants=len(hub.tenants()), planner=hub.planner_name, embedder=hub.engine.embedder.model_id
    )


@health_router.get("/llm")
async def llm(hub: HubDep) -> dict[str, Any]:
    """The LLM path: planner in use, endpoint, output mode, breaker, token usage per tenant,
    and which planner folded each tenant's events (as the folds recorded it)."""
    from adapters.llm.factory import llm_status

    return {
        **llm_status(hub.engine.planner),
        "folded_by": {tenant: hub.folded_by(tenant) for tenant in hub.tenants()},
    }


@router.get("/tenants", response_model=list[TenantInfo])
async def tenants(hub: HubDep) -> list[TenantInfo]:
    found = []
    for name in hub.tenants():
        memory = hub.view(name)
        found.append(
            TenantInfo(
                tenant=name,
                nodes=memory.graph.count(),
                edges=memory.graph.edge_count(),
                nodes_by_kind={k.value: memory.graph.count(k) for k in NodeKind},
                events_folded=sum(1 for s in memory.event_states.values() if s == "folded"),
                open_intents=sum(
                    1
                    for n in memory.graph.nodes(NodeKind.INTENT)
                    if n.status
                    in (IntentStatus.PENDING, IntentStatus.ACTION_SCHEDULED, IntentStatus.DEFERRED)
                ),
                clock=views.stream_clock(memory),
            )
        )
    return found


@router.get("/tenants/{tenant}/graph")
async def graph(
    tenant: str,
    hub: HubDep,
    kind: NodeKind | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: Annotated[int, Query(ge=1, le=100_000)] = 10_000,
) -> dict[str, Any]:
    """A snapshot: nodes (by kind, by event/anchor time) and the edges among them."""
    for name, value in (("since", since), ("until", until)):
        if value is not None:
            aware(value, name)
    try:
        return hub.graph(tenant, kind, since, until, limit)
    except NotFoundError as exc:
        raise _not_found(exc) from exc


@router.get("/tenants/{tenant}/nodes/{node_id}")
async def node(tenant: str, node_id: str, hub: HubDep) -> dict[str, Any]:
    """A node with its edges and neighbours; ids of merged nodes resolve to the survivor."""
    try:
        return hub.node(tenant, node_id)
    except NotFoundError as exc:
        raise _not_found(exc) from exc


@router.get("/tenants/{tenant}/intents", response_model=list[Intent])
async def intents(tenant: str, hub: HubDep, status: IntentStatus | None = None) -> list[Intent]:
    try:
        return hub.intents(tenant, status)
    except NotFoundError as exc:
        raise _not_found(exc) from exc


@router.post("/tenants/{tenant}/intents/{intent_id}/status", response_model=StatusChanged)
async def change_intent_status(
    tenant: str, intent_id: str, change: StatusChange, hub: HubDep
) -> StatusChanged:
    """resolve / reject / defer / schedule an intent; the change is emitted like the runner's."""
    target = parse_status(change.status)
    try:
        messages = await hub.set_intent_status(tenant, intent_id, target, change.note)
        memory = hub.view(tenant)
        current = memory.graph.node(intent_id)
    except NotFoundError as exc:
        raise _not_found(exc) from exc
    except InvalidTransitionError as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc
    from topologies.intents import intent_view

    return StatusChanged(intent=intent_view(memory, current), messages=messages)


def aware(value: datetime, name: str) -> datetime:
    """422 for a time without an offset (every route and the CLI refuse it alike)."""
    try:
        return require_aware(value, name)
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from exc


def parse_status(value: IntentStatus | str) -> IntentStatus:
    if isinstance(value, IntentStatus):
        return value
    if value in ACTIONS:
        return ACTIONS[value]
    try:
        return IntentStatus(value)
    except ValueError as exc:
        known = ", ".join([*ACTIONS, *(s.value for s in IntentStatus)])
        raise HTTPException(422, f"unknown status {value[:40]!r}; use one of {known}") from exc


@router.get("/tenants/{tenant}/search")
async def search(
    tenant: str,
    hub: HubDep,
    q: Annotated[str, Query(min_length=1, max_length=2048)],
    k: Annotated[int, Query(ge=1, le=200)] = 10,
) -> dict[str, Any]:
    """Basic search over node texts (dense kNN + substring); the full read path is elsewhere."""
    try:
        return {"query": q, "hits": hub.search(tenant, q, k)}
    except NotFoundError as exc:
        raise _not_found(exc) from exc
