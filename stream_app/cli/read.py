"""`foldmem query` and `foldmem recall`: the hub's read path over a data dir."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated

import typer

from schemas.graph import NodeKind
from schemas.query import QueryHit, QueryRequest, RecallRequest, TimeRange
from stream_app.cli.common import DataDir, cli_errors, data_dir_hub

Tenant = Annotated[str, typer.Option("--tenant", help="Tenant to read.")]
Json = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")]
Kinds = Annotated[
    list[str] | None, typer.Option("--kind", help="Only these node kinds (repeatable).")
]


def _kinds(values: list[str] | None) -> list[NodeKind] | None:
    return [NodeKind(v.upper()) for v in values] if values else None


def hit_line(rank: int, hit: QueryHit) -> str:
    # a fact's title is its statement: said once, not "statement - statement"
    parts = [hit.title, hit.text] if hit.text != hit.title else [hit.title]
    text = " - ".join(part for part in parts if part)
    text = " ".join(text.split())[:110]
    cites = ", ".join(hit.event_ids[:4]) + (" ..." if len(hit.event_ids) > 4 else "")
    why = hit.explanation
    notes = [f"+{len(why.collapsed)} merged"] if why.collapsed else []
    notes += [f"names: {', '.join(why.anchors)}"] if why.anchors else []
    notes += ["in the period asked"] if why.in_period else []
    notes += [f"via {why.shared_name}"] if why.shared_name else []
    extra = f"  ({'; '.join(notes)})" if notes else ""
    return f"{rank:>2}. [{hit.kind.value:<7}] {hit.score:.3f}  {text}\n      cites: {cites}{extra}"


def query_command(
    text: Annotated[str, typer.Argument(help="What to look for.")],
    tenant: Tenant,
    k: Annotated[int, typer.Option("--k", help="Results.")] = 10,
    kind: Kinds = None,
    as_of: Annotated[
        datetime | None, typer.Option("--as-of", help="Only what was known then (ISO time).")
    ] = None,
    since: Annotated[datetime | None, typer.Option("--since", help="Between: start.")] = None,
    until: Annotated[datetime | None, typer.Option("--until", help="Between: end.")] = None,
    no_expand: Annotated[bool, typer.Option("--no-expand", help="No graph expansion.")] = False,
    data_dir: DataDir = None,
    as_json: Json = False,
) -> None:
    """Search a tenant's memory (BM25 + dense + graph; never an LLM); cites event ids."""

    @cli_errors
    def go() -> None:
        between = TimeRange(start=since, end=until) if since and until else None
        request = QueryRequest(
            text=text, k=k, kinds=_kinds(kind), as_of=as_of, between=between, expand=not no_expand
        )
        with data_dir_hub(data_dir) as hub:
            response = hub.query(tenant, request)
        if as_json:
            typer.echo(response.model_dump_json(indent=2))
            return
        if not response.items:
            typer.echo("no results")
        for rank, hit in enumerate(response.items, start=1):
            typer.echo(hit_line(rank, hit))

    go()


def recall_command(
    text: Annotated[str, typer.Argument(help="The cue.")],
    tenant: Tenant,
    threshold: Annotated[float, typer.Option("--threshold", help="Recall threshold k.")] = 0.86,
    limit: Annotated[int, typer.Option("--limit", help="At most this many memories.")] = 10,
    kind: Kinds = None,
    data_dir: DataDir = None,
    as_json: Json = False,
) -> None:
    """Cued recall (Hou et al.): memories with p >= threshold; records the recall."""

    @cli_errors
    def go() -> None:
        request = RecallRequest(text=text, threshold=threshold, limit=limit, kinds=_kinds(kind))
        with data_dir_hub(data_dir) as hub:
            response = asyncio.run(hub.recall(tenant, request))
        if as_json:
            typer.echo(response.model_dump_json(indent=2))
            return
        if not response.items:
            typer.echo(f"nothing recalled at threshold {threshold}")
        for hit in response.items:
            text_ = " ".join((hit.title or hit.text).split())[:100]
            typer.echo(
                f"p={hit.p:.3f} r={hit.relevance:.3f} g={hit.consolidation:.2f} "
                f"n={hit.recalls} [{hit.kind.value}] {text_}  cites: "
                f"{', '.join(hit.event_ids[:4])}"
            )

    go()


def register(app: typer.Typer) -> None:
    app.command("query")(query_command)
    app.command("recall")(recall_command)
