"""Serving the MCP server: over stdio (a desktop client starts ``foldmem mcp`` itself) or
streamable HTTP (``--http``) behind the API's request guard, so the same bearer token
(FOLDMEM_API_TOKEN) and loopback rule hold; and the backend it serves, opened from Settings.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator

import structlog
from mcp.server import MCPServer
from starlette.types import ASGIApp

from connectors.sinks import Sink
from schemas.errors import ConfigError
from stream_app.api.guard import RequestGuard
from stream_app.api.server import ApiServer
from stream_app.factory import build_hub
from stream_app.mcp.backends import ApiBackend, HubBackend, MemoryBackend
from stream_app.outbox.sinks import intents_log, webhook_sink
from stream_app.settings import Settings, is_loopback

log = structlog.get_logger(__name__)

MCP_PATH = "/mcp"


def quiet_sinks(settings: Settings) -> list[Sink]:
    """The embedded sinks without the terminal: over stdio, stdout is the protocol's."""
    sinks: list[Sink] = [intents_log(settings)]
    if settings.webhook_url:
        sinks.append(webhook_sink(settings))
    return sinks


@contextlib.asynccontextmanager
async def open_backend(
    settings: Settings, api_url: str | None, *, http: bool
) -> AsyncIterator[MemoryBackend]:
    """A running API's (``api_url``) or the data dir's hub; the hub's intent messages are
    delivered while the server runs, and it is closed on the way out."""
    if api_url:
        remote = ApiBackend.connect(api_url, settings.token)
        try:
            yield remote
        finally:
            await remote.aclose()
        return
    hub = build_hub(settings, sinks=quiet_sinks(settings))
    stop = asyncio.Event()
    delivering = asyncio.create_task(hub.outputs.run(stop))
    try:
        # over HTTP, writing events needs the token, as POST /tenants/{t}/events does
        yield HubBackend(hub, settings, ingest=not http or settings.token is not None)
    finally:
        stop.set()
        await delivering
        await hub.close_outputs()
        hub.store.close()


def guarded_app(server: MCPServer, settings: Settings) -> ASGIApp:
    """The streamable HTTP app behind the API's guard: bearer token, body cap."""
    if not is_loopback(settings.api_host) and settings.token is None:
        raise ConfigError("FOLDMEM_API_TOKEN is required when the MCP server is not on loopback")
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=settings.api_host)
    return RequestGuard(
        app,
        token=settings.token,
        max_body=settings.api_max_ingest_bytes,  # add_events carries batches
        max_ingest_body=settings.api_max_ingest_bytes,
    )


async def serve_http(server: MCPServer, settings: Settings, port: int) -> None:
    """Serve until SIGINT or SIGTERM."""
    http = ApiServer(
        guarded_app(server, settings),
        settings.api_host,
        port,
        log_level=settings.log_level,
        hint="choose another port with --port or FOLDMEM_MCP_PORT",
        lifespan="on",  # the SDK's session manager runs in the app's lifespan
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    http.start()
    await http.started()
    log.info("mcp_http", url=f"{http.url}{MCP_PATH}", token=settings.token is not None)
    await stop.wait()
    await http.stop()
