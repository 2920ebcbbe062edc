"""Where the MCP tools read and write: a :class:`~stream_app.hub.Hub` in this process (an
embedded data dir) or a running foldmem API (``foldmem run``, ``foldmem serve`` or a Kafka
worker) over HTTP. Both answer the same JSON-ready dicts, those of the API's routes, so the
tools do not know which one they talk to.
"""

from __future__ import annotations

import contextlib
from typing import Any, Protocol

import httpx
import structlog

from schemas.errors import FoldmemError, InvalidTransitionError, NotFoundError
from schemas.intents import IntentStatus
from schemas.query import QueryRequest, RecallRequest
from stream_app.api.ingest import ingest_items
from stream_app.hub import Hub, explore
from stream_app.hub.gate import MemoryGate
from stream_app.settings import Settings
from topologies.intents import intent_view

log = structlog.get_logger(__name__)

MCP_SOURCE = "mcp:add_events ({tenant})"  # how the dead-letter file names this source


class BackendError(FoldmemError):
    """The memory answered with a refusal the caller can act on (the text says which)."""


class MemoryBackend(Protocol):
    async def tenants(self) -> list[str]: ...

    async def query(self, tenant: str, request: QueryRequest) -> dict[str, Any]: ...

    async def recall(self, tenant: str, request: RecallRequest) -> dict[str, Any]: ...

    async def intents(
        self, tenant: str, status: str, category: str | None, offset: int, limit: int
    ) -> dict[str, Any]: ...

    async def intent(self, tenant: str, intent_id: str) -> dict[str, Any]: ...

    async def set_intent_status(
        self, tenant: str, intent_id: str, status: IntentStatus, note: str
    ) -> dict[str, Any]: ...

    async def add_events(self, tenant: str, events: list[dict[str, Any]]) -> dict[str, Any]: ...

    async def node(self, tenant: str, node_id: str, limit: int) -> dict[str, Any]: ...

    async def chain(self, tenant: str, node_id: str) -> dict[str, Any]: ...


