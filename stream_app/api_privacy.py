"""Privacy and nightly routes (issue 7). Listed in ``stream_app.api.ROUTER_MODULES``.

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

from stream_app.api_core import HubDep
from stream_app.privacy_hub import (
    change_layers,
    consolidate,
    export,
    forget_event,
    forget_whole_tenant,
)
from topologies.privacy import audit_log, layers

router = APIRouter(tags=["privacy"])
Actor = Annotated[str | None, Header(alias="X-Foldmem-Actor", max_length=128)]


class LayersBody(BaseModel):
    layers: dict[str, bool] = Field(default_factory=dict)
    purge: bool = False


class ConsolidateBody(BaseModel):
    budget_s: float = Field(default=60.0, gt=0.0, le=3600.0)


@router.get("/tenants/{tenant}/privacy/layers")
async def get_layers(tenant: str, hub: HubDep) -> dict[str, bool]:
    return layers(hub.view(tenant))


@router.put("/tenants/{tenant}/privacy/layers")
async def put_layers(
    tenant: str, body: LayersBody, hub: HubDep, actor: Actor = None
) -> dict[str, bool]:
    return await change_layers(hub, tenant, body.layers, body.purge, actor or "api")


@router.get("/tenants/{tenant}/export")
async def get_export(tenant: str, hub: HubDep) -> dict[str, Any]:
    return export(hub, tenant)


@router.get("/tenants/{tenant}/privacy/audit")
async def get_audit(tenant: str, hub: HubDep) -> list[dict[str, Any]]:
    return audit_log(hub.view(tenant))


@router.delete("/tenants/{tenant}/events/{event_id:path}")
async def delete_event_route(
    tenant: str, event_id: str, hub: HubDep, actor: Actor = None
) -> dict[str, Any]:
    report = await forget_event(hub, tenant, event_id, actor or "api")
    return report.summary()


@router.delete("/tenants/{tenant}")
async def delete_tenant_route(
    tenant: str, hub: HubDep, confirm: bool = False, actor: Actor = None
) -> dict[str, Any]:
    if not confirm:
        raise HTTPException(400, "forgetting a tenant needs ?confirm=true")
    report = await forget_whole_tenant(hub, tenant, actor or "api")
    summary = report.summary()
    summary.pop("deleted_ids", None)
    return summary


@router.post("/tenants/{tenant}/consolidate")
async def consolidate_route(
    tenant: str, hub: HubDep, body: ConsolidateBody | None = None
) -> dict[str, Any]:
    report = await consolidate(hub, tenant, (body or ConsolidateBody()).budget_s)
    return report.summary()
