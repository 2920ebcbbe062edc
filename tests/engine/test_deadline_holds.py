"""A goal's deadline holds while its evidence grows (issue 11, a notifier's view): set from
what the goal's events say it is due by, it gives way only to a day the goal's object is given
by more of them, or to a move of the goal's own date; not to the day of an appointment, a step
or a neighbouring thing, however often these are named."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from fold_helpers import ScriptedPlanner, Step
from test_goal_titles import event, stored

from schemas.events import RawEvent
from schemas.graph import NodeKind
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.intents import _named_days
from topologies.memory import TenantMemory, event_node_id

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
FLIGHT = datetime(2026, 12, 18, 15, 40, tzinfo=UTC)
APPOINTMENT = datetime(2026, 11, 17, 10, 20, tzinfo=UTC)
DECK = datetime(2026, 11, 18, 12, 0, tzinfo=UTC)
SCREENS = datetime(2026, 11, 16, tzinfo=UTC)


async def deadlines_seen(
    script: dict[str, Step], events: list[RawEvent]
) -> tuple[TenantMemory, list[date]]:
    """Fold the events one by one; the intent's deadline day after each fold, once it has
    emerged (what a notifier subscribed to the intent would have read)."""
    config = EngineConfig()  # one theme stays one concept here: no split of its members
    config.topics.split_min_members = 1000
    engine = FoldEngine(HashingEmbedder(dim=256), ScriptedPlanner(script), config)
    memory = engine.new_memory("alice")
    seen: list[date] = []
    for raw in events:
        await engine.fold(memory, raw)
        for intent in memory.graph.nodes(NodeKind.INTENT):
            if intent.deadline is not None:
                seen.append(intent.deadline.date())
    return memory, seen


def stream(
    texts: list[tuple[str, str, str, datetime]], label: str
) -> tuple[dict[str, Step], list[RawEvent]]:
    script = {i: Step([label], category="work", deadline=d) for i, _, _, d in texts}
    events = [event(i, t, T0 + timedelta(days=n), s) for n, (i, t, s, d) in enumerate(texts)]
    return script, events


async def test_the_day_a_goal_is_due_by_holds_against_a_step_day_named_more_often() -> None:
    """The passport is needed before the flight on 18 Dec; the Bürgeramt appointment on
    17 Nov, a step towards it, comes to be named by more of the events than the flight: it is
    the day something happens on, not what the goal is due by."""
    slot = APPOINTMENT
    script, events = stream(
        [
            ("p-0", "I need a new passport before we fly on 18 Dec", "note", FLIGHT),
            (
                "p-1",
                "Deadline: new passport in hand before the flight on 18 Dec",
                "calendar",
                FLIGHT,
            ),
            ("p-2", "Passport appointment at the Buergeramt on Tue 17 Nov, 10:20", "email", slot),
            ("p-3", "Got a slot on 17 Nov for the passport, will ask for express", "chat", slot),
            ("p-4", "Biometric photo for the passport application on 17 Nov", "calendar", slot),
        ],
        "Passport",
    )
    memory, seen = await deadlines_seen(script, events)
    assert seen and set(seen) == {FLIGHT.date()}
    (intent,) = memory.graph.nodes(NodeKind.INTENT)
    assert intent.title.endswith("(by 18 Dec)")


async def test_a_due_day_of_another_thing_does_not_take_over_the_goals() -> None:
    """The deck is due by Wed 18 Nov; Legal's screens and the load test's re-run are due by
    Mon 16 Nov, named by more events of the theme: none of them speaks of the deck, so the
    deck stays due by the 18th."""
    script, events = stream(
        [
            ("d-0", "Please send me the review deck by Wed 18 Nov, 12:00", "email", DECK),
            ("d-1", "I need to write the review deck by 18 Nov", "note", DECK),
            ("d-2", "Legal needs the final screens by Mon 16 Nov to sign off", "chat", SCREENS),
            ("d-3", "Load test re-run by Mon 16 Nov at 07:00, results by noon", "chat", SCREENS),
            ("d-4", "Final price display copy due Mon 16 Nov", "email", SCREENS),
        ],
        "Go/no-go review",
    )
    _, seen = await deadlines_seen(script, events)
    assert seen and set(seen) == {DECK.date()}


async def test_a_day_the_goals_object_is_due_by_in_more_events_replaces_the_current_one() -> None:
    """The rule that holds a deadline is no wall: when more of the events that speak of the
    deck give it another day it is due by, that is the deck's day now."""
    earlier = datetime(2026, 11, 17, 12, 0, tzinfo=UTC)
    script, events = stream(
        [
            ("d-0", "Please send me the review deck by Wed 18 Nov, 12:00", "email", DECK),
            ("d-1", "I need to write the review deck by 18 Nov", "note", DECK),
            ("d-2", "Pre-brief is earlier: the review deck is due by Tue 17 Nov", "email", earlier),
            ("d-3", "Reminder: review deck due Tue 17 Nov 12:00", "calendar", earlier),
            ("d-4", "I must finish the review deck by 17 Nov for Farida", "note", earlier),
        ],
        "Go/no-go review",
    )
    _, seen = await deadlines_seen(script, events)
    assert seen[0] == DECK.date() and seen[-1] == earlier.date()


