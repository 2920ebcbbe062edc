"""The `foldmem` command line: the runtime's own commands (run, serve, status, intents,
graph export, intent status, sweep) here, the rest in the modules :func:`build_app` adds
(read, connectors, Kafka, privacy). FoldmemErrors become a one-line message and exit code 2,
never a traceback (:mod:`stream_app.cli.common`).
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections import Counter
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import click
import orjson
import typer
import typer.exceptions

from schemas.errors import FoldmemError, NotFoundError
from schemas.intents import IntentStatus
from stream_app.cli import connectors, kafka, mcp, privacy, read
from stream_app.cli.common import (
    DataDir,
    JsonOpt,
    TenantOpt,
    cli_errors,
    echo_json,
    settings_for,
)
from stream_app.embedded.store import Store
from stream_app.hub import views
from stream_app.settings import Settings
from topologies.memory import TenantMemory


class ExportFormat(StrEnum):
    json = "json"
    graphml = "graphml"


def _read_store(settings: Settings) -> Store:
    return Store(settings.db_path, readonly=True)


def _load(store: Store, tenant: str) -> TenantMemory:
    if tenant not in store.tenants():
        known = ", ".join(store.tenants()) or "none yet"
        raise NotFoundError(f"tenant {tenant!r} not found (tenants: {known})")
    memory, _ = store.load_tenant(tenant, store.embedder_dim or 8, vectors=False)
    return memory


# ---------------------------------------------------------------------- commands
def run(
    sources: Annotated[
        list[str] | None,
        typer.Argument(
            help="Event files or folders (RawEvent JSONL, .ics, .eml, mbox, Maildir, Slack "
            "export, WhatsApp, chat JSONL) or imaps://user@host/FOLDER; see docs/connectors.md."
        ),
    ] = None,
    once: Annotated[
        bool, typer.Option("--once", help="Exit when the sources are drained.")
    ] = False,
    data_dir: DataDir = None,
    tenant: Annotated[
        str | None, typer.Option("--tenant", help="Tenant of events that carry none.")
    ] = None,
    api_port: Annotated[
        int | None, typer.Option("--api-port", help="Read API port (with --once: serve on it).")
    ] = None,
    api: Annotated[
        bool | None,
        typer.Option(
            "--api/--no-api",
            help="Serve the read API (default: yes, but not with --once unless --api-port).",
        ),
    ] = None,
    kind: Annotated[
        str | None, typer.Option("--kind", help="Source kind (default: detect from the file).")
    ] = None,
    progress: Annotated[
        bool | None, typer.Option("--progress/--no-progress", help="Progress bar (TTY default).")
    ] = None,
) -> None:
    """Fold events from SOURCE files as they arrive (tail -f), print intents, serve the API."""
    from stream_app.api.app import create_app
    from stream_app.embedded.runner import Runner, RunOptions, run_blocking, run_lock
    from stream_app.factory import build_hub

    settings = settings_for(data_dir=data_dir, api_port=api_port, default_tenant=tenant)
    given = sources or []
    options = RunOptions(
        sources=[Path(s) for s in given if not s.startswith(("imap://", "imaps://"))],
        urls=[s for s in given if s.startswith(("imap://", "imaps://"))],
        once=once,
        tenant=tenant,
        serve_api=api if api is not None else (not once or api_port is not None),
        kind=kind,
        progress=progress,
    )
    with run_lock(settings.run_lock_path):
        hub = build_hub(settings)
        try:
            stats = run_blocking(
                lambda: Runner(
                    settings, hub, options, app_factory=lambda: create_app(hub, settings)
                )
            )
        finally:
            from stream_app.factory import close_outputs

            close_outputs(hub)
            hub.store.close()
    typer.echo(f"done: {stats.run_line()}", err=True)


def serve(
    data_dir: DataDir = None,
    api_port: Annotated[int | None, typer.Option("--api-port", help="Port to bind.")] = None,
    api_host: Annotated[str | None, typer.Option("--api-host", help="Address to bind.")] = None,
) -> None:
    """Serve the read API over a data dir (reloads what a running `foldmem run` writes)."""
    from stream_app.api.app import create_app
    from stream_app.api.server import ApiServer
    from stream_app.factory import build_hub

    settings = settings_for(data_dir=data_dir, api_port=api_port, api_host=api_host)
    hub = build_hub(settings)

    async def main() -> None:
        server = ApiServer(
            create_app(hub, settings),
            settings.api_host,
            settings.api_port,
            log_level=settings.log_level,
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        server.start()
        await server.started()
        delivering = asyncio.create_task(hub.outputs.run(stop))  # what POST /events emits
        typer.echo(f"read API on {server.url} (OpenAPI: {server.url}/docs); Ctrl-C to stop")
        await stop.wait()
        await server.stop()
        await delivering
        await hub.outputs.close()

    try:
        asyncio.run(main())
    finally:
        hub.store.close()


def status(data_dir: DataDir = None, as_json: JsonOpt = False) -> None:
    """Tenants, node and edge counts by kind, events folded, intents by status, planner."""
    settings = settings_for(data_dir=data_dir)
    with _read_store(settings) as store:
        report: dict[str, Any] = {
            "data_dir": str(settings.data_dir),
            "planner": planner_description(settings),
            "embedder": store.embedder_model,
            "tenants": {},
        }
        for tenant in store.tenants():
            counts = store.counts(tenant)
            counts["intents"] = store.intent_counts(tenant)
            counts["llm_usage"] = usage_totals(store.usage_rows(tenant))
            counts["folded_by"] = store.folded_by(tenant)
            report["tenants"][tenant] = counts
    if as_json:
        echo_json(report)
        return
    typer.echo(f"data dir: {report['data_dir']}")
    typer.echo(f"planner (these settings): {report['planner']}   embedder: {report['embedder']}")
    if not report["tenants"]:
        typer.echo("no tenants yet")
    for tenant, counts in report["tenants"].items():
        events = counts["events"]
        typer.echo(
            f"\ntenant {tenant}: {events.get('folded', 0)} events folded"
            + (f", {events['stored']} stored (not yet folded)" if events.get("stored") else "")
        )
        typer.echo("  nodes:   " + _fmt(counts["nodes"]))
        typer.echo("  edges:   " + _fmt(counts["edges"]))
        typer.echo("  intents: " + _fmt(counts["intents"]))
        typer.echo("  folded by: " + _folded_by(counts["folded_by"]))
        usage = counts["llm_usage"]
        if usage.get("events"):
            typer.echo(
                f"  llm:     {usage['calls']} calls for {usage['events']} events, "
                f"{usage['tokens_in']} tokens in, {usage['tokens_out']} out "
                f"({(usage['tokens_in'] + usage['tokens_out']) / usage['events']:.0f} per event)"
            )


def _folded_by(report: dict[str, Any]) -> str:
    """``llm 230, heuristic 40 (llm fallbacks: invalid 20, error 5)``: from the data dir."""
    planners = report["planners"]
    parts = [f"{name} {n}" for name, n in sorted(planners.items(), key=lambda i: (-i[1], i[0]))]
    if report["uncounted"]:
        parts.append(f"not recorded {report['uncounted']}")
    text = ", ".join(parts) or "-"
    fallbacks = report["llm_fallbacks"]
    if fallbacks:
        text += " (llm fallbacks: " + ", ".join(f"{k} {v}" for k, v in fallbacks.items()) + ")"
    return text


def planner_description(settings: Settings) -> str:
    """Which planner `run` would use with these settings, and why."""
    if settings.planner not in ("auto", "llm"):
        return settings.planner
    config = settings.llm_config()
    if not config.enabled:
        return "heuristic (no FOLDMEM_LLM_BASE_URL and no FOLDMEM_LLM_API_KEY)"
    base = config.base_url or "https://api.openai.com/v1"
    return f"llm ({config.model} at {base}; heuristic fallback)"


def usage_totals(rows: list[tuple[str, str, dict[str, int]]]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for _, _, counters in rows:
        for name, value in counters.items():
            totals[name] = totals.get(name, 0) + int(value)
    return totals


def _fmt(counts: dict[str, int]) -> str:
    if not counts:
        return "-"
    total = sum(counts.values())
    return f"{total} (" + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + ")"


def intents(
    data_dir: DataDir = None,
    tenant: TenantOpt = None,
    status_filter: Annotated[
        IntentStatus | None, typer.Option("--status", help="Only intents with this status.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List intents (all tenants unless --tenant)."""
    settings = settings_for(data_dir=data_dir)
    with _read_store(settings) as store:
        names = [tenant] if tenant else store.tenants()
        found = [i for name in names for i in views.intents(_load(store, name), status_filter)]
    if as_json:
        for intent in found:
            typer.echo(intent.model_dump_json())
        return
    if not found:
        typer.echo("no intents")
        return
    for intent in found:
        due = f" due {intent.deadline.date().isoformat()}" if intent.deadline else ""
        typer.echo(
            f"{intent.id}  [{intent.tenant}] {intent.status.value:<16} {intent.title!r}"
            f" ({intent.category}){due}"
        )
    typer.echo(f"\n{len(found)} intents: " + _fmt(dict(Counter(i.status.value for i in found))))


