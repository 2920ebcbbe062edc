"""Privacy and nightly routes, answered by the hub (embedded: its store; a Kafka worker: its
changelogged state):

- ``GET  /tenants/{t}/privacy/layers`` / ``PUT`` (``{"layers": {...}, "purge": false}``)
- ``GET  /tenants/{t}/export``: everything held, inferred layers marked
- ``DELETE /tenants/{t}/events/{event_id}``: hard delete with cascade + tombstone
- ``DELETE /tenants/{t}?confirm=true``: forget the tenant entirely
- ``GET  /tenants/{t}/privacy/audit``: the deletion audit log (ids and hashes, no content)
- ``POST /tenants/{t}/consolidate``: one nightly run now (``{"budget_s": 60}``)
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException
from pydantic import BaseModel, Field

from stream_app.api.core import HubDep

router = APIRouter(tags=["privacy"])
Actor = Annotated[str | None, Header(alias="X-Foldmem-Actor", max_length=128)]


class LayersBody(BaseModel):
    layers: dict[str, bool] = Field(default_factory=dict)
    purge: bool = False


class ConsolidateBody(BaseModel):
    budget_s: float = Field(default=60.0, gt=0.0, le=3600.0)


@router.get("/tenants/{tenant}/privacy/layers")
async def get_layers(tenant: str, hub: HubDep) -> dict[str, bool]:
    return hub.layers(tenant)


@router.put("/tenants/{tenant}/privacy/layers")
async def put_layers(
    tenant: str, body: LayersBody, hub: HubDep, actor: Actor = None
) -> dict[str, bool]:
    return await hub.change_layers(tenant, body.layers, body.purge, actor or "api")


@router.get("/tenants/{tenant}/export")
async def get_export(tenant: str, hub: HubDep) -> dict[str, Any]:
    return hub.export(tenant)


@router.get("/tenants/{tenant}/privacy/audit")
async def get_audit(tenant: str, hub: HubDep) -> list[dict[str, Any]]:
    return hub.audit(tenant)


@router.delete("/tenants/{tenant}/events/{event_id:path}")
async def delete_event_route(
    tenant: str, event_id: str, hub: HubDep, actor: Actor = None
) -> dict[str, Any]:
    report = await hub.forget_event(tenant, event_id, actor or "api")
    return report.summary()


@router.delete("/tenants/{tenant}")
async def delete_tenant_route(
    tenant: str, hub: HubDep, confirm: bool = False, actor: Actor = None
) -> dict[str, Any]:
    if not confirm:
        raise HTTPException(400, "forgetting a tenant needs ?confirm=true")
    report = await hub.forget_tenant(tenant, actor or "api")
    summary = report.summary()
    summary.pop("deleted_ids", None)
    return summary


@router.post("/tenants/{tenant}/consolidate")
async def consolidate_route(
    tenant: str, hub: HubDep, body: ConsolidateBody | None = None
) -> dict[str, Any]:
    report = await hub.consolidate(tenant, (body or ConsolidateBody()).budget_s)
    return report.summary()
