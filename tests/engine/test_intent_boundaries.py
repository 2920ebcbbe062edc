"""Intents only for goals, one pending intent per goal, stale intents expire (issue 11)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from fold_helpers import ScriptedPlanner, Step, concept_id

from schemas.events import RawEvent
from schemas.graph import EdgeKind, NodeKind
from schemas.intents import IntentStatus, can_transition
from schemas.plans import AddEdge, AddNode, UpdatePlan
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine, FoldResult
from topologies.goals import GoalEvidence, event_signals
from topologies.intent_boundaries import DUE_KEY, serves_other_goal
from topologies.memory import TenantMemory, event_node_id
from topologies.scope import FoldScope

MakeEvent = Callable[..., RawEvent]
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)

SCRIPT = {
    "flights": Step(["Lisbon trip"], category="travel"),
    "passport": Step(["Passport renewal"], category="travel"),
    "photos": Step(["Passport renewal", "Lisbon trip"], category="travel"),
    "insurance": Step(["Travel insurance", "Lisbon trip"], category="travel"),
    "late": Step(["Passport renewal"], category="travel"),
    "gallery": Step(["Lisbon trip"], category="travel"),
    "pasta": Step(["Cooking"], category="home"),
}
GOAL = {  # a booking with a date ahead, then a commitment on another day
    "flights": "Flights booked: Lisbon, 18 Dec",
    "passport": "My passport expires in November, I need to renew it",
    "photos": "Passport photos for the Lisbon trip",
}
CHATTER = {  # the same themes, talked about
    "flights": "Lisbon was lovely, the old town at night",
    "passport": "Funny old passport picture from school",
    "photos": "Photos of the Lisbon tram and the passport office queue",
}


def engine_with(**intents: float) -> FoldEngine:
    config = EngineConfig()
    config = config.model_copy(update={"intents": config.intents.model_copy(update=intents)})
    return FoldEngine(HashingEmbedder(dim=256), ScriptedPlanner(dict(SCRIPT)), config)


def event(event_id: str, text: str, days: float, source: str = "note") -> RawEvent:
    return RawEvent(
        id=event_id, tenant="alice", source=source, ts=T0 + timedelta(days=days), title=text
    )


async def fold(engine: FoldEngine, memory: TenantMemory, *events: RawEvent) -> list[FoldResult]:
    return [await engine.fold(memory, e) for e in events]


def trip(texts: dict[str, str]) -> list[RawEvent]:
    return [
        event("flights", texts["flights"], 0),
        event("passport", texts["passport"], 2),
        event("photos", texts["photos"], 4),
    ]


def intents(memory: TenantMemory) -> list[str]:
    return sorted(memory.graph.ids(NodeKind.INTENT))


# ------------------------------------------------------------------------ goals only
async def test_chatter_about_linked_themes_yields_no_intent() -> None:
    engine = engine_with()
    memory = engine.new_memory("alice")
    results = await fold(engine, memory, *trip(CHATTER))
    assert intents(memory) == []
    assert all(r.messages == [] for r in results)
    # the same evidence without the goal rule would have crystallised: the rule is what stops it
    permissive = engine_with(goal_min_score=0.0)
    other = permissive.new_memory("alice")
    await fold(permissive, other, *trip(CHATTER))
    assert len(intents(other)) == 1


async def test_a_booking_with_a_date_ahead_and_a_commitment_make_a_goal() -> None:
    engine = engine_with()
    memory = engine.new_memory("alice")
    results = await fold(engine, memory, *trip(GOAL))
    (message,) = results[-1].messages
    assert message.type == "intent.created"
    node = memory.graph.node(message.intent.id)
    assert node.attrs["goal_score"] >= EngineConfig().intents.goal_min_score
    assert memory.meta[DUE_KEY] == {node.id: (T0 + timedelta(days=34)).isoformat()}


@pytest.mark.parametrize(
    ("text", "ahead", "commitment", "problem"),
    [
        ("Dentist appointment on 14 Nov at 10:00", True, True, False),
        ("I need to renew my passport", False, True, False),
        ("We'll book the venue by Friday", True, True, False),
        ("The bathroom ceiling is leaking again", False, False, True),
        ("Lovely sunset at the beach today", False, False, False),
        ("Confirming Thursday 23 April at 15:00 for the demo", True, True, False),
        ("Please plan for live re-routing of the trucks", False, True, False),
        ("SEV-2 declared: p99 at 28 s, rolling back to 4.9.3", False, False, True),
        ("The integration test timed out again, it is flaky", False, False, True),
        ("Knee is swollen this morning, ice every two hours", False, False, True),
        ("Physio: girth re-check after the flare", False, False, True),
        ("Ankle sprained on the stairs, still sore", False, False, True),
    ],
)
def test_goal_cues_of_one_event(text: str, ahead: bool, commitment: bool, problem: bool) -> None:
    node = event("e", text, 0)
    from topologies.engine import event_to_node

    signals = event_signals(event_to_node(node, "n"))
    assert (signals.ahead is not None, signals.commitment, signals.problem) == (
        ahead,
        commitment,
        problem,
    )


def test_a_problem_once_is_an_incident_on_several_days_a_goal() -> None:
    from topologies.engine import event_to_node

    evidence = GoalEvidence()
    first = event_to_node(event("a", "The heating failed", 0), "a")
    evidence.add(first, event_signals(first))
    assert evidence.score < 1.0
    for day in (3, 6):
        again = event_to_node(event(f"d{day}", "Heating failed again, still broken", day), "x")
        evidence.add(again, event_signals(again))
    assert evidence.score >= 1.0


def test_a_dated_schedule_without_a_commitment_is_no_plan() -> None:
    """A note of what happens until a date ("aspirin until 14 May") names a date ahead, but
    the person commits to nothing: it is a schedule, not a goal, whatever the sources."""
    from topologies.engine import event_to_node

    schedule = [
        event("meds", "Ibuprofen at 8, 2 and 8, aspirin until 14 Nov for the clot risk", 0),
        event("walgreens", "Pharmacist: stop the ibuprofen by 10 Nov", 1, "calendar"),
    ]
    evidence = GoalEvidence()
    for raw in schedule:
        node = event_to_node(raw, raw.id)
        evidence.add(node, event_signals(node))
    assert len(evidence.deadlines) == 2 and not evidence.commitments
    assert evidence.score < EngineConfig().intents.goal_min_score
    committed = event_to_node(event("plan", "I need to book the post-op visit by 9 Nov", 2), "p")
    evidence.add(committed, event_signals(committed))
    assert evidence.score >= EngineConfig().intents.goal_min_score


# ---------------------------------------------------------------- one intent per goal
async def test_a_would_be_duplicate_reinforces_the_pending_intent_and_emits_nothing() -> None:
    engine = engine_with()
    memory = engine.new_memory("alice")
    await fold(engine, memory, *trip(GOAL))
    (intent,) = intents(memory)
    # a new theme, linked to the trip, whose cluster's evidence lies mostly on the trip's themes
    (result,) = await fold(
        engine, memory, event("insurance", "Need to buy travel insurance for Lisbon", 5)
    )
    assert result.messages == []
    assert intents(memory) == [intent]
    insurance = concept_id(memory, "Travel insurance")
    assert memory.graph.edge(insurance, intent, EdgeKind.TRIGGERS) is not None  # it joined
    assert memory.graph.edge(event_node_id("alice", "insurance"), intent, EdgeKind.REINFORCES)


async def test_a_theme_serving_a_goal_is_not_pulled_into_another() -> None:
    engine = engine_with()
    memory = engine.new_memory("alice")
    await fold(engine, memory, *trip(GOAL))
    (intent,) = intents(memory)
    trip_concepts = {e.src for e in memory.graph.in_edges(intent, EdgeKind.TRIGGERS)}
    # a second goal elsewhere: cooking class booked for a date ahead, two sources
    cooking = [
        event("pasta", "Booked a pasta cooking class on 20 Nov", 6, "email"),
        event("pasta-2", "Cooking class: need to bring an apron", 7, "note"),
        event("pasta-3", "Reminder: cooking class on 20 Nov", 8, "calendar"),
    ]
    script = engine.planner.script  # type: ignore[attr-defined]
    script["pasta-2"] = script["pasta-3"] = Step(["Cooking"], category="home")
    await fold(engine, memory, *cooking)
    for other in set(intents(memory)) - {intent}:
        support = {e.src for e in memory.graph.in_edges(other, EdgeKind.TRIGGERS)}
        assert not support & trip_concepts


async def test_a_concept_triggering_an_open_intent_serves_that_goal_and_no_other() -> None:
    engine = engine_with()
    memory = engine.new_memory("alice")
    await fold(engine, memory, *trip(GOAL))
    (intent,) = intents(memory)
    passport = concept_id(memory, "Passport renewal")
    assert serves_other_goal(memory, passport, None)  # a would-be new intent may not take it
    assert serves_other_goal(memory, passport, "i_some_other_intent")
    assert not serves_other_goal(memory, passport, intent)  # its own goal may


async def supporting_labels(**config: float) -> set[str]:
    """The trip's goal folded after three cooking events, the trip's photo event also landing
    on the cooking theme (an association): the labels of the intent's supporting concepts."""
    engine = engine_with(**config)
    script = engine.planner.script  # type: ignore[attr-defined]
    cooking = [
        "Pasta dough: flour and eggs",
        "Tomato sauce simmering",
        "Fresh basil pesto",
        "Risotto needs constant stirring",
        "Sourdough starter fed",
    ]
    for n in range(len(cooking)):
        script[f"pasta-{n}"] = Step(["Cooking"], category="home")
    script["photos"] = Step(["Passport renewal", "Lisbon trip", "Cooking"], category="travel")
    memory = engine.new_memory("alice")
    pasta = [event(f"pasta-{n}", text, n / 2 - 3) for n, text in enumerate(cooking)]
    await fold(engine, memory, *pasta, *trip(GOAL))
    (intent,) = intents(memory)
    graph = memory.graph
    return {graph.node(e.src).title for e in graph.in_edges(intent, EdgeKind.TRIGGERS)}


