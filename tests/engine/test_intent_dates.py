"""An intent's date is the goal's own date, its title follows its evidence, and a goal seen
reached leaves pending (issue 11)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fold_helpers import ScriptedPlanner, Step

from schemas.events import RawEvent
from schemas.graph import EdgeKind, Node, NodeKind
from schemas.intents import IntentMessage, IntentStatus
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine, FoldResult
from topologies.memory import TenantMemory

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
RACE = datetime(2026, 11, 29, tzinfo=UTC)
BIB = datetime(2026, 11, 28, tzinfo=UTC)
PARTY = datetime(2026, 11, 14, 19, 30, tzinfo=UTC)


def event(event_id: str, text: str, at: datetime, source: str) -> RawEvent:
    return RawEvent(id=event_id, tenant="alice", source=source, ts=at, title=text)


async def fold(
    script: dict[str, Step], events: list[RawEvent], memory: TenantMemory | None = None
) -> tuple[TenantMemory, list[IntentMessage]]:
    """Fold the events into ``memory`` (a new one by default) by the script."""
    config = EngineConfig()  # one theme stays one concept here: no split of its members
    config.topics.split_min_members = 1000
    engine = FoldEngine(HashingEmbedder(dim=256), ScriptedPlanner(script), config)
    memory = memory if memory is not None else engine.new_memory("alice")
    results: list[FoldResult] = [await engine.fold(memory, e) for e in events]
    return memory, [m for r in results for m in r.messages]


def the_intent(memory: TenantMemory) -> Node:
    (intent,) = memory.graph.nodes(NodeKind.INTENT)
    return intent


# ------------------------------------------------------------------------ deadlines
async def test_the_deadline_is_the_day_the_evidence_keeps_naming_not_the_soonest() -> None:
    """The race on 29 Nov, not the bib pickup the day before it."""
    texts = [
        ("run-0", "I need to run the city 10k on 29 Nov in under 50 minutes", "note", RACE),
        ("run-1", "Registration confirmed: city 10k on 29 Nov, bib pickup 28 Nov", "email", BIB),
        ("run-2", "Long run 16 km, the 10k race is on 29 Nov", "calendar", RACE),
        ("run-3", "Tempo run: I'll hold 5:00/km on 29 Nov", "note", RACE),
    ]
    script = {i: Step(["10k race"], category="health", deadline=d) for i, _, _, d in texts}
    events = [event(i, t, T0 + timedelta(days=n), s) for n, (i, t, s, _) in enumerate(texts)]
    memory, _ = await fold(script, events)
    intent = the_intent(memory)
    assert intent.deadline is not None and intent.deadline.date() == RACE.date()
    assert intent.title.endswith("(by 29 Nov)")


async def test_of_two_days_named_as_often_the_deadline_is_the_one_written_first() -> None:
    """Every event names the race and the bib pickup the day before it, the race first (a
    registration's title, then its details): the goal's date is the race's."""
    texts = [
        ("run-0", "Registration confirmed: city 10k on 29 Nov. Bib pickup 28 Nov", "email", BIB),
        ("run-1", "Race info: city 10k on 29 Nov. Bib pickup is on 28 Nov", "email", RACE),
        ("run-2", "I need to be ready for the 10k on 29 Nov, bib pickup 28 Nov", "note", BIB),
        ("run-3", "I'll run the 10k on 29 Nov and pick up the bib on 28 Nov", "note", RACE),
    ]
    script = {i: Step(["10k race"], category="health", deadline=d) for i, _, _, d in texts}
    events = [event(i, t, T0 + timedelta(days=n), s) for n, (i, t, s, _) in enumerate(texts)]
    memory, _ = await fold(script, events)
    intent = the_intent(memory)
    assert intent.deadline is not None and intent.deadline.date() == RACE.date()


# ------------------------------------------------------------------------ resolution
def party(after: tuple[str, datetime]) -> tuple[dict[str, Step], list[RawEvent]]:
    texts = [
        ("p-0", "Surprise party for Leonie on 14 Nov at 19:30, please RSVP", "chat"),
        ("p-1", "Booked the back room at Café Lotte for 14 Nov for Leonie's party", "email"),
        ("p-2", "Leonie's party on 14 Nov: need to bring the card", "calendar"),
        ("p-3", "I'll buy candles for Leonie's party on 14 Nov", "note"),
    ]
    script = {i: Step(["Leonie's party"], category="social", deadline=PARTY) for i, _, _ in texts}
    events = [event(i, t, T0 + timedelta(days=n), s) for n, (i, t, s) in enumerate(texts)]
    script["after"] = Step(["Leonie's party"], category="social")
    return script, [*events, event("after", after[0], after[1], "chat")]


async def test_a_goal_whose_day_came_and_whose_evidence_says_it_happened_is_resolved() -> None:
    script, events = party(("Best birthday ever!!! Thank you all", PARTY + timedelta(hours=4)))
    memory, messages = await fold(script, events)
    intent = the_intent(memory)
    assert intent.status == IntentStatus.RESOLVED
    assert [m.type for m in messages] == ["intent.created", "intent.status_changed"]
    assert intent.attrs["note"].startswith("done: Best birthday ever")


async def test_thanks_before_the_goals_day_do_not_resolve_it() -> None:
    script, events = party(("Thank you all for paying your share", PARTY - timedelta(days=3)))
    memory, _ = await fold(script, events)
    assert the_intent(memory).status == IntentStatus.PENDING


async def test_a_step_done_on_its_day_does_not_resolve_a_goal_that_goes_on() -> None:
    """The goal's events still plan for a later day: a step was done, not the goal."""
    script, events = party(("Thank you all! The voucher I'll send by 20 Nov", PARTY))
    memory, _ = await fold(script, events)
    assert the_intent(memory).status == IntentStatus.PENDING


async def test_what_follows_a_goal_reached_on_its_themes_is_no_new_goal() -> None:
    """After the party, its costs are settled on the party's theme: the goal's aftermath,
    not a second intent to notify (one goal per theme within the stale horizon)."""
    script, events = party(("Best birthday ever!!! Thank you all", PARTY + timedelta(hours=4)))
    memory, _ = await fold(script, events)
    intent = the_intent(memory)
    assert intent.status == IntentStatus.RESOLVED
    (theme,) = [e.src for e in memory.graph.in_edges(intent.id, EdgeKind.TRIGGERS)]
    costs = [
        ("c-0", "I need to pay Jonas back 40 euros for the cake by 20 Nov", "note"),
        ("c-1", "Please send me 15 euros for the gift voucher by 20 Nov", "chat"),
        ("c-2", "Reminder: settle the money with Jonas by 20 Nov", "calendar"),
        ("c-3", "I'll transfer the cake money to Jonas by 20 Nov", "email"),
        ("c-4", "We need to split the room deposit by 20 Nov", "chat"),
    ]
    for n, (event_id, text, source) in enumerate(costs):
        script[event_id] = Step(["Shared costs", theme], category="social")  # the party's
        events.append(event(event_id, text, PARTY + timedelta(days=1 + n), source))
    memory, later = await fold(script, events[-len(costs) :], memory)
    assert later == []
    assert the_intent(memory).status == IntentStatus.RESOLVED


# ------------------------------------------------------------------------ titles
async def test_a_goal_first_seen_in_its_opening_step_is_renamed_as_its_evidence_grows() -> None:
    texts = [
        ("w-0", "Water stain on the bathroom ceiling: please locate the leak by 11 Nov", "email"),
        ("w-1", "Plumber booked for 11 Nov to locate the leak", "calendar"),
        ("w-2", "I need to make sure someone is home on 11 Nov for the plumber", "note"),
        ("w-3", "Leak found upstairs. The ceiling must be repaired before 18 Dec", "chat"),
        ("w-4", "I'll get the bathroom ceiling repaired before 18 Dec", "note"),
        ("w-5", "Painter booked: the bathroom ceiling will be repaired on 7 Dec", "email"),
        ("w-6", "We need to get the bathroom ceiling repaired before we travel on 18 Dec", "email"),
        ("w-7", "Reminder: the bathroom ceiling repair on 7 Dec", "calendar"),
        ("w-8", "Asked the landlord again: the ceiling must be repaired before 18 Dec", "email"),
    ]
    script = {i: Step(["Bathroom ceiling"], category="home") for i, _, _ in texts}
    events = [event(i, t, T0 + timedelta(days=n), s) for n, (i, t, s) in enumerate(texts)]
    memory, messages = await fold(script, events)
    assert [m.intent.title for m in messages if m.type == "intent.created"] == ["Locate the leak"]
    # the evidence doubled since: named for what it came to say
    assert the_intent(memory).title.startswith("Get the ceiling repaired")
