"""`foldmem forget-event`, `forget-tenant`, `export`, `layers`, `audit`, `consolidate`.

Writes go through the same hub operations as the API (the embedded hub of the data dir):
under the tenant's lock, persisted to the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer

from schemas.errors import NotFoundError
from stream_app.cli.common import DataDir, cli_errors, data_dir_hub, fail, settings_for
from stream_app.factory import open_hub
from stream_app.hub import Hub

Tenant = Annotated[str, typer.Option("--tenant", help="The tenant.")]
Json = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")]
Actor = Annotated[str | None, typer.Option("--actor", help="Who asks (audit log); default $USER.")]


@contextlib.contextmanager
def _tenant_hub(data_dir: Path | None, tenant: str) -> Iterator[Hub]:
    """The hub of a data dir that holds the tenant. These commands act on the embedded store
    only: a tenant it does not hold (for example one kept by Kafka workers) is an error that
    says where to go, never a silent no-op on an empty store."""
    settings = settings_for(data_dir=data_dir)
    with open_hub(settings) as hub:
        if tenant not in hub.tenants():
            raise NotFoundError(
                f"tenant {tenant!r} not found in the data dir {settings.data_dir}; on a "
                "Kafka deployment use a worker's API (DELETE /tenants/{t}/events/{id}, "
                "DELETE /tenants/{t}?confirm=true, POST /tenants/{t}/consolidate)"
            )
        yield hub


def _echo(data: Any) -> None:
    typer.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode())


def _actor(actor: str | None) -> str:
    if actor:
        return actor
    try:
        return f"cli:{getpass.getuser()}"
    except Exception:  # no user name in some containers
        return "cli"


def forget_event_command(
    event_id: Annotated[str, typer.Argument(help="The RawEvent id to delete.")],
    tenant: Tenant,
    actor: Actor = None,
    data_dir: DataDir = None,
    as_json: Json = False,
) -> None:
    """Hard-delete an event and what was grounded only in it; a re-sent copy is refused."""
    with _tenant_hub(data_dir, tenant) as hub:
        report = asyncio.run(hub.forget_event(tenant, event_id, _actor(actor)))
    if as_json:
        _echo(report.summary())
        return
    counts = ", ".join(f"{k}: {len(v)}" for k, v in sorted(report.deleted.items())) or "nothing"
    state = "deleted" if report.found else "not found (tombstoned anyway)"
    typer.echo(f"event {state}; removed {counts}; chains relinked: {report.relinked}")


def forget_tenant_command(
    tenant: Tenant,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
    actor: Actor = None,
    data_dir: DataDir = None,
    as_json: Json = False,
) -> None:
    """Delete everything held about a tenant (only hashed tombstones and the audit stay)."""
    if not yes:
        if not sys.stdin.isatty():
            raise fail(f"forgetting tenant {tenant!r} needs confirmation: pass --yes")
        if not typer.confirm(f"Forget everything about tenant {tenant!r}?"):
            raise typer.Exit(1)
    with _tenant_hub(data_dir, tenant) as hub:
        report = asyncio.run(hub.forget_tenant(tenant, _actor(actor)))
    summary = report.summary()
    summary.pop("deleted_ids", None)
    if as_json:
        _echo(summary)
        return
    typer.echo(f"tenant {tenant!r} forgotten: {sum(summary['deleted'].values())} nodes removed")


def export_command(
    tenant: Tenant,
    out: Annotated[Path | None, typer.Option("--out", help="Write to this file.")] = None,
    data_dir: DataDir = None,
) -> None:
    """Export everything held about a tenant as JSON (inferred layers marked inferred)."""
    with data_dir_hub(data_dir) as hub:
        data = hub.export(tenant)
    blob = orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
    if out is None:
        typer.echo(blob.decode())
    else:
        out.write_bytes(blob)
        typer.echo(f"wrote {out} ({len(data['nodes'])} nodes)")


def layers_command(
    tenant: Tenant,
    enable: Annotated[list[str] | None, typer.Option("--enable", help="Layer to opt in.")] = None,
    disable: Annotated[
        list[str] | None, typer.Option("--disable", help="Layer to opt out.")
    ] = None,
    purge: Annotated[
        bool, typer.Option("--purge", help="Delete what disabled layers hold.")
    ] = False,
    actor: Actor = None,
    data_dir: DataDir = None,
    as_json: Json = False,
) -> None:
    """Show or change the tenant's layer opt-ins (facts, concepts, intents, core_schemas)."""
    with data_dir_hub(data_dir) as hub:
        changes = {**{n: True for n in enable or []}, **{n: False for n in disable or []}}
        if changes or purge:
            state = asyncio.run(hub.change_layers(tenant, changes, purge, _actor(actor)))
        else:
            state = hub.layers(tenant)
    if as_json:
        _echo(state)
        return
    for name, on in state.items():
        typer.echo(f"{name:<13} {'on' if on else 'off'}")


def audit_command(tenant: Tenant, data_dir: DataDir = None) -> None:
    """The tenant's deletion audit log (who, when, which ids; never content)."""
    with data_dir_hub(data_dir) as hub:
        _echo(hub.audit(tenant))


def consolidate_command(
    tenant: Tenant,
    budget: Annotated[float, typer.Option("--budget", help="Seconds of work at most.")] = 60.0,
    data_dir: DataDir = None,
    as_json: Json = False,
) -> None:
    """Run the nightly engine (cluster facts, induce schemas/intents, sweep) for a tenant now."""
    with _tenant_hub(data_dir, tenant) as hub:
        report = asyncio.run(hub.consolidate(tenant, budget))
    summary = report.summary()
    if as_json:
        _echo(summary)
        return
    typer.echo(
        f"{tenant}: {summary['fresh_facts']} fresh facts, {summary['clusters']} clusters, "
        f"{summary['schemas_created']} schemas, {summary['intents_created']} intents, "
        f"{summary['core_created']} core schemas ({summary['seconds']} s"
        f"{', truncated' if summary['truncated'] else ''})"
    )


def register(app: typer.Typer) -> None:
    app.command("forget-event")(cli_errors(forget_event_command))
    app.command("forget-tenant")(cli_errors(forget_tenant_command))
    app.command("export")(cli_errors(export_command))
    app.command("layers")(cli_errors(layers_command))
    app.command("audit")(cli_errors(audit_command))
    app.command("consolidate")(cli_errors(consolidate_command))
