"""kill -9 durability of `foldmem run` as a real subprocess, and a real `foldmem serve`."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from stream_app.embedded.store import Store
from tests.app.conftest import ROOT, make_stream, write_jsonl

FOLDMEM = [sys.executable, "-m", "stream_app.cli"]


def env_for(data_dir: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        FOLDMEM_DATA_DIR=str(data_dir),
        FOLDMEM_EMBEDDER="hashing",
        FOLDMEM_LOG_LEVEL="warning",
        FOLDMEM_SWEEP_INTERVAL="0",
        PYTHONHASHSEED="0",
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


def folded(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with Store(db, readonly=True) as store:
            if "alice" not in store.tenants():
                return 0
            return int(store.counts("alice")["events"].get("folded", 0))
    except Exception:
        return 0


def export(data_dir: Path) -> dict[str, Any]:
    out = subprocess.run(
        [*FOLDMEM, "graph", "export", "--tenant", "alice", "--format", "json"],
        env=env_for(data_dir),
        capture_output=True,
        check=True,
        cwd=ROOT,
    ).stdout
    graph: dict[str, Any] = orjson.loads(out)
    return graph


def run_once(data_dir: Path, stream: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*FOLDMEM, "run", "--once", "--no-api", str(stream)],
        env=env_for(data_dir),
        capture_output=True,
        cwd=ROOT,
        timeout=600,
    )


@pytest.mark.slow
def test_kill_9_loses_nothing_and_applies_nothing_twice(tmp_path: Path) -> None:
    n = 60
    stream = write_jsonl(tmp_path / "s.jsonl", make_stream(n))
    reference = tmp_path / "ref"
    assert run_once(reference, stream).returncode == 0
    assert folded(reference / "foldmem.db") == n

    crashed = tmp_path / "crash"
    kills = 0
    for target in (8, 25):
        # small batches: the kills land between batches and inside one (its raw events
        # stored as the tenant's inbox, its fold not committed)
        proc = subprocess.Popen(
            [*FOLDMEM, "run", "--once", "--no-api", str(stream)],
            env=env_for(crashed, FOLDMEM_FOLD_BATCH_SIZE="4"),
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 300
        while folded(crashed / "foldmem.db") < target and proc.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
    assert kills >= 1
    assert folded(crashed / "foldmem.db") < n
    final = run_once(crashed, stream)
    assert final.returncode == 0, final.stderr.decode()
    with Store(crashed / "foldmem.db", readonly=True) as store:
        assert store.counts("alice")["events"] == {"folded": n}
    assert export(crashed) == export(reference)


@pytest.mark.slow
def test_serve_reads_the_store_and_stops_on_sigterm(tmp_path: Path) -> None:
    data = tmp_path / "d"
    assert run_once(data, write_jsonl(tmp_path / "s.jsonl", make_stream(5))).returncode == 0
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [*FOLDMEM, "serve", "--api-port", str(port)],
        env=env_for(data),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                if httpx.get(f"{url}/health").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        tenants = httpx.get(f"{url}/tenants").json()
        assert tenants[0]["events_folded"] == 5
        # a runner writing meanwhile: serve sees it (data_version reload)
        assert (
            run_once(data, write_jsonl(tmp_path / "t.jsonl", make_stream(3, start=5))).returncode
            == 0
        )
        assert httpx.get(f"{url}/tenants").json()[0]["events_folded"] == 8
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
