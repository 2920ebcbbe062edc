"""Kafka commands: ``foldmem worker``, ``foldmem produce``, ``foldmem tail-intents``.

Every command takes ``--brokers`` (default FOLDMEM_KAFKA_BROKERS, comma-separated host:port).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer

from schemas.errors import ConfigError, FoldmemError
from schemas.events import RawEvent
from stream_app.cli.common import BrokersOpt
from stream_app.cli.common import fail as _fail
from stream_app.cli.common import settings_for as _settings

JSONL_SUFFIXES = (".jsonl", ".ndjson")
TopicOpt = Annotated[str | None, typer.Option("--topic", help="Topic (default from settings).")]


def worker(
    brokers: BrokersOpt = None,
    api_port: Annotated[
        int | None, typer.Option("--api-port", help="Read API port (FOLDMEM_API_PORT).")
    ] = None,
    api_host: Annotated[str | None, typer.Option("--api-host", help="Bind address.")] = None,
    partitions: Annotated[
        int | None, typer.Option("--partitions", help="Events topic partitions.")
    ] = None,
) -> None:
    """Run a Kafka worker: fold foldmem.events, publish intents, serve the read API."""
    from stream_app.kafka.worker import run_worker

    try:
        settings = _settings(
            kafka_brokers=brokers, api_port=api_port, api_host=api_host, kafka_partitions=partitions
        )
    except FoldmemError as exc:
        raise _fail(str(exc)) from None
    run_worker(settings)


def is_event_jsonl(path: Path, kind: str | None) -> bool:
    """A RawEvent JSONL file (sent line by line); chat JSONL and the rest go through a connector."""
    if kind is not None:
        return kind.lower() in ("jsonl", "events")
    if path.suffix.lower() not in JSONL_SUFFIXES:
        return False
    from connectors.detect import detect_kind
    from connectors.errors import ConnectorError

    try:
        return detect_kind(path) == "jsonl"
    except ConnectorError:  # nothing recognisable: read it as RawEvents, report each line
        return True


def parse_event_line(
    line: bytes, tenant: str | None, default_tenant: str
) -> tuple[RawEvent, bytes]:
    """A RawEvent JSONL line: the event and the bytes to send (the line itself, unless its
    tenant was set here). ValueError names what is wrong (the field, or the JSON error)."""
    from pydantic import ValidationError

    from connectors.base import json_problem, validation_reason

    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise ValueError(json_problem(line, exc)) from exc
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    given = obj.get("tenant")
    obj["tenant"] = tenant or obj.get("tenant", default_tenant)
    try:
        event = RawEvent.model_validate(obj)
    except ValidationError as exc:
        raise ValueError(validation_reason(exc)) from exc
    return event, line if event.tenant == given else event.model_dump_json().encode()


def _tenant_of(line: bytes) -> bytes | None:
    """The `tenant` field of a JSON object line, if there is one (the key of a --raw line)."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    found = obj.get("tenant") if isinstance(obj, dict) else None
    return str(found).encode() if found else None


def iter_messages(
    paths: list[Path], tenant: str | None, kind: str | None, raw: bool, default_tenant: str
) -> Iterator[tuple[bytes | None, bytes, str | None]]:
    """(key, value, problem) per item.

    RawEvent JSONL lines are sent as they are; `tenant` replaces each event's tenant, and an
    event without one gets `default_tenant` (as in ``foldmem run``). Other sources (.ics,
    mbox, Slack, chat JSONL, ...) are read by their connector.
    """
    from connectors.base import BadItem
    from connectors.detect import open_source

    for path in paths:
        if not is_event_jsonl(path, kind):
            source = open_source(path, tenant or default_tenant, kind)
            for item in source.read():
                if isinstance(item, BadItem):
                    yield None, b"", f"{item.location}: {item.reason}"
                else:
                    yield item.tenant.encode(), item.model_dump_json().encode(), None
            continue
        with path.open("rb") as handle:
            for number, line in enumerate(handle, start=1):
                line = line.strip()
                if not line:
                    continue
                try:
                    event, value = parse_event_line(line, tenant, default_tenant)
                except ValueError as exc:
                    if raw:
                        yield _tenant_of(line), line, None
                    else:
                        yield None, line, f"{path.name}:line {number}: {exc}"
                    continue
                yield event.tenant.encode(), value, None