async def test_a_linked_theme_about_something_else_does_not_support_the_goal() -> None:
    # the hashing embedder's topic vectors of two themes sharing one event score about 0.25
    assert "Cooking" not in await supporting_labels(support_similarity=0.3)
    # the rule is what keeps it out: without it the association makes it a support
    assert "Cooking" in await supporting_labels(support_similarity=-1.0)


async def test_the_same_goal_reached_through_other_concepts_reinforces_the_pending_intent() -> None:
    engine = engine_with()
    # no completion links: the second set of concepts is not linked to the first at all, as
    # when an embedder sees no likeness between the two (the hashing embedder)
    engine.config.consolidation.completion_similarity = 1.01
    script = engine.planner.script  # type: ignore[attr-defined]
    script["office"] = Step(["Passport office"], category="admin")
    script["office-2"] = Step(["Passport office", "Photo booth"], category="admin")
    script["office-3"] = Step(["Photo booth"], category="admin")
    memory = engine.new_memory("alice")
    await fold(engine, memory, *trip(GOAL))
    (intent,) = intents(memory)
    more = [
        event(
            "office",
            "Passport office appointment booked for 12 Nov, bring the old passport for the "
            "Lisbon trip",
            5,
            "email",
        ),
        event("office-2", "I need to get biometric photos for the passport before 12 Nov", 6),
        event("office-3", "Photo booth at the passport office: I'll go on 11 Nov", 7, "calendar"),
    ]
    results = await fold(engine, memory, *more)
    # the titles share the passport, the evidence the Lisbon trip: one goal, no second intent
    assert [m for r in results for m in r.messages] == []
    assert intents(memory) == [intent]
    booth = concept_id(memory, "Photo booth")
    assert memory.graph.edge(booth, intent, EdgeKind.TRIGGERS) is not None