def graph_export(
    tenant: Annotated[str, typer.Option("--tenant", help="The tenant to export.")],
    data_dir: DataDir = None,
    fmt: Annotated[ExportFormat, typer.Option("--format", help="json or graphml.")] = (
        ExportFormat.json
    ),
    out: Annotated[Path | None, typer.Option("--out", help="File (default: stdout).")] = None,
) -> None:
    """Export a tenant's graph: JSON {"nodes": [...], "edges": [...]} or GraphML."""
    settings = settings_for(data_dir=data_dir)
    config = settings.engine_config()
    with _read_store(settings) as store:
        memory = _load(store, tenant)
    if fmt == ExportFormat.json:
        data = orjson.dumps(views.export_json(memory, config), option=orjson.OPT_INDENT_2)
        if out is None:
            sys.stdout.buffer.write(data + b"\n")
        else:
            out.write_bytes(data + b"\n")
        return
    if out is None:
        import tempfile

        with tempfile.NamedTemporaryFile(suffix=".graphml") as tmp:
            views.export_graphml(memory, config, Path(tmp.name))
            sys.stdout.buffer.write(Path(tmp.name).read_bytes())
        return
    views.export_graphml(memory, config, out)


def _intent_command(target: IntentStatus, verb: str) -> Callable[..., None]:
    def command(
        tenant: Annotated[str, typer.Argument(help="Tenant.")],
        intent_id: Annotated[str, typer.Argument(help="Intent id.")],
        note: Annotated[str, typer.Option("--note", help="Why (kept with the change).")] = "",
        data_dir: DataDir = None,
    ) -> None:
        from stream_app.factory import open_hub

        settings = settings_for(data_dir=data_dir)
        with open_hub(settings) as hub:
            messages = asyncio.run(hub.set_intent_status(tenant, intent_id, target, note))
        if not messages:
            typer.echo(f"intent {intent_id} is already {target.value}")

    command.__doc__ = f"{verb.capitalize()} an intent (status -> {target.value})."
    return command


