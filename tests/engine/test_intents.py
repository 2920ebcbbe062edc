"""Intent emergence, lifecycle and the adaptive per-category threshold (SPEC 2.6)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from fold_helpers import ScriptedPlanner, Step, concept_id, dump

from schemas.errors import InvalidTransitionError, NotFoundError
from schemas.events import RawEvent
from schemas.graph import EdgeKind, NodeKind
from schemas.intents import IntentStatus
from topologies.config import EngineConfig, IntentConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine, FoldResult
from topologies.executor import time_node_id
from topologies.memory import TenantMemory, event_node_id

MakeEvent = Callable[..., RawEvent]
TRIP = datetime(2026, 12, 18, 8, 0, tzinfo=UTC)
KEY = "intent_threshold:travel"

SCRIPT = {
    "flights": Step(["Lisbon trip"], category="travel", deadline=TRIP, deadline_on="Lisbon trip"),
    "passport": Step(["Passport renewal"], category="travel"),
    "photos": Step(["Passport renewal", "Lisbon trip"], category="travel"),
    "appointment": Step(["Passport renewal"], category="travel"),
    "dentist": Step(["Dental care"], category="health"),
    "dentist-2": Step(["Dental care"], category="health"),
}


def stream(make_event: MakeEvent) -> list[RawEvent]:
    """Two weeks of a user planning a trip, with a dentist thread as noise. The trip is a goal:
    a booking with a date ahead, and a commitment two days later."""
    return [
        make_event("Flights booked: Lisbon, 18 Dec", id="flights", hours=0),
        make_event("Dentist: cleaning on Monday", id="dentist", hours=10),
        make_event(
            "My passport expires in November",
            "I need to renew the passport before the trip.",
            id="passport",
            hours=48,
        ),
        make_event("Passport photos for the Lisbon trip", id="photos", hours=96),
        make_event("Dentist follow-up", id="dentist-2", hours=120),
        make_event("Renewal appointment booked", id="appointment", hours=200),
    ]


def make_engine(embedder: HashingEmbedder, config: EngineConfig | None = None) -> FoldEngine:
    return FoldEngine(embedder, ScriptedPlanner(SCRIPT), config or EngineConfig())


async def fold_all(
    engine: FoldEngine, memory: TenantMemory, events: list[RawEvent]
) -> dict[str, FoldResult]:
    return {event.id: await engine.fold(memory, event) for event in events}


def only_intent(memory: TenantMemory) -> str:
    (intent,) = memory.graph.ids(NodeKind.INTENT)
    return intent


async def with_intent(
    embedder: HashingEmbedder, make_event: MakeEvent, config: EngineConfig | None = None
) -> tuple[FoldEngine, TenantMemory, list[RawEvent], str]:
    """Alice's first four events folded: the engine, her memory, the stream and its one intent."""
    engine = make_engine(embedder, config)
    memory = engine.new_memory("alice")
    events = stream(make_event)
    await fold_all(engine, memory, events[:4])
    return engine, memory, events, only_intent(memory)


