"""Two concepts whose members name the same tickets merge from what the store holds: a fold
restarted from the store just before the merging event merges as an uninterrupted one (issue
11, boundaries)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from schemas.events import RawEvent
from schemas.graph import NodeKind
from stream_app.embedded.hub import MemoryHub
from stream_app.settings import Settings
from tests.app.conftest import app_settings, quiet_hub
from tests.app.test_store import assert_same_memory
from tests.engine.fold_helpers import ScriptedPlanner, Step
from topologies import consolidation
from topologies.memory import TenantMemory

# the launch channel's chat and the mails about the same tickets (as in test_boundaries.py)
TEXTS = [
    ("o-0", "Quarterly tax return: receipts and the accountant"),
    ("o-1", "Recipe: spaghetti with garlic, olive oil and chili"),
    ("o-2", "Book club picks a novel about a lighthouse keeper"),
    ("chat-0", "FLX-142 feed fix is deployed to staging, price feed on time again"),
    ("chat-1", "FLX-157 price display copy approved by design, shipping today"),
    ("chat-2", "FLX-163 load test on rc3 is green, p95 well under target"),
    ("mail-0", "Partner confirms the price feed lands on time after the FLX-142 fix"),
    ("mail-1", "Legal approved the FLX-157 price display copy, shipping today"),
    ("mail-2", "Report: FLX-163 load test of tariff release rc3 green"),
]
SCRIPT = {
    **{f"chat-{i}": Step(["Launch channel"]) for i in range(3)},
    **{f"mail-{i}": Step(["Launch mails"]) for i in range(3)},
}
EVENTS = [
    RawEvent(
        id=event_id,
        tenant="alice",
        source="note",
        ts=datetime(2026, 11, 2, 9 + n, tzinfo=UTC),
        title=text,
        body="",
    )
    for n, (event_id, text) in enumerate(TEXTS)
]


def scripted_hub(settings: Settings) -> MemoryHub:
    hub, _ = quiet_hub(settings)
    hub.engine.planner = ScriptedPlanner(SCRIPT)
    return hub


async def test_a_restart_merges_the_concepts_of_one_set_of_tickets_as_an_uninterrupted_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shares: list[float] = []
    share = consolidation.code_share

    def spy(memory: TenantMemory, a: str, b: str) -> float:
        shares.append(share(memory, a, b))
        return shares[-1]

    monkeypatch.setattr(consolidation, "code_share", spy)
    straight = scripted_hub(app_settings(tmp_path / "straight"))
    for event in EVENTS:
        await straight.fold(event)

    broken = app_settings(tmp_path / "broken")
    first = scripted_hub(broken)
    for event in EVENTS[:-1]:
        await first.fold(event)
    assert first.view("alice").graph.count(NodeKind.CONCEPT) == 2
    first.store.close()
    second = scripted_hub(broken)
    shares.clear()
    await second.fold(EVENTS[-1])

    assert shares == [1.0]  # the last mail's fold asks the rule, which finds all tied
    assert second.view("alice").graph.count(NodeKind.CONCEPT) == 1
    assert_same_memory(straight.view("alice"), second.view("alice"))
    straight.store.close()
    second.store.close()