def sweep(data_dir: DataDir = None, tenant: TenantOpt = None) -> None:
    """Run the decay sweep now: prune edges whose decayed weight fell below the floor."""
    from stream_app.factory import open_hub

    settings = settings_for(data_dir=data_dir)
    with open_hub(settings) as hub:
        changed = asyncio.run(hub.sweep(tenant))
    for name, count in sorted(changed.items()):
        typer.echo(f"{name}: {count} items changed")


# ------------------------------------------------------------------------ wiring
def build_app() -> typer.Typer:
    app = typer.Typer(
        name="foldmem",
        help="foldmem: always-on proactive memory for LLM agents.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    app.command()(cli_errors(run))
    app.command()(cli_errors(serve))
    app.command()(cli_errors(status))
    app.command()(cli_errors(intents))
    app.command()(cli_errors(sweep))
    graph_app = typer.Typer(help="Graph commands.", no_args_is_help=True)
    graph_app.command("export")(cli_errors(graph_export))
    app.add_typer(graph_app, name="graph")
    intent_app = typer.Typer(help="Change an intent's status.", no_args_is_help=True)
    for verb, target in (
        ("resolve", IntentStatus.RESOLVED),
        ("reject", IntentStatus.REJECTED),
        ("defer", IntentStatus.DEFERRED),
        ("schedule", IntentStatus.ACTION_SCHEDULED),
        ("reopen", IntentStatus.PENDING),
    ):
        intent_app.command(verb)(cli_errors(_intent_command(target, verb)))
    app.add_typer(intent_app, name="intent")
    for module in (read, kafka, connectors, privacy, mcp):
        module.register(app)
    return app


def main() -> None:
    app = build_app()
    try:
        result = app(standalone_mode=False)
    except (click.exceptions.Abort, typer.exceptions.Abort):  # Ctrl-C or EOF at a prompt
        typer.echo("aborted", err=True)
        sys.exit(130)
    except (click.exceptions.ClickException, typer.exceptions.TyperException) as exc:
        # usage errors (typer raises its own copy of click's exceptions in recent versions)
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
        sys.exit(int(getattr(exc, "exit_code", 2)))
    except FoldmemError as exc:
        typer.secho(f"error: {exc}", err=True, fg=typer.colors.RED)
        sys.exit(2)
    if isinstance(result, int) and result:
        sys.exit(result)


if __name__ == "__main__":
    main()