# ---------------------------------------------------------------------- emergence
async def test_an_intent_crystallises_when_two_linked_concepts_gather_evidence(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = make_engine(embedder)
    memory = engine.new_memory("alice")
    results = await fold_all(engine, memory, stream(make_event)[:4])

    assert [r.messages for r in (results["flights"], results["passport"])] == [[], []]
    (message,) = results["photos"].messages
    intent = message.intent
    assert message.type == "intent.created" and message.previous_status is None
    assert intent.title == "Renew the passport before the trip (by 18 Dec)"
    assert intent.category == "travel" and intent.status == IntentStatus.PENDING
    assert sorted(intent.supporting_labels) == ["Lisbon trip", "Passport renewal"]
    assert intent.evidence_event_ids == ["flights", "passport", "photos"]
    assert intent.deadline == TRIP
    assert intent.density >= intent.threshold == pytest.approx(3.0)
    assert "Passport renewal" in intent.description
    assert '"My passport expires in November" (4 Nov)' in intent.description
    assert intent.description.endswith("Due by 18 Dec 2026.")

    node_id = intent.id
    for label in ("Lisbon trip", "Passport renewal"):
        assert memory.graph.edge(concept_id(memory, label), node_id, EdgeKind.TRIGGERS)
    assert memory.graph.edge(time_node_id("alice", TRIP), node_id, EdgeKind.DEADLINE_FOR)
    assert memory.graph.edge(event_node_id("alice", "photos"), node_id, EdgeKind.GROUNDS)


async def test_the_title_is_the_evidence_action_wherever_the_deadline_was_found(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    script = {**SCRIPT, "flights": Step(["Lisbon trip"], category="travel", deadline=TRIP)}
    engine = FoldEngine(embedder, ScriptedPlanner(script))
    memory = engine.new_memory("alice")
    results = await fold_all(engine, memory, stream(make_event)[:4])
    (message,) = results["photos"].messages
    assert message.intent.title == "Renew the passport before the trip (by 18 Dec)"
    assert message.intent.deadline == TRIP


async def test_an_earlier_deadline_moves_the_intent_its_title_and_its_description(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    visa = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
    script = {
        **SCRIPT,
        "visa": Step(
            ["Passport renewal"], category="travel", deadline=visa, deadline_on="Passport renewal"
        ),
    }
    engine = FoldEngine(embedder, ScriptedPlanner(script))
    memory = engine.new_memory("alice")
    await fold_all(engine, memory, stream(make_event)[:4])
    intent = only_intent(memory)
    assert memory.graph.node(intent).title.endswith("(by 18 Dec)")

    await engine.fold(memory, make_event("Visa form due before the passport", id="visa", hours=150))
    node = memory.graph.node(intent)
    assert node.deadline == visa
    assert node.title == "Renew the passport before the trip (by 4 Dec)"
    assert "Due by 4 Dec 2026." in node.text and "18 Dec 2026" not in node.text


async def test_density_is_evidence_times_connectivity(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = make_engine(embedder)
    memory = engine.new_memory("alice")
    await fold_all(engine, memory, stream(make_event)[:4])
    node = memory.graph.node(only_intent(memory))
    # Lisbon: GROUNDS(flights)=1.0 decayed 4 days + REINFORCES(photos)=0.8 fresh;
    # Passport: GROUNDS(passport)=1.0 decayed 2 days + 0.8; the pair is linked: connectivity 1.
    decay = 0.02
    expected = (1.0 * pow(2.718281828459045, -decay * 4) + 0.8) + (
        1.0 * pow(2.718281828459045, -decay * 2) + 0.8
    )
    assert node.attrs["density"] == pytest.approx(expected, rel=1e-4)
    assert node.attrs["connectivity"] == 1.0


async def test_unlinked_or_single_concepts_do_not_emerge(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = make_engine(embedder)
    memory = engine.new_memory("alice")
    events = stream(make_event)
    await fold_all(engine, memory, [events[0], events[1], events[2], events[4]])
    assert memory.graph.count(NodeKind.INTENT) == 0  # lots of evidence, no converging cluster


async def test_an_open_intent_is_reinforced_instead_of_duplicated(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = make_engine(embedder)
    memory = engine.new_memory("alice")
    results = await fold_all(engine, memory, stream(make_event))
    intent = only_intent(memory)
    assert results["appointment"].messages == []
    node = memory.graph.node(intent)
    assert node.reinforcement == 1
    assert memory.graph.edge(event_node_id("alice", "appointment"), intent, EdgeKind.REINFORCES)
    view = results["photos"].messages[0].intent
    assert view.id == intent


async def test_a_high_category_threshold_suppresses_emission(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = make_engine(embedder)
    memory = engine.new_memory("alice")
    memory.set_meta(KEY, 8.0)
    await fold_all(engine, memory, stream(make_event))
    assert memory.graph.count(NodeKind.INTENT) == 0
    assert memory.meta[KEY] == 8.0


# ------------------------------------------------------------------ stable ids
async def test_replaying_the_stream_yields_the_same_intent_ids_and_graph(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    events = stream(make_event)
    first, second = make_engine(embedder), make_engine(HashingEmbedder(dim=256))
    m1, m2 = first.new_memory("alice"), second.new_memory("alice")
    await fold_all(first, m1, events)
    await fold_all(second, m2, events)
    assert m1.graph.ids(NodeKind.INTENT) == m2.graph.ids(NodeKind.INTENT) != set()
    assert dump(m1) == dump(m2)


# -------------------------------------------------------------------- lifecycle
async def test_lifecycle_pending_scheduled_resolved_emits_status_changes(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine, memory, events, intent = await with_intent(embedder, make_event)
    now = events[3].ts

    _, scheduled = engine.set_intent_status(memory, intent, IntentStatus.ACTION_SCHEDULED, now)
    changes, resolved = engine.set_intent_status(
        memory, intent, IntentStatus.RESOLVED, now, note="renewed at the consulate"
    )
    assert [(m.type, m.previous_status, m.intent.status) for m in scheduled + resolved] == [
        ("intent.status_changed", IntentStatus.PENDING, IntentStatus.ACTION_SCHEDULED),
        ("intent.status_changed", IntentStatus.ACTION_SCHEDULED, IntentStatus.RESOLVED),
    ]
    node = memory.graph.node(intent)
    assert node.attrs["note"] == "renewed at the consulate"
    assert [n["status"] for n in node.attrs["status_notes"]] == ["action_scheduled", "resolved"]
    assert intent in changes.nodes


async def test_invalid_transitions_are_refused(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine, memory, events, intent = await with_intent(embedder, make_event)
    now = events[3].ts
    engine.set_intent_status(memory, intent, IntentStatus.REJECTED, now)
    before = dump(memory)
    for target in (IntentStatus.PENDING, IntentStatus.RESOLVED, IntentStatus.DEFERRED):
        with pytest.raises(InvalidTransitionError, match="cannot go from rejected"):
            engine.set_intent_status(memory, intent, target, now)
    memory.begin()
    with pytest.raises(InvalidTransitionError):
        from topologies.scope import FoldScope

        engine.emergence.set_status(
            memory, FoldScope("alice", "", None, now), intent, IntentStatus.PENDING, ""
        )
    memory.rollback()
    with pytest.raises(NotFoundError):
        engine.set_intent_status(memory, "i_missing", IntentStatus.RESOLVED, now)
    assert dump(memory) == before


async def test_a_deferred_intent_can_come_back_to_pending(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine, memory, events, intent = await with_intent(embedder, make_event)
    now = events[3].ts
    engine.set_intent_status(memory, intent, IntentStatus.DEFERRED, now)
    _, messages = engine.set_intent_status(memory, intent, IntentStatus.PENDING, now)
    assert messages[0].previous_status == IntentStatus.DEFERRED
    assert memory.graph.node(intent).status == IntentStatus.PENDING


async def test_a_resolved_intent_does_not_reemerge_from_its_own_evidence(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine, memory, events, intent = await with_intent(embedder, make_event)
    engine.set_intent_status(memory, intent, IntentStatus.RESOLVED, events[3].ts)
    await fold_all(engine, memory, events[4:])
    assert memory.graph.count(NodeKind.INTENT) == 1


# ------------------------------------------------------------ threshold adaptation
async def test_emission_raises_the_category_threshold_toward_the_density(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = make_engine(embedder)
    memory = engine.new_memory("alice")
    await fold_all(engine, memory, stream(make_event)[:4])
    density = memory.graph.node(only_intent(memory)).attrs["density"]
    assert memory.meta[KEY] == pytest.approx(0.7 * 3.0 + 0.3 * density, abs=1e-5)
    assert "intent_threshold:health" not in memory.meta


@pytest.mark.parametrize(
    ("status", "factor"),
    [
        (IntentStatus.RESOLVED, 0.9),
        (IntentStatus.ACTION_SCHEDULED, 0.9),
        (IntentStatus.REJECTED, 1.3),
        (IntentStatus.DEFERRED, None),
    ],
)
async def test_feedback_moves_the_threshold_by_ema(
    embedder: HashingEmbedder, make_event: MakeEvent, status: IntentStatus, factor: float | None
) -> None:
    engine, memory, events, intent = await with_intent(embedder, make_event)
    density = memory.graph.node(intent).attrs["density"]
    before = memory.meta[KEY]

    changes, _ = engine.set_intent_status(memory, intent, status, events[3].ts)
    if factor is None:
        assert memory.meta[KEY] == before and KEY not in changes.meta
    else:
        assert memory.meta[KEY] == pytest.approx(0.7 * before + 0.3 * factor * density, abs=1e-5)
        assert changes.meta[KEY] == memory.meta[KEY]


async def test_the_threshold_is_clamped(embedder: HashingEmbedder, make_event: MakeEvent) -> None:
    config = EngineConfig(intents=IntentConfig(max_threshold=3.2, min_threshold=2.9))
    engine, memory, events, intent = await with_intent(embedder, make_event, config)
    engine.set_intent_status(memory, intent, IntentStatus.REJECTED, events[3].ts)
    assert memory.meta[KEY] == 3.2


async def test_a_rejection_makes_the_next_emission_of_the_category_harder(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine, memory, events, intent = await with_intent(embedder, make_event)
    emitted_at = memory.meta[KEY]
    engine.set_intent_status(memory, intent, IntentStatus.REJECTED, events[3].ts)
    assert memory.meta[KEY] > emitted_at > 3.0
