"""A worker's read API: the embedded mode's FastAPI app over the worker's :class:`KafkaHub`
(events enter through Kafka, so no HTTP ingest), ``/metrics`` in Prometheus text, ``/ready``,
requests routed to the worker owning the tenant (:mod:`stream_app.kafka.routing`), served by
the API's server inside Faust's event loop."""

from __future__ import annotations

import structlog
from fastapi import FastAPI, Request, Response

from stream_app.api.app import create_app
from stream_app.api.guard import guard_outermost
from stream_app.api.server import ApiServer
from stream_app.kafka.hub import KafkaHub
from stream_app.kafka.metrics import CONTENT_TYPE, WorkerMetrics
from stream_app.kafka.routing import OwnerRouting, StateUnavailableError, unavailable
from stream_app.settings import Settings

log = structlog.get_logger(__name__)


def worker_api(
    hub: KafkaHub, settings: Settings, routing: OwnerRouting, metrics: WorkerMetrics
) -> FastAPI:
    api = create_app(hub, settings, ingest=False)

    @api.exception_handler(StateUnavailableError)
    async def not_here(request: Request, exc: StateUnavailableError) -> Response:
        return unavailable(str(exc))

    @api.get("/metrics", include_in_schema=False)
    async def render_metrics() -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE)

    @api.get("/ready", include_in_schema=False)
    async def ready() -> Response:
        ok = routing.ownership.ready
        return Response(b"ready" if ok else b"recovering", status_code=200 if ok else 503)

    api.middleware("http")(routing)
    guard_outermost(api)  # token and body caps before forwarding, too
    return api


async def serve(api: FastAPI, settings: Settings, routing: OwnerRouting) -> None:
    """Serve until the worker stops (a Faust task), with the embedded mode's server (bind
    error as a ConfigError, TCP_NODELAY, Faust keeps the signal handlers)."""
    server = ApiServer(
        api, settings.api_host, settings.api_port, hint="choose another port with FOLDMEM_API_PORT"
    )
    log.info("worker_api", url=routing.url, bind=f"{settings.api_host}:{settings.api_port}")
    try:
        await server.start()
    finally:
        await server.stop()
        await routing.aclose()
