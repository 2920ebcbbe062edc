"""HTTP event ingest: ``POST /tenants/{tenant}/events`` with one RawEvent or a list of them.

- Always authenticated: the bearer token FOLDMEM_API_TOKEN is required even on loopback;
  with no token configured the endpoint answers 403 (it would let any local process write).
- A missing ``tenant`` is taken from the path; a different one is rejected.
- Each item is validated on its own: invalid items are reported with their field errors
  (``code`` 422) and written to the dead-letter file; valid ones are folded through the hub
  (``folded``, or ``duplicate`` when the id was folded before).
- Another process writing the tenant at the same time (a running ``foldmem run``) is waited
  for (the hub's cross-process lock, up to FOLDMEM_WRITE_LOCK_TIMEOUT_S per item); an item
  that still could not be folded is ``unavailable`` (code 503), never ``rejected``.
- Response code: 503 with ``Retry-After`` when some item was unavailable (send the batch
  again: what was folded comes back as ``duplicate``); else 200 when every item was accepted,
  207 when some were rejected, 422 when none was accepted; 413 for bodies over 8 MiB or more
  than 1000 events.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import orjson
import structlog
from fastapi import APIRouter, Depends, HTTPException, Request, status
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ValidationError

from connectors.base import BadItem, json_problem
from schemas.errors import FoldmemError
from schemas.events import RawEvent
from stream_app.api.core import check_bearer, get_hub, get_settings
from stream_app.hub import Hub
from stream_app.hub.protocol import TransientError
from stream_app.ingest.admission import EventTimeError
from stream_app.ingest.deadletter import DeadLetter
from stream_app.ingest.driver import BusyPolicy, IngestDriver
from stream_app.ingest.sources import Batch, Outcome, Read
from stream_app.ingest.targets import HubTarget
from stream_app.settings import Settings
from topologies.engine import FoldResult

log = structlog.get_logger(__name__)

MAX_BATCH = 1000
RETRY_AFTER_S = 5
_bearer = HTTPBearer(auto_error=False)


async def require_token(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    expected = get_settings(request).token
    if expected is None:
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            "event ingest over HTTP needs a bearer token: set FOLDMEM_API_TOKEN on the server "
            "and send 'Authorization: Bearer <token>'",
        )
    check_bearer(credentials, expected)


class FieldError(BaseModel):
    field: str
    message: str


class ItemResult(BaseModel):
    index: int
    id: str | None = None
    status: Literal["folded", "duplicate", "rejected", "unavailable"]
    code: int
    errors: list[FieldError] = []


class IngestResponse(BaseModel):
    tenant: str
    accepted: int
    rejected: int
    unavailable: int = 0  # not folded now (the tenant was busy): send them again
    results: list[ItemResult]


router = APIRouter(tags=["ingest"])

_BODY_DOC: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "oneOf": [
                        {"type": "object", "description": "one RawEvent"},
                        {"type": "array", "items": {"type": "object"}, "maxItems": MAX_BATCH},
                    ]
                }
            }
        },
    }
}


@router.post(
    "/tenants/{tenant}/events",
    response_model=IngestResponse,
    openapi_extra=_BODY_DOC,
    responses={
        207: {"model": IngestResponse},
        422: {"model": IngestResponse},
        503: {"model": IngestResponse},
    },
)
async def ingest_events(tenant: str, request: Request) -> JSONResponse:
    """Fold one RawEvent (a JSON object) or a batch (a JSON array) into the tenant's memory."""
    hub = get_hub(request)
    body = await request.body()  # at most FOLDMEM_API_MAX_INGEST_BYTES (stream_app.api.guard)
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise HTTPException(400, f"body is not JSON: {json_problem(body, exc)}") from exc
    if isinstance(payload, dict):
        payload = [payload]
    if not isinstance(payload, list) or not payload:
        raise HTTPException(422, "send one RawEvent object or a non-empty array of them")
    if len(payload) > MAX_BATCH:
        raise HTTPException(413, f"at most {MAX_BATCH} events per request")
    response = await ingest_items(hub, get_settings(request), tenant, payload)
    if response.unavailable:  # send the batch again later: folded items come back as duplicates
        return JSONResponse(
            response.model_dump(mode="json"),
            status_code=503,
            headers={"Retry-After": str(RETRY_AFTER_S)},
        )
    code = 200 if response.rejected == 0 else (422 if response.accepted == 0 else 207)
    return JSONResponse(response.model_dump(mode="json"), status_code=code)