class HubBackend:
    """The tools over a hub in this process. ``ingest``: whether add_events may write (over
    HTTP only with a bearer token, as ``POST /tenants/{t}/events``)."""

    def __init__(self, hub: Hub, settings: Settings, *, ingest: bool = True) -> None:
        self.hub = hub
        self.settings = settings
        self.ingest = ingest

    def _reading(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Reads run between a fold's steps, as the API's do (stream_app/hub/gate.py)."""
        gate = getattr(self.hub, "gate", None)
        return gate.shared() if isinstance(gate, MemoryGate) else contextlib.nullcontext()

    async def tenants(self) -> list[str]:
        async with self._reading():
            return self.hub.tenants()

    async def query(self, tenant: str, request: QueryRequest) -> dict[str, Any]:
        async with self._reading():
            return self.hub.query(tenant, request).model_dump(mode="json")

    async def recall(self, tenant: str, request: RecallRequest) -> dict[str, Any]:
        return (await self.hub.recall(tenant, request)).model_dump(mode="json")

    async def intents(
        self, tenant: str, status: str, category: str | None, offset: int, limit: int
    ) -> dict[str, Any]:
        try:
            page = explore.Page(offset, limit)
            async with self._reading():
                return explore.intents_page(self.hub, tenant, status, category, page)
        except ValueError as exc:
            raise BackendError(str(exc)) from exc

    async def intent(self, tenant: str, intent_id: str) -> dict[str, Any]:
        async with self._reading():
            return explore.intent_detail(self.hub, tenant, intent_id)

    async def set_intent_status(
        self, tenant: str, intent_id: str, status: IntentStatus, note: str
    ) -> dict[str, Any]:
        messages = await self.hub.set_intent_status(tenant, intent_id, status, note)
        async with self._reading():
            memory = self.hub.view(tenant)
            intent = intent_view(memory, memory.graph.node(intent_id))
        return {
            "intent": intent.model_dump(mode="json"),
            "messages": [m.model_dump(mode="json") for m in messages],
        }

    async def add_events(self, tenant: str, events: list[dict[str, Any]]) -> dict[str, Any]:
        if not self.ingest:
            raise BackendError(
                "adding events over HTTP needs a bearer token: start the server with "
                "FOLDMEM_API_TOKEN set (as for POST /tenants/{tenant}/events)"
            )
        response = await ingest_items(self.hub, self.settings, tenant, events, MCP_SOURCE)
        return response.model_dump(mode="json")

    async def node(self, tenant: str, node_id: str, limit: int) -> dict[str, Any]:
        async with self._reading():
            return explore.neighbourhood(self.hub, tenant, node_id, limit)

    async def chain(self, tenant: str, node_id: str) -> dict[str, Any]:
        async with self._reading():
            return explore.chain(self.hub, tenant, node_id)


class ApiBackend:
    """The tools over a running foldmem API (the same routes the explorer page calls)."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    @classmethod
    def connect(cls, url: str, token: str | None, timeout_s: float = 30.0) -> ApiBackend:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return cls(httpx.AsyncClient(base_url=url.rstrip("/"), headers=headers, timeout=timeout_s))

    async def aclose(self) -> None:
        await self.client.aclose()

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = await self.client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise BackendError(
                f"the foldmem API at {self.client.base_url} did not answer: {exc}"
            ) from exc
        body = _json(response)
        if response.status_code < 300 or (isinstance(body, dict) and "results" in body):
            return body  # an ingest answer says per item what became of it (207, 422, 503)
        detail = str(body.get("detail", body) if isinstance(body, dict) else body)[:500]
        if response.status_code == 404:
            raise NotFoundError(detail)
        if response.status_code == 409:
            raise InvalidTransitionError(detail)
        raise BackendError(f"the foldmem API answered {response.status_code}: {detail}")

    async def tenants(self) -> list[str]:
        return [t["tenant"] for t in await self._call("GET", "/tenants")]

    async def query(self, tenant: str, request: QueryRequest) -> dict[str, Any]:
        body = request.model_dump(mode="json", exclude_unset=True)
        result: dict[str, Any] = await self._call("POST", f"/tenants/{tenant}/query", json=body)
        return result

    async def recall(self, tenant: str, request: RecallRequest) -> dict[str, Any]:
        body = request.model_dump(mode="json", exclude_unset=True)
        result: dict[str, Any] = await self._call("POST", f"/tenants/{tenant}/recall", json=body)
        return result

    async def intents(
        self, tenant: str, status: str, category: str | None, offset: int, limit: int
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"status": status, "offset": offset, "limit": limit}
        if category:
            params["category"] = category
        result: dict[str, Any] = await self._call(
            "GET", f"/tenants/{tenant}/explore/intents", params=params
        )
        return result

    async def intent(self, tenant: str, intent_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self._call(
            "GET", f"/tenants/{tenant}/explore/intents/{intent_id}"
        )
        return result

    async def set_intent_status(
        self, tenant: str, intent_id: str, status: IntentStatus, note: str
    ) -> dict[str, Any]:
        body = {"status": status.value, "note": note}
        result: dict[str, Any] = await self._call(
            "POST", f"/tenants/{tenant}/intents/{intent_id}/status", json=body
        )
        return result

    async def add_events(self, tenant: str, events: list[dict[str, Any]]) -> dict[str, Any]:
        try:
            result: dict[str, Any] = await self._call(
                "POST", f"/tenants/{tenant}/events", json=events
            )
        except NotFoundError as exc:  # a Kafka worker's API: events enter through Kafka
            raise BackendError(
                "this API takes no events over HTTP (a Kafka worker): produce them to the "
                "events topic (foldmem produce)"
            ) from exc
        return result

    async def node(self, tenant: str, node_id: str, limit: int) -> dict[str, Any]:
        result: dict[str, Any] = await self._call(
            "GET",
            f"/tenants/{tenant}/explore/nodes/{node_id}/neighbourhood",
            params={"limit": limit},
        )
        return result

    async def chain(self, tenant: str, node_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self._call(
            "GET", f"/tenants/{tenant}/explore/nodes/{node_id}/chain"
        )
        return result


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text
