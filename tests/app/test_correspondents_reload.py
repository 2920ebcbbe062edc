"""A correspondent's name is weighed from what the memory holds (the person's earlier events and
their concepts): a fold stopped and restarted from the store weighs it as an uninterrupted one."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemas.events import RawEvent
from tests.app.conftest import SAMPLE, app_settings, quiet_hub
from tests.app.test_store import assert_same_memory
from topologies import correspondents
from topologies.config import TopicConfig
from topologies.entities import EntityHolder


async def test_a_restart_weighs_the_partners_name_as_an_uninterrupted_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = [RawEvent.model_validate_json(line) for line in SAMPLE.read_text().splitlines()]
    weighed: list[tuple[str, float]] = []
    weigh = correspondents.heading_weight

    def spy(memory: EntityHolder, event: RawEvent, node_id: str, config: TopicConfig) -> float:
        weight = weigh(memory, event, node_id, config)
        weighed.append((event.id, weight))
        return weight

    monkeypatch.setattr(correspondents, "heading_weight", spy)
    straight, _ = quiet_hub(app_settings(tmp_path / "straight"))
    for event in events:
        await straight.fold(event)
    uninterrupted = list(weighed)

    weighed.clear()
    broken = app_settings(tmp_path / "broken")
    first, _ = quiet_hub(broken)
    for event in events[:100]:
        await first.fold(event)
    first.store.close()
    second, _ = quiet_hub(broken)
    for event in events[100:]:
        await second.fold(event)

    assert weighed == uninterrupted
    after_restart = {e.id for e in events[100:]}
    assert any(w < 1.0 for event_id, w in weighed if event_id in after_restart)
    assert_same_memory(straight.view("alice"), second.view("alice"))
    straight.store.close()
    second.store.close()
