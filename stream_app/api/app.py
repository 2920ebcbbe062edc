"""The FastAPI app: core routes plus optional routers other modules provide.

To plug in a router, add its module to :data:`ROUTER_MODULES`. A module provides either
``register(app: FastAPI) -> None`` or ``router: APIRouter``; its routes get the bearer-token
dependency (unless it registers them itself) and find the hub with
``stream_app.api.core.get_hub``. A listed module that does not exist (yet) is skipped.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

import structlog
from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse

from schemas.errors import ConfigError, FoldmemError, NotFoundError
from stream_app.api import errors as api_errors
from stream_app.api.core import health_router, require_token, router
from stream_app.api.guard import guard_middleware
from stream_app.embedded.hub import MemoryHub
from stream_app.settings import Settings, is_loopback

log = structlog.get_logger(__name__)

ROUTER_MODULES: list[str] = [
    "stream_app.api.read",  # read path: query / recall
    "stream_app.api.ingest",  # HTTP event ingest
    "stream_app.api.metrics",  # Prometheus metrics
    "stream_app.api.privacy",  # issue 7: layers, export, hard delete, forget, consolidate
]


def create_app(
    hub: MemoryHub, settings: Settings, router_modules: Sequence[str] | None = None
) -> FastAPI:
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
    api_errors.register(app)
    auth = [Depends(require_token)]
    app.include_router(health_router)
    app.include_router(router, dependencies=auth)
    for name in ROUTER_MODULES if router_modules is None else router_modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        register = getattr(module, "register", None)
        if callable(register):
            register(app)
        elif getattr(module, "router", None) is not None:
            app.include_router(module.router, dependencies=auth)
        log.debug("api_router_added", module=name)

    @app.exception_handler(NotFoundError)
    async def _not_found(request: Request, exc: NotFoundError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(FoldmemError)
    async def _foldmem_error(request: Request, exc: FoldmemError) -> JSONResponse:
        return api_errors.SafeJSONResponse({"detail": api_errors.snippet(str(exc), 500)}, 400)

    return app