def unlinked_engine(**steps: Step) -> FoldEngine:
    """An engine whose concepts get no completion links (as when an embedder sees no likeness
    between two sets of concepts of one goal), with these script steps added."""
    engine = engine_with()
    engine.config.consolidation.completion_similarity = 1.01
    engine.planner.script.update(steps)  # type: ignore[attr-defined]
    return engine


def mail(event_id: str, title: str, days: float, body: str = "", **attrs: str) -> RawEvent:
    return RawEvent(
        id=event_id,
        tenant="alice",
        source="email",
        ts=T0 + timedelta(days=days),
        title=title,
        body=body,
        attrs=dict(attrs),
    )


async def test_a_would_be_intent_from_the_same_thread_reinforces_the_pending_intent() -> None:
    engine = unlinked_engine(
        seat=Step(["Seat upgrade"], category="admin"),
        **{
            "seat-2": Step(["Seat upgrade", "Lounge access"], category="admin"),
            "seat-3": Step(["Lounge access"], category="admin"),
        },
    )
    memory = engine.new_memory("alice")
    booking = mail("flights", GOAL["flights"], 0, thread_id="thr-booking")
    await fold(engine, memory, booking, *trip(GOAL)[1:])
    (intent,) = intents(memory)
    more = [
        mail(
            "seat",
            "Re: your booking",
            5,
            "An upgrade to business class is offered; I must confirm it by 10 Dec",
            thread_id="thr-booking",
        ),
        event("seat-2", "I need to decide on the upgrade and the lounge before 10 Dec", 6),
        event("seat-3", "Lounge access bought for 10 Dec, I will pay on arrival", 7, "calendar"),
    ]
    results = await fold(engine, memory, *more)
    # the titles share no noun ("Decide on the upgrade" beside the passport), the evidence
    # one conversation with the airline: one goal, no second intent
    assert [m for r in results for m in r.messages] == []
    assert intents(memory) == [intent]


