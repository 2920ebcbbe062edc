"""Which worker owns a tenant, and the API requests routed to it.

A tenant lives on the partition of its events (key = tenant), and its state on the same
changelog partition; the worker whose assignment holds that partition owns the tenant.
:class:`OwnerRouting` answers ``/tenants/{tenant}/...`` locally when this worker owns the
tenant, forwards the request to the owner otherwise (the assignor's table metadata gives its
URL), and answers 503 with ``Retry-After`` while state is recovering or a tenant is moving.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any, cast

import httpx
import orjson
from fastapi import Request, Response
from faust.types import TP

from stream_app.hub.protocol import TransientError
from stream_app.kafka.topics import partition_for

FORWARDED = "x-foldmem-forwarded"
_TENANT_PATH = re.compile(r"^/tenants/([^/]+)(?:/|$)")
_DROPPED_HEADERS = {"content-length", "transfer-encoding", "connection", "content-encoding"}


class StateUnavailableError(TransientError):
    """This worker cannot serve the tenant now: its state is being recovered, or the tenant's
    partition is not (or no longer) its own. The API answers 503 with ``Retry-After``."""


class Ownership:
    """This worker's share of the partitions, read from the Faust app's assignor."""

    def __init__(self, app: Any, events_topic: str, changelog_topic: str, partitions: int) -> None:
        self.app = app
        self.events_topic = events_topic
        self.changelog_topic = changelog_topic
        self.partitions = partitions

    def tenant_partition(self, tenant: str) -> int:
        return partition_for(tenant, self.partitions)

    def owns(self, partition: int) -> bool:
        return TP(self.events_topic, partition) in self.app.assignor.assigned_actives()

    def owns_tenant(self, tenant: str) -> bool:
        """This worker owns the tenant's partition and its state is recovered."""
        return self.ready and self.owns(self.tenant_partition(tenant))

    def owner_url(self, tenant: str) -> str | None:
        """The API URL of the worker owning the tenant's partition (None while unassigned)."""
        partition = self.tenant_partition(tenant)
        for url, topics in self.app.assignor.table_metadata(self.changelog_topic).items():
            if partition in topics.get(self.changelog_topic, ()):
                return str(url)
        return None

    @property
    def ready(self) -> bool:
        """State recovery is complete and no rebalance is under way."""
        recovery = cast(Any, self.app.tables).recovery
        return bool(
            recovery.completed.is_set() and not recovery.in_recovery and not self.app.rebalancing
        )


def unavailable(reason: str) -> Response:
    return Response(
        orjson.dumps({"detail": reason}),
        status_code=503,
        media_type="application/json",
        headers={"Retry-After": "1"},
    )


class OwnerRouting:
    """The API middleware that sends each tenant's requests to the worker owning it."""

    def __init__(self, ownership: Ownership, url: str) -> None:
        self.ownership = ownership
        self.url = url  # this worker's API, as other workers reach it
        self._http: httpx.AsyncClient | None = None

    async def __call__(
        self, request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        ownership = self.ownership
        match = _TENANT_PATH.match(request.url.path)
        if match is None:
            if request.url.path.rstrip("/") == "/tenants" and not ownership.ready:
                return unavailable("state recovery in progress")
            return await call_next(request)
        if not ownership.ready:
            return unavailable("state recovery in progress")
        tenant = match.group(1)
        owner = ownership.owner_url(tenant)
        if owner is None:
            return unavailable(f"no worker owns tenant {tenant!r} yet")
        if owner.rstrip("/") == self.url or request.headers.get(FORWARDED):
            if not ownership.owns(ownership.tenant_partition(tenant)):
                return unavailable(f"tenant {tenant!r} is moving between workers")
            return await call_next(request)
        return await self.forward(owner, request)

    async def forward(self, owner: str, request: Request) -> Response:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=30.0)
        headers = {
            k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")
        }
        headers[FORWARDED] = self.url
        try:
            reply = await self._http.request(
                request.method,
                owner.rstrip("/") + request.url.path,
                params=request.url.query,
                headers=headers,
                content=await request.body(),
            )
        except httpx.HTTPError as exc:
            return unavailable(f"owner {owner} unreachable: {exc}")
        return Response(
            reply.content,
            status_code=reply.status_code,
            headers={k: v for k, v in reply.headers.items() if k.lower() not in _DROPPED_HEADERS},
        )

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None
