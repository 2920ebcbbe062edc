"""Shared fixtures: a deterministic embedder, the real MiniLM one and an event factory."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from schemas.events import RawEvent
from topologies.config import EngineConfig
from topologies.embedding import Embedder, HashingEmbedder
from topologies.vector_index import use_single_thread

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


@pytest.fixture(autouse=True, scope="session")
def _faiss_single_thread() -> None:
    """As the runtime does (stream_app.factory): OpenMP threads contend on a busy machine."""
    use_single_thread()


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder(dim=256)


@pytest.fixture(scope="session")
def minilm() -> Embedder:
    """The real MiniLM embedder (int8 ONNX, one thread, vectors cached), for the tests that
    measure meaning; skipped where the model packages are not installed."""
    from topologies.embedding import MiniLmOnnxEmbedder

    try:
        MiniLmOnnxEmbedder.default_paths()
    except Exception as exc:  # the model packages are optional in some environments
        pytest.skip(f"MiniLM model not installed: {exc}")
    from benchmarks.common import CachingEmbedder

    return CachingEmbedder(MiniLmOnnxEmbedder(threads=1))


@pytest.fixture
def engine_config() -> EngineConfig:
    return EngineConfig()


@pytest.fixture
def make_event() -> Callable[..., RawEvent]:
    counter = itertools.count(1)

    def factory(
        title: str,
        body: str = "",
        *,
        tenant: str = "alice",
        hours: float | None = None,
        source: str = "note",
        id: str | None = None,
        **extra: Any,
    ) -> RawEvent:
        n = next(counter)
        ts = T0 + timedelta(hours=hours if hours is not None else n)
        return RawEvent(
            id=id or f"ev-{n:04d}",
            tenant=tenant,
            source=source,
            ts=ts,
            title=title,
            body=body,
            **extra,
        )

    return factory
