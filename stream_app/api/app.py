"""The FastAPI app over a :class:`stream_app.hub.Hub`: the core routes (health, tenants,
graph, nodes, intents, search), the read path (query, recall), the explorer's bounded views
and its page (``/ui``), the user's privacy and nightly routes and, unless ``ingest=False`` (a
Kafka worker: events enter through Kafka), HTTP event ingest. Every route but ``/health``
and the page's static files sits behind the request guard (token, body caps) and finds the
hub with :func:`stream_app.api.core.get_hub`.
"""

from __future__ import annotations

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.middleware import Middleware
from starlette.types import Scope

from schemas.errors import ConfigError, FoldmemError, NotFoundError
from stream_app.api import core, errors, explore, privacy, read
from stream_app.api import ingest as http_ingest
from stream_app.api.guard import OPEN_PATHS, guard_middleware
from stream_app.hub import Hub
from stream_app.hub.gate import GateMiddleware, MemoryGate
from stream_app.settings import Settings, is_loopback
from stream_app.ui import mount_ui


def is_read(scope: Scope) -> bool:
    """A request that only reads tenant memory: it runs between a fold's steps (see
    stream_app/hub/gate.py). ``/health`` reads none and answers during a step."""
    path = str(scope.get("path", ""))
    if path in OPEN_PATHS:
        return False
    method = scope.get("method")
    return method in ("GET", "HEAD") or (method == "POST" and path.endswith("/query"))


def create_app(hub: Hub, settings: Settings, *, ingest: bool = True) -> FastAPI:
    if not is_loopback(settings.api_host) and settings.token is None:
        raise ConfigError("FOLDMEM_API_TOKEN is required when the API is not bound to loopback")
    app = FastAPI(
        title="foldmem",
        version="0.1.0",
        description="Read API of foldmem: a tenant's memory graph, its intents and search.",
    )
    app.state.hub = hub
    app.state.settings = settings
    guard = guard_middleware(
        settings.token, settings.api_max_body_bytes, settings.api_max_ingest_bytes
    )
    app.user_middleware.insert(0, guard)  # token, body caps, text check before any route
    gate = getattr(hub, "gate", None)
    if isinstance(gate, MemoryGate):  # requests run between a fold's steps (hub/gate.py)
        app.user_middleware.append(Middleware(GateMiddleware, gate=gate, holds=is_read))
    errors.register(app)
    auth = [Depends(core.require_token)]
    app.include_router(core.health_router)
    app.include_router(core.router, dependencies=auth)
    app.include_router(read.router, dependencies=auth)
    app.include_router(explore.router, dependencies=auth)
    app.include_router(explore.tenants_router, dependencies=auth)
    if ingest:  # its own auth: a token always
        app.include_router(http_ingest.router, dependencies=[Depends(http_ingest.require_token)])
    app.include_router(privacy.router, dependencies=auth)
    mount_ui(app)  # the explorer page: static files, open; its API calls carry the token

    @app.exception_handler(NotFoundError)
    async def _not_found(request: Request, exc: NotFoundError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(FoldmemError)
    async def _foldmem_error(request: Request, exc: FoldmemError) -> JSONResponse:
        return errors.SafeJSONResponse({"detail": errors.snippet(str(exc), 500)}, 400)

    return app
