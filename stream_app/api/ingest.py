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

from connectors.base import json_problem
from schemas.errors import FoldmemError
from schemas.events import RawEvent
from stream_app.api.core import check_bearer, get_hub, get_settings
from stream_app.embedded.store import TransientStoreError
from stream_app.ingest.admission import EventTimeError

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
    single = isinstance(payload, dict)
    items = [payload] if single else payload
    if not isinstance(items, list) or not items:
        raise HTTPException(422, "send one RawEvent object or a non-empty array of them")
    if len(items) > MAX_BATCH:
        raise HTTPException(413, f"at most {MAX_BATCH} events per request")
    from stream_app.embedded.runner import DeadLetter

    deadletter = DeadLetter(get_settings(request).deadletter_path)
    where = f"http:POST /tenants/{tenant}/events"
    results: list[ItemResult] = []
    for index, item in enumerate(items):
        event, errors = _validate(tenant, item)
        item_id = item.get("id") if isinstance(item, dict) else None
        if event is None:
            reason = "; ".join(f"{e.field}: {e.message}" for e in errors)
            deadletter.write(where, f"item {index}", reason)
            results.append(
                ItemResult(
                    index=index,
                    id=item_id if isinstance(item_id, str) else None,
                    status="rejected",
                    code=422,
                    errors=errors,
                )
            )
            continue
        try:
            result = await hub.fold(event)
        except EventTimeError as exc:
            deadletter.write(where, f"item {index} (event {event.id})", exc.reason)
            results.append(
                ItemResult(
                    index=index,
                    id=event.id,
                    status="rejected",
                    code=422,
                    errors=[FieldError(field=exc.field, message=exc.message)],
                )
            )
            continue
        except TransientStoreError as exc:  # another process kept the tenant: try again
            log.info("http_ingest_busy", tenant=tenant, event_id=event.id, error=str(exc))
            results.append(
                ItemResult(
                    index=index,
                    id=event.id,
                    status="unavailable",
                    code=503,
                    errors=[FieldError(field="event", message=str(exc))],
                )
            )
            continue
        except FoldmemError as exc:
            deadletter.write(where, f"item {index} (event {event.id})", str(exc), "fold_failed")
            results.append(
                ItemResult(
                    index=index,
                    id=event.id,
                    status="rejected",
                    code=422,
                    errors=[FieldError(field="event", message=str(exc))],
                )
            )
            continue
        results.append(
            ItemResult(
                index=index,
                id=event.id,
                status="duplicate" if result.status == "duplicate" else "folded",
                code=200,
            )
        )
    rejected = sum(1 for r in results if r.status == "rejected")
    unavailable = sum(1 for r in results if r.status == "unavailable")
    accepted = len(results) - rejected - unavailable
    log.info("http_ingest", tenant=tenant, accepted=accepted, rejected=rejected)
    response = IngestResponse(
        tenant=tenant,
        accepted=accepted,
        rejected=rejected,
        unavailable=unavailable,
        results=results,
    )
    if unavailable:  # send the batch again later: folded items come back as duplicates
        return JSONResponse(
            response.model_dump(mode="json"),
            status_code=503,
            headers={"Retry-After": str(RETRY_AFTER_S)},
        )
    code = 200 if rejected == 0 else (422 if accepted == 0 else 207)
    return JSONResponse(response.model_dump(mode="json"), status_code=code)


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