OFFSITE_DAY = datetime(2026, 11, 20, tzinfo=UTC)
OFFSITE = {
    "venue": Step(["Venue"], category="work", deadline=OFFSITE_DAY),
    "quinta": Step(["Venue", "Catering"], category="work"),
    "loft": Step(["Catering"], category="work"),
    "budget": Step(["Budget request"], category="work", deadline=OFFSITE_DAY),
    "budget-2": Step(["Budget request", "Expense policy"], category="work"),
    "budget-3": Step(["Expense policy"], category="work"),
}


def offsite_venue() -> list[RawEvent]:
    return [
        event("venue", "Offsite to-do: the Lisbon offsite is on 20 Nov, I must book a venue", 0),
        mail("quinta", "Quinta in Sintra", 1, "They hold 20 Nov for us; I need to confirm it"),
        event("loft", "Catering for the loft confirmed for 20 Nov, I will pay the deposit", 2),
    ]


async def test_goals_due_the_same_day_on_one_dated_occasion_are_one_goal() -> None:
    engine = unlinked_engine(**OFFSITE)
    memory = engine.new_memory("alice")
    await fold(engine, memory, *offsite_venue())
    (intent,) = intents(memory)
    budget = [
        mail("budget", "Budget request: team offsite, Lisbon 20 Nov", 3, "Please approve it."),
        event("budget-2", "I need the budget approved before 20 Nov, I must send the form", 4),
        event("budget-3", "Expense policy: I will keep the receipts until 20 Nov", 5, "calendar"),
    ]
    results = await fold(engine, memory, *budget)
    # the budget and the venue are due the day of the offsite that both speak of (a heading
    # word and a place in common): one goal, no second intent
    assert [m for r in results for m in r.messages] == []
    assert intents(memory) == [intent]


async def test_goals_due_the_same_day_on_different_things_stay_two() -> None:
    engine = unlinked_engine(**OFFSITE)
    memory = engine.new_memory("alice")
    await fold(engine, memory, *offsite_venue())
    dentist = [
        mail("budget", "Dentist: crown fitting", 3, "Your crown can be fitted on 20 Nov."),
        event("budget-2", "I need the crown fitted before 20 Nov, I must call the practice", 4),
        event("budget-3", "Insurance form for the crown: I will send it by 20 Nov", 5, "calendar"),
    ]
    results = await fold(engine, memory, *dentist)
    # the same day, but the crown is no part of the offsite: a second goal is emitted
    assert [m.type for r in results for m in r.messages] == ["intent.created"]
    assert len(intents(memory)) == 2


# --------------------------------------------------------------------------- expiry
async def test_an_intent_expires_after_the_stale_horizon_and_the_expiry_is_emitted() -> None:
    engine = engine_with()
    memory = engine.new_memory("alice")
    await fold(engine, memory, *trip(GOAL))
    (intent,) = intents(memory)
    (quiet,) = await fold(engine, memory, event("pasta", "Spaghetti with garlic tonight", 33))
    assert quiet.messages == []  # 29 days after the last goal evidence: still pending
    (late,) = await fold(engine, memory, event("pasta-2", "Risotto tonight", 35))
    (message,) = late.messages
    assert message.type == "intent.status_changed"
    assert (message.previous_status, message.intent.status) == (
        IntentStatus.PENDING,
        IntentStatus.EXPIRED,
    )
    node = memory.graph.node(intent)
    assert "no new evidence for 31 days" in node.attrs["note"]
    assert memory.meta[DUE_KEY] == {}