def test_a_reply_that_weighs_the_steps_first_still_names_the_goals_day() -> None:
    """Alice's reply names the review, tomorrow's staging, the load test's days and the deck's
    deadline last, its fifth date: the goal's day is among the days it names."""
    text = (
        "Re: Go/No-Go for Flux Tariffs: Thu 19 Nov\nNot yet: rc2 goes to staging tomorrow. "
        "The load test is planned for 11-12 Nov; worst case it moves to Mon 16 Nov, which "
        "still gives me results before the deck deadline on Wed 18 Nov."
    )
    at = datetime(2026, 11, 9, 10, 55, tzinfo=UTC)
    memory = stored(HashingEmbedder(dim=256), [event("m-0", text, at, "email")])
    named, cued = _named_days(memory.graph, [event_node_id("alice", "m-0")], at)
    assert date(2026, 11, 18) in named and date(2026, 11, 18) in cued


async def test_a_move_of_another_thing_from_the_goals_day_leaves_the_goals_date() -> None:
    """The deck and the partner demo both fall on Mon 9 Nov; the demo's entry is moved from
    Mon 9 Nov to Wed 11 Nov: the demo moved, the deck is still due on the 9th."""
    due = datetime(2026, 11, 9, 12, 0, tzinfo=UTC)
    demo = datetime(2026, 11, 11, 10, 0, tzinfo=UTC)
    script, events = stream(
        [
            ("d-0", "Please send me the review deck by Mon 9 Nov, 12:00", "email", due),
            ("d-1", "I need to write the review deck by 9 Nov", "note", due),
            ("d-2", "Partner demo on Mon 9 Nov, review deck due the same day", "calendar", due),
            ("d-3", "Reminder: review deck due Mon 9 Nov 12:00", "calendar", due),
            ("d-4", "Updated: partner demo\nMoved from Mon 9 Nov to Wed 11 Nov.", "calendar", demo),
        ],
        "Go/no-go review",
    )
    _, seen = await deadlines_seen(script, events)
    assert seen and set(seen) == {due.date()}


async def test_a_move_of_the_goals_object_from_its_day_moves_the_deadline() -> None:
    due = datetime(2026, 11, 9, 12, 0, tzinfo=UTC)
    moved = datetime(2026, 11, 11, 12, 0, tzinfo=UTC)
    script, events = stream(
        [
            ("d-0", "Please send me the review deck by Mon 9 Nov, 12:00", "email", due),
            ("d-1", "I need to write the review deck by 9 Nov", "note", due),
            ("d-2", "Partner demo on Mon 9 Nov, review deck due the same day", "calendar", due),
            ("d-3", "Reminder: review deck due Mon 9 Nov 12:00", "calendar", due),
            ("d-4", "The review deck is moved from Mon 9 Nov to Wed 11 Nov", "email", moved),
        ],
        "Go/no-go review",
    )
    _, seen = await deadlines_seen(script, events)
    assert seen[0] == due.date() and seen[-1] == moved.date()


async def test_an_older_anchor_of_the_goals_theme_does_not_take_over_when_no_event_names_it() -> (
    None
):
    """The synthetic stream's flood (issue 11): once the events that dated the goal fall out of
    the newest read, every fold ranked the anchors its theme reached, the soonest first, and a
    day no text names counted as a planner's deadline: the report's date took turns between
    its own 30 Nov and the review slot of 24 Nov a planner set weeks before, a message each
    time. Only a planner's deadline for the latest evidence moves it; the old slot does not."""
    report = datetime(2026, 11, 30, 17, 0, tzinfo=UTC)
    review = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)
    texts: list[tuple[str, str, str, datetime | None]] = [
        ("r-0", "Review of the Flux report with Ana", "calendar", review),
        ("r-1", "Deadline: the Flux report is due by 30 Nov", "email", report),
        ("r-2", "I need to send the Flux report by 30 Nov", "note", report),
        ("r-3", "Flux report: due 30 Nov, please send the figures", "chat", report),
    ]
    texts += [(f"r-{n}", f"Flux report figures, part {n}", "note", None) for n in range(4, 44)]
    script = {  # the heuristic planner's way: a day read from a text dates the theme's concept
        i: Step(
            ["Flux report"], category="work", deadline=d, deadline_on="Flux report" if d else None
        )
        for i, _, _, d in texts
    }
    events = [event(i, t, T0 + timedelta(hours=5 * n), s) for n, (i, t, s, _) in enumerate(texts)]
    _, seen = await deadlines_seen(script, events)
    assert seen and set(seen) == {report.date()}