async def ingest_items(
    hub: Hub,
    settings: Settings,
    tenant: str,
    payload: list[Any],
    source: str = "http:POST /tenants/{tenant}/events",
) -> IngestResponse:
    """Validate each item as a RawEvent of ``tenant`` and fold the valid ones through the one
    ingest driver: what ``POST /tenants/{tenant}/events`` and the MCP tool ``add_events`` do.
    Invalid items are dead-lettered (under ``source``) and reported with their field errors."""
    results: dict[int, ItemResult] = {}
    items: list[RawEvent | BadItem] = []
    for index, item in enumerate(payload):
        event, errors = _validate(tenant, item)
        if event is not None:
            items.append(event)
            continue
        item_id = item.get("id") if isinstance(item, dict) else None
        results[index] = ItemResult(
            index=index,
            id=item_id if isinstance(item_id, str) else None,
            status="rejected",
            code=422,
            errors=errors,
        )
        reason = "; ".join(f"{e.field}: {e.message}" for e in errors)
        items.append(BadItem(f"item {index}", reason))

    def record(read: Read, outcome: Outcome) -> None:
        assert isinstance(read.item, RawEvent)
        results[read.position] = _result(read.position, read.item, outcome)

    driver = IngestDriver(
        HubTarget(hub),
        deadletter=DeadLetter(settings.deadletter_path),
        busy=BusyPolicy(attempts=1),  # a busy tenant: the client sends the batch again
        max_tenants=1,
        batch_size=MAX_BATCH,
        on_outcome=record,
    )
    await driver.run([Batch(source.format(tenant=tenant), items)])
    results = dict(sorted(results.items()))
    rejected = sum(1 for r in results.values() if r.status == "rejected")
    unavailable = sum(1 for r in results.values() if r.status == "unavailable")
    accepted = len(results) - rejected - unavailable
    log.info("http_ingest", tenant=tenant, accepted=accepted, rejected=rejected)
    return IngestResponse(
        tenant=tenant,
        accepted=accepted,
        rejected=rejected,
        unavailable=unavailable,
        results=list(results.values()),
    )


def _result(index: int, event: RawEvent, outcome: Outcome) -> ItemResult:
    """What became of a valid item: folded (or a duplicate), refused, failed, or not folded
    now because another process kept the tenant."""
    if isinstance(outcome, TransientError):
        log.info("http_ingest_busy", tenant=event.tenant, event_id=event.id, error=str(outcome))
        error = FieldError(field="event", message=str(outcome))
        return ItemResult(index=index, id=event.id, status="unavailable", code=503, errors=[error])
    if isinstance(outcome, EventTimeError):
        error = FieldError(field=outcome.field, message=outcome.message)
        return ItemResult(index=index, id=event.id, status="rejected", code=422, errors=[error])
    if isinstance(outcome, FoldmemError):
        error = FieldError(field="event", message=str(outcome))
        return ItemResult(index=index, id=event.id, status="rejected", code=422, errors=[error])
    duplicate = isinstance(outcome, FoldResult) and outcome.status == "duplicate"
    status: Literal["folded", "duplicate"] = "duplicate" if duplicate else "folded"
    return ItemResult(index=index, id=event.id, status=status, code=200)


def _validate(tenant: str, item: Any) -> tuple[RawEvent | None, list[FieldError]]:
    if not isinstance(item, dict):
        return None, [FieldError(field="event", message="expected a JSON object")]
    given = item.get("tenant")
    if given is not None and given != tenant:
        message = f"{given!r} differs from the tenant in the path ({tenant!r})"
        return None, [FieldError(field="tenant", message=message)]
    try:
        return RawEvent.model_validate({**item, "tenant": tenant}), []
    except ValidationError as exc:
        return None, [
            FieldError(
                field=".".join(str(p) for p in err.get("loc", ())) or "event",
                message=err.get("msg", "invalid"),
            )
            for err in exc.errors()
        ]
