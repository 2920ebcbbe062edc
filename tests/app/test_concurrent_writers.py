"""Two processes writing one data dir: `foldmem ingest` (or HTTP ingest) beside a running
`foldmem run`, real subprocesses on a real SQLite store. A version conflict is transient:
every valid event of both is folded, none is dead-lettered for it, and a re-run skips nothing
that was not folded."""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from stream_app.embedded.store import Store
from stream_app.ingest.tail import source_key
from tests.app.conftest import make_stream, write_jsonl
from tests.app.test_crash import FOLDMEM, ROOT, env_for

TENANT = "t1"
TOKEN = "t0ken-for-tests"


def stream(n: int, prefix: str) -> list[dict[str, Any]]:
    """`n` events of tenant t1 a minute apart (all in the past), ids `<prefix>-<i>`."""
    t0 = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
    return [
        {**e, "id": f"{prefix}-{i}", "ts": (t0 + timedelta(minutes=i)).isoformat()}
        for i, e in enumerate(make_stream(n, tenant=TENANT))
    ]


def states(data_dir: Path) -> dict[str, str]:
    with Store(data_dir / "foldmem.db", readonly=True) as store:
        memory, _ = store.load_tenant(TENANT, 256, vectors=False)
    return dict(memory.event_states)


def folded_count(data_dir: Path) -> int:
    db = data_dir / "foldmem.db"
    if not db.exists():
        return 0
    try:
        with Store(db, readonly=True) as store:
            if TENANT not in store.tenants():
                return 0
            return int(store.counts(TENANT)["events"].get("folded", 0))
    except Exception:
        return 0


def dead_letters(data_dir: Path) -> list[dict[str, str]]:
    path = data_dir / "deadletter.jsonl"
    return [orjson.loads(x) for x in path.read_bytes().splitlines()] if path.exists() else []


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[Path, Path, subprocess.Popen[bytes]]]:
    """`foldmem run` following a long stream of tenant t1, already folding."""
    data_dir = tmp_path / "data"
    source = write_jsonl(tmp_path / "run.jsonl", stream(3000, "run"))
    proc = subprocess.Popen(
        [*FOLDMEM, "run", "--no-api", str(source)],
        env=env_for(data_dir),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 300
        while folded_count(data_dir) < 30:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the runner did not start folding"
            time.sleep(0.05)
        yield data_dir, source, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(120)


def stop(proc: subprocess.Popen[bytes]) -> str:
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(120) == 0
    return proc.stderr.read().decode() if proc.stderr else ""


def lines_checkpointed(data_dir: Path, source: Path) -> int:
    """How many lines of `source` the runner's saved offset has passed."""
    with Store(data_dir / "foldmem.db", readonly=True) as store:
        checkpoint = store.checkpoint(source_key(source))
    assert checkpoint is not None
    return source.read_bytes()[: checkpoint.offset].count(b"\n")


@pytest.mark.slow
def test_ingest_beside_a_running_run_folds_every_event(
    running: tuple[Path, Path, subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    data_dir, run_source, proc = running
    source = write_jsonl(tmp_path / "x.jsonl", stream(100, "imp"))
    ingest = subprocess.run(
        [*FOLDMEM, "ingest", str(source), "--to", "embedded", "--data-dir", str(data_dir)],
        env=env_for(data_dir),
        cwd=ROOT,
        capture_output=True,
        timeout=900,
    )
    assert proc.poll() is None, "the runner must still be folding"
    stop(proc)
    err = ingest.stderr.decode()
    assert ingest.returncode == 0, err
    assert "sent 100, folded 100" in err, err
    assert not [d for d in dead_letters(data_dir) if d["kind"] == "fold_failed"]
    got = states(data_dir)
    imported = {f"imp-{i}" for i in range(100)}
    assert {e: got.get(e) for e in imported} == dict.fromkeys(imported, "folded")
    # the runner lost nothing either: every line before its saved offset is folded (the
    # rest is read again at its next start)
    ran = {f"run-{i}" for i in range(lines_checkpointed(data_dir, run_source))}
    assert len(ran) >= 30
    assert {e: got.get(e) for e in ran} == dict.fromkeys(ran, "folded")

    again = subprocess.run(
        [*FOLDMEM, "ingest", str(source), "--to", "embedded", "--data-dir", str(data_dir)],
        env=env_for(data_dir),
        cwd=ROOT,
        capture_output=True,
        timeout=300,
    )
    assert (
        again.returncode == 0
        and "unchanged since its last complete import" in again.stderr.decode()
    )


@pytest.mark.slow
def test_http_ingest_beside_a_running_run_folds_every_item(
    running: tuple[Path, Path, subprocess.Popen[bytes]],
) -> None:
    data_dir, _, proc = running
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**env_for(data_dir), "FOLDMEM_API_TOKEN": TOKEN}
    serve = subprocess.Popen(
        [*FOLDMEM, "serve", "--api-port", str(port)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                if httpx.get(f"{url}/health").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        items = [{k: v for k, v in e.items() if k != "tenant"} for e in stream(60, "http")]
        codes: list[int] = []
        results: dict[str, str] = {}
        with httpx.Client(base_url=url, timeout=300) as client:
            for start in range(0, len(items), 10):
                batch = items[start : start + 10]
                response = client.post(
                    f"/tenants/{TENANT}/events",
                    json=batch,
                    headers={"Authorization": f"Bearer {TOKEN}"},
                )
                codes.append(response.status_code)
                for item in response.json()["results"]:
                    results[item["id"]] = item["status"]
        assert proc.poll() is None, "the runner must still be folding"
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(60)
    stop(proc)
    assert set(codes) == {200}, codes
    assert set(results.values()) == {"folded"}
    assert not [d for d in dead_letters(data_dir) if d["kind"] == "fold_failed"]
    got = states(data_dir)
    assert all(got.get(i["id"]) == "folded" for i in items)
