"""FOLDMEM_DECAY_PER_DAY reaches the read path: Settings -> engine -> the hub's Reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemas.events import RawEvent
from schemas.query import QueryRequest, QueryResponse
from stream_app.factory import build_hub
from stream_app.settings import load_settings

from .conftest import make_stream


def _query(monkeypatch: pytest.MonkeyPatch, decay: str) -> QueryResponse:
    monkeypatch.setenv("FOLDMEM_DECAY_PER_DAY", decay)
    hub = build_hub(load_settings(), sinks=[])
    try:
        return hub.query("alice", QueryRequest(text="marathon training plan", k=20))
    finally:
        hub.store.close()


def _expansion(response: QueryResponse) -> dict[str, float]:
    return {hit.node_id: hit.explanation.expansion for hit in response.items}


async def test_decay_setting_changes_the_decayed_weights_of_a_query(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = build_hub(load_settings(), sinks=[])
    try:
        for raw in make_stream(30):  # 3 hours apart: edges of the first events are days old
            await hub.fold(RawEvent.model_validate(raw))
    finally:
        hub.store.close()

    kept = _expansion(_query(monkeypatch, "0"))  # no decay: every edge at its full weight
    decayed = _expansion(_query(monkeypatch, "5"))  # the same memory, edges decayed fast

    shared = kept.keys() & decayed.keys()
    assert shared
    assert all(decayed[n] <= kept[n] + 1e-9 for n in shared)
    assert any(decayed[n] < kept[n] - 1e-6 for n in shared)
