"""Connector commands: ``foldmem ingest`` (checkpointed import) and ``foldmem notify``.

See docs/connectors.md for every source and what a user gets.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from schemas.errors import ConfigError
from stream_app.cli.common import BrokersOpt, DataDir, cli_errors, settings_for


class To(StrEnum):
    embedded = "embedded"
    kafka = "kafka"


def ingest(
    sources: Annotated[
        list[str],
        typer.Argument(
            help="Files, folders or imaps://user@host/FOLDER urls (.ics, .eml, mbox, Maildir, "
            "Slack export, WhatsApp .txt, chat JSONL, RawEvent JSONL)."
        ),
    ],
    to: Annotated[To, typer.Option("--to", help="embedded (the data dir's store) or kafka.")] = (
        To.embedded
    ),
    tenant: Annotated[
        str | None, typer.Option("--tenant", help="Tenant of events that carry none.")
    ] = None,
    kind: Annotated[
        str | None, typer.Option("--kind", help="Source kind (default: detect from the file).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what would be sent, send nothing.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="With --dry-run: print each RawEvent as JSON.")
    ] = False,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Stop after sending this many events.")
    ] = None,
    restart: Annotated[
        bool, typer.Option("--restart", help="Forget these sources' checkpoint first.")
    ] = False,
    progress: Annotated[
        bool | None, typer.Option("--progress/--no-progress", help="Progress bar (TTY default).")
    ] = None,
    data_dir: DataDir = None,
    brokers: BrokersOpt = None,
    topic: Annotated[
        str | None, typer.Option("--topic", help="Kafka topic (default: the events topic).")
    ] = None,
) -> None:
    """Import sources once, with a progress bar and a checkpoint (resume after Ctrl-C)."""
    from stream_app.factory import build_hub, close_outputs
    from stream_app.ingest.admission import Admission
    from stream_app.ingest.imports import delete_checkpoint, run_import
    from stream_app.ingest.ledger import Ledger
    from stream_app.ingest.sources import parse_refs
    from stream_app.ingest.targets import DryRunTarget, HubTarget, Target
    from stream_app.kafka.ingest import KafkaTarget

    settings = settings_for(data_dir=data_dir, kafka_brokers=brokers, default_tenant=tenant)
    refs = parse_refs(sources)
    hub = None
    target: Target
    name = KafkaTarget(settings, topic).name if to == To.kafka else HubTarget.name
    if dry_run:  # lists what the import would send (the ledger of that target is read)
        admission = Admission.of(settings.max_future_days)
        target = DryRunTarget(name, sys.stdout, as_json=as_json, admission=admission)
    elif to == To.kafka:
        target = KafkaTarget(settings, topic)
    else:
        hub = build_hub(settings)
        target = HubTarget(hub)
    if restart and not dry_run:
        delete_checkpoint(settings, target.name, refs)
    ledger = Ledger(settings.ingest_db_path, readonly=dry_run)
    try:
        stats = asyncio.run(
            run_import(
                settings,
                target,
                refs,
                ledger,
                tenant=tenant,
                kind=kind,
                dry_run=dry_run,
                limit=limit,
                progress=progress,
                hub=hub,
            )
        )
    finally:
        ledger.close()
        if hub is not None:
            close_outputs(hub)
            hub.store.close()
    where = "dry run" if dry_run else f"to {target.name}"
    typer.echo(f"ingest {where}: {stats.import_line(dry_run)}", err=True)
    if stats.dead_lettered and not dry_run:
        typer.echo(f"bad items are listed in {settings.deadletter_path}", err=True)
    if stats.interrupted:
        typer.echo("stopped before the end: run the same command again to resume", err=True)


def notify(
    webhook: Annotated[
        list[str] | None, typer.Option("--webhook", help="POST each intent here (repeatable).")
    ] = None,
    secret: Annotated[
        str | None,
        typer.Option("--secret", help="HMAC-SHA256 signing key (FOLDMEM_WEBHOOK_SECRET)."),
    ] = None,
    jsonl: Annotated[
        Path | None, typer.Option("--jsonl", help="Append each intent to this JSONL file.")
    ] = None,
    stdout: Annotated[bool, typer.Option("--stdout", help="Print each intent.")] = False,
    brokers: BrokersOpt = None,
    topic: Annotated[
        str | None, typer.Option("--topic", help="Intents topic (default from settings).")
    ] = None,
    idle_exit: Annotated[
        float | None, typer.Option("--idle-exit", help="Exit after this many idle seconds.")
    ] = None,
    replay: Annotated[
        bool,
        typer.Option(
            "--replay-dead-letters",
            help="Instead of consuming Kafka: queue the messages dead-lettered for each "
            "--webhook again (DATA_DIR/webhook-deadletter.jsonl) and deliver them.",
        ),
    ] = False,
    data_dir: DataDir = None,
) -> None:
    """Consume the intents topic and deliver each intent once per webhook / file."""
    from stream_app.outbox.notify import build_sinks, notify_from_kafka, replay_dead_letters

    settings = settings_for(data_dir=data_dir, kafka_brokers=brokers)
    if replay:
        if not webhook:
            raise ConfigError("--replay-dead-letters needs the --webhook URL(s) to replay to")
        for url in webhook:
            replayed = replay_dead_letters(settings, url, secret)
            typer.echo(f"notify: {replayed.line(url)}", err=True)
        return
    sinks = build_sinks(settings, webhook or [], secret, jsonl, stdout)

    async def main() -> str:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        stats = await notify_from_kafka(
            settings, sinks, topic=topic, idle_exit=idle_exit, stop=stop
        )
        return stats.line()

    typer.echo(f"notify: {asyncio.run(main())}", err=True)


def register(app: typer.Typer) -> None:
    app.command("ingest")(cli_errors(ingest))
    app.command("notify")(cli_errors(notify))