async def produce_messages(
    brokers: list[str], topic: str, messages: Iterator[tuple[bytes | None, bytes, str | None]]
) -> tuple[int, int]:
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=brokers, acks="all", linger_ms=5)
    try:
        await producer.start()
    except Exception as exc:
        await producer.stop()
        raise ConfigError(f"Kafka brokers {','.join(brokers)} unreachable: {exc}") from exc
    sent = skipped = 0
    try:
        futures = []
        for key, value, problem in messages:
            if problem is not None:
                typer.secho(f"skipped {problem}", err=True, fg=typer.colors.YELLOW)
                skipped += 1
                continue
            futures.append(await producer.send(topic, value=value, key=key))
            sent += 1
        await asyncio.gather(*futures)
    finally:
        await producer.stop()
    return sent, skipped


def produce(
    files: Annotated[
        list[Path], typer.Argument(help="RawEvent JSONL files (or any connector source).")
    ],
    topic: TopicOpt = None,
    brokers: BrokersOpt = None,
    tenant: Annotated[str | None, typer.Option("--tenant", help="Tenant for every event.")] = None,
    kind: Annotated[
        str | None, typer.Option("--kind", help="Source kind (default: detect).")
    ] = None,
    raw: Annotated[
        bool,
        typer.Option(
            "--raw", help="Send invalid JSONL lines as they are (the worker dead-letters them)."
        ),
    ] = False,
) -> None:
    """Send events to the events topic, key = tenant."""
    try:
        settings = _settings(kafka_brokers=brokers)
        if topic is None or topic == settings.kafka_events_topic:
            from stream_app.kafka.topics import ensure_topics

            asyncio.run(ensure_topics(settings, only=[settings.kafka_events_topic]))
        sent, skipped = asyncio.run(
            produce_messages(
                settings.kafka_broker_list,
                topic or settings.kafka_events_topic,
                iter_messages(files, tenant, kind, raw, settings.default_tenant),
            )
        )
    except FoldmemError as exc:
        raise _fail(str(exc)) from None
    typer.echo(
        f"sent {sent} message(s) to {topic or settings.kafka_events_topic}"
        + (f", skipped {skipped} invalid" if skipped else "")
    )


async def consume(
    brokers: list[str], topic: str, from_beginning: bool, idle_timeout: float | None
) -> AsyncIterator[Any]:
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=brokers,
        group_id=None,
        auto_offset_reset="earliest" if from_beginning else "latest",
        enable_auto_commit=False,
    )
    try:
        await consumer.start()
    except Exception as exc:
        await consumer.stop()
        raise ConfigError(f"Kafka brokers {','.join(brokers)} unreachable: {exc}") from exc
    try:
        while True:
            batch = await consumer.getmany(timeout_ms=int((idle_timeout or 1.0) * 1000))
            if not batch and idle_timeout is not None:
                return
            for records in batch.values():
                for record in records:
                    yield record
    finally:
        await consumer.stop()


def tail_intents(
    brokers: BrokersOpt = None,
    topic: TopicOpt = None,
    from_beginning: Annotated[
        bool, typer.Option("--from-beginning", help="Start at the oldest message.")
    ] = False,
    idle_exit: Annotated[
        float | None, typer.Option("--idle-exit", help="Exit after this many idle seconds.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the raw messages.")] = False,
) -> None:
    """Print intent messages as they arrive on the intents topic."""
    from connectors.sinks.stdout import describe
    from schemas.intents import IntentMessage

    try:
        settings = _settings(kafka_brokers=brokers)
    except FoldmemError as exc:
        raise _fail(str(exc)) from None

    async def main() -> None:
        name = topic or settings.kafka_intents_topic
        async for record in consume(settings.kafka_broker_list, name, from_beginning, idle_exit):
            if as_json:
                sys.stdout.write(record.value.decode() + "\n")
            else:
                try:
                    typer.echo(describe(IntentMessage.model_validate_json(record.value)))
                except ValueError:
                    typer.echo(f"(unreadable message at offset {record.offset})")
            sys.stdout.flush()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    except ConfigError as exc:
        raise _fail(str(exc)) from None


def register(app: typer.Typer) -> None:
    app.command("worker")(worker)
    app.command("produce")(produce)
    app.command("tail-intents")(tail_intents)
