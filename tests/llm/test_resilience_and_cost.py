"""Circuit breaker, daily budget, near-duplicate skip and per-tenant concurrency."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from llm_helpers import Rig, fold, new_concept, plan_json

from foldmem_testing.fakeserver import Reply
from schemas.graph import EdgeKind, NodeKind
from topologies.llm.breaker import BreakerState, CircuitBreaker
from topologies.memory import event_node_id

VALID = plan_json(*new_concept("Standup"))


def test_breaker_state_machine() -> None:
    now = [0.0]
    breaker = CircuitBreaker(failure_threshold=2, reset_s=10.0, clock=lambda: now[0])
    assert breaker.allow()
    breaker.record_failure()
    assert breaker.state == BreakerState.CLOSED
    breaker.record_failure()
    assert breaker.state == BreakerState.OPEN and not breaker.allow()
    now[0] = 10.0
    assert breaker.state == BreakerState.HALF_OPEN
    assert breaker.allow()  # the probe
    assert not breaker.allow()  # only one probe at a time
    breaker.record_failure()  # probe failed: open again
    assert breaker.state == BreakerState.OPEN
    now[0] = 20.0
    assert breaker.allow()
    breaker.record_success()
    assert breaker.state == BreakerState.CLOSED and breaker.allow()


async def test_breaker_opens_switches_to_heuristic_and_recovers(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig(max_retries=0)
    clock = [0.0]  # the breaker's clock is injected: no sleeping, no timing flakiness
    rig.planner.breaker = CircuitBreaker(failure_threshold=2, reset_s=30.0, clock=lambda: clock[0])
    rig.fake.push(Reply(status=500), Reply(status=502))
    await fold(rig, make_event("one"))
    await fold(rig, make_event("two"))
    assert rig.planner.breaker.state == BreakerState.OPEN
    calls = rig.fake.calls
    await fold(rig, make_event("three"))  # open: heuristic, no request
    assert rig.fake.calls == calls and rig.heuristic.calls == 3
    assert rig.ledger.tenant("alice")["skipped_breaker"] == 1
    clock[0] += 31.0
    rig.fake.push(Reply(status=500))  # half-open probe fails -> open again
    await fold(rig, make_event("four"))
    assert rig.planner.breaker.state == BreakerState.OPEN and rig.fake.calls == calls + 1
    clock[0] += 31.0
    rig.fake.push(Reply(content=VALID))  # model is back: probe succeeds -> closed
    await fold(rig, make_event("five"))
    assert rig.heuristic.calls == 4  # "five" was planned by the model
    assert rig.planner.breaker.state == BreakerState.CLOSED
    rig.fake.push(Reply(content=VALID))
    await fold(rig, make_event("six"))
    assert rig.fake.calls == calls + 3


async def test_budget_exhaustion_falls_back_to_heuristic(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig(daily_token_budget=50)
    rig.fake.push(Reply(content=VALID))
    await fold(rig, make_event("first", tenant="alice"))
    assert rig.ledger.spent_today("alice") > 50
    await fold(rig, make_event("second", tenant="alice"))
    assert rig.fake.calls == 1 and rig.heuristic.calls == 1
    assert rig.ledger.tenant("alice")["skipped_budget"] == 1
    rig.fake.push(Reply(content=VALID))
    await fold(rig, make_event("other tenant", tenant="bob"))  # budgets are per tenant
    assert rig.fake.calls == 2


async def test_near_duplicate_event_reinforces_without_a_call(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig()
    rig.fake.push(Reply(content=VALID))
    first = make_event("Daily standup with the Flux team", "Room Ostkreuz")
    await fold(rig, first)
    concept = next(rig.memory().graph.nodes(NodeKind.CONCEPT))
    assert rig.fake.calls == 1
    again = make_event("daily  standup with the FLUX team", "Room   Ostkreuz")  # same, normalised
    result = await fold(rig, again)
    assert rig.fake.calls == 1 and rig.heuristic.calls == 0 and result.status == "folded"
    graph = rig.memory().graph
    edge = graph.edge(event_node_id("alice", again.id), concept.id, EdgeKind.REINFORCES)
    assert edge is not None
    assert graph.node(concept.id).reinforcement >= 1
    assert rig.ledger.tenant("alice")["skipped_duplicate"] == 1
    rig.fake.push(Reply(content=VALID))
    await fold(rig, make_event("Dentist appointment", "lower left molar"))  # not a duplicate
    assert rig.fake.calls == 2


async def test_duplicate_of_unfolded_or_conceptless_event_makes_no_call(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig()
    rig.fake.push(Reply(content=json.dumps({"ops": [], "notes": "nothing"})))
    await fold(rig, make_event("Kiezbrief newsletter"))
    asked = rig.heuristic.calls  # whether it agrees that there is nothing to do
    await fold(rig, make_event("Kiezbrief newsletter"))
    assert rig.fake.calls == 1 and rig.heuristic.calls == asked + 1  # heuristic, not the model


async def test_tenants_plan_concurrently_within_the_bound(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig(concurrency=3)
    rig.fake.latency = 0.15

    async def tenant_stream(tenant: str) -> None:
        for i in range(3):  # one tenant's events strictly in order
            await fold(rig, make_event(f"{tenant} topic {i} unique words {i * 7}", tenant=tenant))

    await asyncio.gather(*(tenant_stream(f"t{i}") for i in range(6)))
    assert rig.fake.calls == 18
    assert rig.fake.max_in_flight == 3
    assert all(len(rig.memory(f"t{i}").pending_events()) == 0 for i in range(6))