async def test_the_stale_horizon_is_a_setting() -> None:
    engine = engine_with(stale_after_days=5.0)
    memory = engine.new_memory("alice")
    await fold(engine, memory, *trip(GOAL))
    (late,) = await fold(engine, memory, event("pasta", "Spaghetti with garlic tonight", 10))
    assert [m.intent.status for m in late.messages] == [IntentStatus.EXPIRED]


async def test_an_intent_expires_when_its_deadline_passed_long_ago() -> None:
    engine = engine_with(stale_after_days=365.0)
    memory = engine.new_memory("alice")
    script = engine.planner.script  # type: ignore[attr-defined]
    deadline = T0 + timedelta(days=10)
    script["flights"] = Step(["Lisbon trip"], category="travel", deadline=deadline)
    await fold(engine, memory, *trip(GOAL))
    (intent,) = intents(memory)
    assert memory.graph.node(intent).deadline == deadline
    (before,) = await fold(engine, memory, event("pasta", "Pasta tonight", 16))
    assert before.messages == []
    (after,) = await fold(engine, memory, event("pasta-2", "Pasta again", 18))
    assert [m.intent.status for m in after.messages] == [IntentStatus.EXPIRED]
    assert "passed" in memory.graph.node(intent).attrs["note"]


async def test_events_without_goal_cues_do_not_keep_an_intent_alive() -> None:
    engine = engine_with(stale_after_days=10.0)
    memory = engine.new_memory("alice")
    await fold(engine, memory, *trip(GOAL))
    (intent,) = intents(memory)
    # a Lisbon event with no cue reinforces the theme but does not move the goal
    await fold(engine, memory, event("gallery", "Lisbon gallery pictures", 8))
    (late,) = await fold(engine, memory, event("pasta", "Pasta tonight", 15))
    assert [m.intent.id for m in late.messages] == [intent]


async def test_new_goal_evidence_brings_an_expired_intent_back_instead_of_a_second_one() -> None:
    engine = engine_with(stale_after_days=5.0)
    memory = engine.new_memory("alice")
    await fold(engine, memory, *trip(GOAL))
    (intent,) = intents(memory)
    await fold(engine, memory, event("pasta", "Spaghetti tonight", 10))
    assert memory.graph.node(intent).status == IntentStatus.EXPIRED
    (back,) = await fold(
        engine, memory, event("late", "Passport appointment booked for 30 Nov, must go", 12)
    )
    assert intents(memory) == [intent]
    (message,) = back.messages
    assert (message.previous_status, message.intent.status) == (
        IntentStatus.EXPIRED,
        IntentStatus.PENDING,
    )
    assert intent in memory.meta[DUE_KEY]


async def test_the_user_can_close_or_reopen_an_expired_intent() -> None:
    assert can_transition(IntentStatus.PENDING, IntentStatus.EXPIRED)
    assert not can_transition(IntentStatus.DEFERRED, IntentStatus.EXPIRED)  # the user's choice
    engine = engine_with(stale_after_days=5.0)
    memory = engine.new_memory("alice")
    await fold(engine, memory, *trip(GOAL))
    (intent,) = intents(memory)
    await fold(engine, memory, event("pasta", "Spaghetti tonight", 10))
    now = T0 + timedelta(days=10)
    _, reopened = engine.set_intent_status(memory, intent, IntentStatus.PENDING, now)
    assert [m.previous_status for m in reopened] == [IntentStatus.EXPIRED]
    assert intent in memory.meta[DUE_KEY]
    engine.set_intent_status(memory, intent, IntentStatus.RESOLVED, now)
    assert memory.meta[DUE_KEY] == {}


async def test_expiry_rolls_back_with_a_failing_fold() -> None:
    engine = engine_with(stale_after_days=5.0)
    memory = engine.new_memory("alice")
    await fold(engine, memory, *trip(GOAL))
    (intent,) = intents(memory)
    late = event("pasta", "Spaghetti tonight", 10)
    engine.ingest(memory, late)
    node = event_node_id("alice", late.id)
    scope = FoldScope("alice", late.id, node, late.ts)
    meta = dict(memory.meta)
    memory.begin()
    assert engine.emergence.expire(memory, scope) == [intent]
    memory.rollback()
    assert memory.graph.node(intent).status == IntentStatus.PENDING
    assert memory.meta == meta


