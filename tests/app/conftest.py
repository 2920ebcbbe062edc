"""Fixtures of the app tier: settings on a temp data dir, small streams, a folded sample."""

from __future__ import annotations

import asyncio
import io
import shutil
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from connectors.sinks import StdoutSink
from stream_app.cli.app import build_app
from stream_app.embedded.hub import MemoryHub
from stream_app.embedded.runner import Runner, RunOptions
from stream_app.factory import build_hub
from stream_app.ingest.stats import IngestStats
from stream_app.outbox.sinks import intents_log
from stream_app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_stream.jsonl"
BAD = ROOT / "examples" / "bad_events.jsonl"

TOPICS = [
    ("dentist appointment", "Call Dr. Weber about the molar pain; book a dentist appointment"),
    ("marathon training", "Long run on Sunday, 18 km, marathon training plan week {n}"),
    ("launch plan", "Flux launch plan review with Farida, deadline for the launch deck"),
    ("flat repair", "Landlord still has not fixed the bathroom ceiling leak in the flat"),
    ("birthday gift", "Gift ideas for Leonie's birthday party on Saturday"),
]


def make_stream(n: int, tenant: str = "alice", start: int = 0) -> list[dict[str, Any]]:
    """A deterministic stream of `n` RawEvent dicts cycling through a few topics."""
    t0 = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
    events = []
    for i in range(start, start + n):
        title, body = TOPICS[i % len(TOPICS)]
        events.append(
            {
                "id": f"{tenant}-ev-{i:05d}",
                "tenant": tenant,
                "source": ["note", "email", "chat", "calendar"][i % 4],
                "ts": (t0 + timedelta(hours=3 * i)).isoformat(),
                "title": f"{title} #{i // len(TOPICS)}",
                "body": body.format(n=i // len(TOPICS)),
                "participants": ["farida@example.com"] if i % 3 == 0 else [],
            }
        )
    return events


def write_jsonl(path: Path, events: list[dict[str, Any]], mode: str = "wb") -> Path:
    with path.open(mode) as fh:
        for event in events:
            fh.write(orjson.dumps(event) + b"\n")
    return path


def app_settings(data_dir: Path, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "data_dir": data_dir,
        "embedder": "hashing",
        "sweep_interval": 0,
        "poll_interval": 0.05,
        "log_level": "warning",
    }
    values.update(extra)
    return Settings(**values)


def quiet_hub(settings: Settings) -> tuple[MemoryHub, io.StringIO]:
    printed = io.StringIO()
    sinks = [
        StdoutSink(style="human", stream=printed),
        intents_log(settings),
    ]
    return build_hub(settings, sinks=sinks), printed


async def run_once(settings: Settings, *sources: Path, tenant: str | None = None) -> IngestStats:
    hub, _ = quiet_hub(settings)
    try:
        options = RunOptions(
            list(sources), once=True, tenant=tenant, serve_api=False, progress=False
        )
        return await Runner(settings, hub, options, out=io.StringIO()).run()
    finally:
        hub.store.close()


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "data"
    monkeypatch.setenv("FOLDMEM_DATA_DIR", str(path))
    monkeypatch.setenv("FOLDMEM_EMBEDDER", "hashing")
    monkeypatch.setenv("FOLDMEM_LOG_LEVEL", "warning")
    monkeypatch.setenv("FOLDMEM_SWEEP_INTERVAL", "0")
    return path


@pytest.fixture(scope="session")
def folded_sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample stream folded once (hashing embedder); copy it before changing it."""
    path = tmp_path_factory.mktemp("sample") / "data"
    stats = asyncio.run(run_once(app_settings(path), SAMPLE))
    assert stats.folded > 100
    return path


@pytest.fixture
def sample_dir(folded_sample_dir: Path, data_dir: Path) -> Path:
    shutil.copytree(folded_sample_dir, data_dir)
    return data_dir


@pytest.fixture
def stream_file(tmp_path: Path) -> Callable[[int], Path]:
    def make(n: int) -> Path:
        return write_jsonl(tmp_path / "stream.jsonl", make_stream(n))

    return make


def invoke(*args: str) -> tuple[int, str, str]:
    """Run the `foldmem` CLI in-process: (exit code, stdout, stderr). An exception that is not
    the CLI's own exit is re-raised, so a crash never passes for a failing exit code."""
    result = CliRunner().invoke(build_app(), list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr
