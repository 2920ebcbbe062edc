"""`foldmem mcp`: the MCP server over stdio (for desktop clients) or streamable HTTP."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from stream_app.cli.common import DataDir, cli_errors, settings_for


def mcp_command(
    data_dir: DataDir = None,
    api: Annotated[
        str | None,
        typer.Option(
            "--api",
            help="Serve a running foldmem API (foldmem run / serve, a Kafka worker) at this "
            "URL instead of a data dir; its token is FOLDMEM_API_TOKEN.",
        ),
    ] = None,
    tenant: Annotated[
        str | None,
        typer.Option("--tenant", help="Whose memory the tools read by default."),
    ] = None,
    http: Annotated[
        bool, typer.Option("--http", help="Streamable HTTP on --port instead of stdio.")
    ] = False,
    port: Annotated[
        int | None, typer.Option("--port", help="HTTP port (default FOLDMEM_MCP_PORT, 8766).")
    ] = None,
    host: Annotated[
        str | None, typer.Option("--host", help="HTTP address (default FOLDMEM_API_HOST).")
    ] = None,
) -> None:
    """Serve the memory to agents over MCP: query, recall, intents, events, nodes, chains.

    Tools: query, recall, list_intents, set_intent_status, add_events, get_node, chain; the
    pending intents are a resource."""
    from stream_app.mcp.run import open_backend, serve_http
    from stream_app.mcp.server import build_server

    settings = settings_for(data_dir=data_dir, default_tenant=tenant, api_host=host, mcp_port=port)

    async def main() -> None:
        async with open_backend(settings, api, http=http) as backend:
            server = build_server(backend, settings.default_tenant)
            if http:
                await serve_http(server, settings, settings.mcp_port)
            else:
                await server.run_stdio_async()

    asyncio.run(main())


def register(app: typer.Typer) -> None:
    app.command("mcp")(cli_errors(mcp_command))