# ------------------------------------------------------------- one converging theme
SYMPTOM_RETURNS = [  # a knee swelling up again on four days, in notes, calendar and mail
    ("Knee is swollen this morning, 40.5 cm at the kneecap", "note"),
    ("Physio: girth re-check after the flare", "calendar"),
    ("RE: swelling after the split squats", "email"),
    ("Knee puffy and sore again after the stairs", "note"),
]
ROUTINE = [  # the same knee and the same sources, nothing wrong with it
    ("Knee measured 39 cm at the kneecap", "note"),
    ("Physio: girth re-check and the bike", "calendar"),
    ("RE: video of the split squats", "email"),
    ("Knee fine after the stairs", "note"),
]


@pytest.mark.parametrize(
    ("texts", "emerges"), [(SYMPTOM_RETURNS, True), (ROUTINE, False)], ids=["symptom", "routine"]
)
async def test_a_symptom_that_keeps_coming_back_is_a_goal_the_routine_is_not(
    texts: list[tuple[str, str]], emerges: bool
) -> None:
    """A body's symptom (swollen, a flare, sore) is a problem like a leak or a failing test:
    coming back on several days it is something the person keeps returning to and means to
    get over, so its theme becomes an intent; the same theme reported without a symptom stays
    a topic."""
    engine = FoldEngine(
        HashingEmbedder(dim=256),
        ScriptedPlanner({f"knee-{i}": Step(["Knee"], category="health") for i in range(4)}),
    )
    memory = engine.new_memory("alice")
    events = [event(f"knee-{i}", t, i, s) for i, (t, s) in enumerate(texts)]
    await fold(engine, memory, *events)
    assert len(intents(memory)) == (1 if emerges else 0)


def theme_events(sources: list[str]) -> list[RawEvent]:
    texts = [
        "Registered for the 10k race on 29 Nov",
        "Training plan: need to run three times a week",
        "Long run 15 km, race in two weeks",
        "Bib pickup for the 10k on 28 Nov",
    ]
    return [event(f"run-{i}", t, i, s) for i, (t, s) in enumerate(zip(texts, sources, strict=True))]


@pytest.mark.parametrize(
    ("sources", "emerges"),
    [(["email", "note", "calendar", "email"], True), (["note"] * 4, False)],
    ids=["several-sources", "one-source"],
)
async def test_one_theme_that_several_sources_converge_on_can_carry_a_goal(
    sources: list[str], emerges: bool
) -> None:
    engine = FoldEngine(
        HashingEmbedder(dim=256),
        ScriptedPlanner({f"run-{i}": Step(["10k race"], category="health") for i in range(4)}),
    )
    memory = engine.new_memory("alice")
    await fold(engine, memory, *theme_events(sources))
    assert len(intents(memory)) == (1 if emerges else 0)


async def test_a_plan_intent_on_one_theme_needs_several_sources_behind_it() -> None:
    """The executor's guard: one concept may back an intent only when its events come from
    several sources, so no single (injected) event conjures one."""
    from schemas.errors import PlanRejectedError

    for sources, accepted in ((["email", "note", "calendar", "note"], True), (["chat"] * 4, False)):
        engine = FoldEngine(HashingEmbedder(dim=256), ScriptedPlanner({}))
        memory = engine.new_memory("alice")
        events = theme_events(sources)
        for e in events:
            engine.ingest(memory, e)
        ids = [event_node_id("alice", e.id) for e in events]
        scope = FoldScope("alice", events[-1].id, ids[-1], events[-1].ts)
        memory.begin()
        engine.executor.apply(
            memory,
            UpdatePlan(
                ops=[
                    AddNode(ref="c", kind=NodeKind.CONCEPT, title="10k race"),
                    *(AddEdge(src=i, dst="c", kind=EdgeKind.GROUNDS) for i in ids),
                ]
            ),
            scope,
        )
        plan = UpdatePlan(
            ops=[
                AddNode(ref="i", kind=NodeKind.INTENT, title="Run the 10k"),
                AddEdge(src=scope.ref_ids["c"], dst="i", kind=EdgeKind.TRIGGERS),
            ]
        )
        if accepted:
            engine.executor.apply(memory, plan, scope)
            assert memory.graph.count(NodeKind.INTENT) == 1
        else:
            with pytest.raises(PlanRejectedError, match="at least 2 concepts"):
                engine.executor.apply(memory, plan, scope)
        memory.rollback()
