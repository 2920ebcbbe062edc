"""Bad input gets a clear error naming the field; nothing else is lost."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from fold_helpers import ScriptedPlanner, Step, dump
from pydantic import ValidationError

from schemas.errors import PlanRejectedError
from schemas.events import RawEvent
from schemas.graph import NodeKind
from schemas.plans import AddEdge, UpdatePlan
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.planner import PlanRequest

MakeEvent = Callable[..., RawEvent]
GOOD: dict[str, Any] = {
    "id": "ev-1",
    "tenant": "alice",
    "source": "email",
    "ts": "2026-11-02T09:00:00+00:00",
    "title": "Passport renewal",
}


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"ts": "2026-11-02T09:00:00"}, "ts", "timezone-aware"),
        ({"ts": "next tuesday"}, "ts", "datetime"),
        ({"id": ""}, "id", "at least 1"),
        ({"id": "  "}, "id", "non-blank"),
        ({"tenant": "alice smith"}, "tenant", "pattern"),
        ({"title": "x" * 2000}, "title", "longer than 1024 bytes"),
        ({"body": "é" * 40_000}, "body", "longer than 65536 bytes"),
        ({"participants": ["a" * 400]}, "participants", "longer than 320"),
        ({"attrs": {"blob": "x" * 20_000}}, "attrs", "larger than"),
        ({"colour": "red"}, "colour", "Extra inputs"),
        ({"schema_version": 99}, "schema_version", "less than or equal"),
    ],
)
def test_an_invalid_event_is_rejected_naming_the_field(
    change: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        RawEvent.model_validate({**GOOD, **change})
    (error,) = caught.value.errors()
    assert error["loc"] == (field,)
    assert message in error["msg"]


def test_a_missing_field_is_named() -> None:
    payload = {k: v for k, v in GOOD.items() if k != "tenant"}
    with pytest.raises(ValidationError) as caught:
        RawEvent.model_validate(payload)
    assert [e["loc"] for e in caught.value.errors()] == [("tenant",)]


def test_malformed_json_is_a_validation_error() -> None:
    with pytest.raises(ValidationError):
        RawEvent.model_validate_json(b'{"id": "ev-1", "tenant": ')


def test_an_invalid_plan_op_names_the_field() -> None:
    with pytest.raises(ValidationError) as caught:
        UpdatePlan.model_validate(
            {"ops": [{"op": "ADD_EDGE", "src": "a", "dst": "b", "kind": "LIKES"}]}
        )
    assert caught.value.errors()[0]["loc"][-1] == "kind"


async def test_an_event_for_another_tenant_is_refused_and_nothing_is_stored(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = FoldEngine(embedder, ScriptedPlanner({}))
    memory = engine.new_memory("alice")
    await engine.fold(memory, make_event("ok", id="ev-0"))
    before = dump(memory)
    with pytest.raises(PlanRejectedError, match="tenant 'bob'"):
        await engine.fold(memory, make_event("not yours", id="ev-1", tenant="bob"))
    assert dump(memory) == before


async def test_a_failing_planner_loses_no_input_and_later_events_still_fold(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    class Flaky:
        name = "flaky"

        def __init__(self) -> None:
            self.inner = ScriptedPlanner({"ev-2": Step(["Passport renewal"])})

        async def plan(self, request: PlanRequest) -> UpdatePlan:
            if request.event.id == "ev-1":
                raise TimeoutError("planner timed out")
            if request.event.id == "ev-3":
                return UpdatePlan(ops=[AddEdge(src="ghost", dst="ghost2", kind="RELATED_TO")])
            return await self.inner.plan(request)

    engine = FoldEngine(embedder, Flaky())
    memory = engine.new_memory("alice")
    results = [await engine.fold(memory, make_event(f"event {n}", id=f"ev-{n}")) for n in (1, 2, 3)]

    assert [r.status for r in results] == ["empty", "folded", "empty"]
    assert "timed out" in (results[0].error or "")
    assert "unknown node id" in (results[2].error or "")
    assert memory.graph.count(NodeKind.EVENT) == 3
    assert {memory.event_state(f"ev-{n}") for n in (1, 2, 3)} == {"folded"}
    assert memory.graph.count(NodeKind.CONCEPT) == 1


async def test_a_fallback_planner_is_used_when_the_first_plan_is_rejected(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    class Rejected:
        name = "rejected"

        async def plan(self, request: PlanRequest) -> UpdatePlan:
            return UpdatePlan(ops=[AddEdge(src="ghost", dst="ghost2", kind="RELATED_TO")])

    engine = FoldEngine(
        embedder, Rejected(), fallback=ScriptedPlanner({"ev-1": Step(["Passport renewal"])})
    )
    memory = engine.new_memory("alice")
    result = await engine.fold(memory, make_event("x", id="ev-1"))
    assert (result.status, result.planner) == ("fallback", "scripted")
    assert memory.graph.count(NodeKind.CONCEPT) == 1


def test_event_timestamps_may_use_any_offset() -> None:
    event = RawEvent.model_validate({**GOOD, "ts": "2026-11-02T10:00:00+01:00"})
    assert event.ts == datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
