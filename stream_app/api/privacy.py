"""Privacy and nightly routes (issue 7). Listed in ``stream_app.api.app.ROUTER_MODULES``.

- ``GET  /tenants/{t}/privacy/layers`` / ``PUT`` (``{"layers": {...}, "purge": false}``)
- ``GET  /tenants/{t}/export``: everything held, inferred layers marked
- ``DELETE /tenants/{t}/events/{event_id}``: hard delete with cascade + tombstone
- ``DELETE /tenants/{t}?confirm=true``: forget the tenant entirely
- ``GET  /tenants/{t}/privacy/audit``: the deletion audit log (ids and hashes, no content)
- ``POST /tenants/{t}/consolidate``: one nightly run now (``{"budget_s": 60}``)

The writes go through :class:`stream_app.embedded.privacy.PrivacyOps`: the app's
``state.privacy`` when the server set one (a Kafka worker: its changelogged state), else
the embedded hub's store (:class:`stream_app.embedded.privacy.EmbeddedOps`).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, HTTPException, Request
from pydantic import BaseModel, Field

from stream_app.api.core import HubDep, get_hub
from stream_app.embedded.privacy import EmbeddedOps, PrivacyOps, export
from topologies.privacy import audit_log, layers

router = APIRouter(tags=["privacy"])
Actor = Annotated[str | None, Header(alias="X-Foldmem-Actor", max_length=128)]


def get_ops(request: Request) -> PrivacyOps:
    ops: PrivacyOps | None = getattr(request.app.state, "privacy", None)
    return ops if ops is not None else EmbeddedOps(get_hub(request))


OpsDep = Annotated[PrivacyOps, Depends(get_ops)]


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
    tenant: str, body: LayersBody, ops: OpsDep, actor: Actor = None
) -> dict[str, bool]:
    return await ops.change_layers(tenant, body.layers, body.purge, actor or "api")


@router.get("/tenants/{tenant}/export")
async def get_export(tenant: str, hub: HubDep) -> dict[str, Any]:
    return export(hub, tenant)


@router.get("/tenants/{tenant}/privacy/audit")
async def get_audit(tenant: str, hub: HubDep) -> list[dict[str, Any]]:
    return audit_log(hub.view(tenant))


@router.delete("/tenants/{tenant}/events/{event_id:path}")
async def delete_event_route(
    tenant: str, event_id: str, ops: OpsDep, actor: Actor = None
) -> dict[str, Any]:
    report = await ops.forget_event(tenant, event_id, actor or "api")
    return report.summary()


@router.delete("/tenants/{tenant}")
async def delete_tenant_route(
    tenant: str, ops: OpsDep, confirm: bool = False, actor: Actor = None
) -> dict[str, Any]:
    if not confirm:
        raise HTTPException(400, "forgetting a tenant needs ?confirm=true")
    report = await ops.forget_tenant(tenant, actor or "api")
    summary = report.summary()
    summary.pop("deleted_ids", None)
    return summary


@router.post("/tenants/{tenant}/consolidate")
async def consolidate_route(
    tenant: str, ops: OpsDep, body: ConsolidateBody | None = None
) -> dict[str, Any]:
    report = await ops.consolidate(tenant, (body or ConsolidateBody()).budget_s)
    return report.summary()
