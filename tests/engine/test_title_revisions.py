"""Intent titles and deadlines that follow the evidence (issue 11, fifth round): a date an
event moves the goal's thing to becomes its deadline before the old day passes; a retitle at a
growth milestone happens only for a better goal by what the evidence says; the verb the
evidence keeps using is not lost to a passive with a date after it."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from fold_helpers import ScriptedPlanner, Step
from test_goal_titles import event, fold, stored, the_intent

from schemas.graph import Node, NodeKind
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.goals import date_move
from topologies.memory import TenantMemory, event_node_id
from topologies.naming import Namer
from topologies.naming.phrases import PhraseParser
from topologies.naming.titles import Ranked, in_kept_verb

T0 = datetime(2026, 4, 13, 10, 0, tzinfo=UTC)
DEMO = datetime(2026, 4, 23, 15, 0, tzinfo=UTC)
MOVED = datetime(2026, 4, 28, 14, 0, tzinfo=UTC)


def node(text: str, at: datetime = T0) -> Node:
    return Node(
        id="e", tenant="alice", kind=NodeKind.EVENT, title=text, ts=at, created_at=at, updated_at=at
    )


# ------------------------------------------------------------------------ date moves
def test_a_move_names_the_new_date_and_what_was_moved() -> None:
    move = date_move(node("Moving the multi-depot demo to Tuesday 28 April"))
    assert move is not None and move.to.date() == date(2026, 4, 28)
    assert move.from_day is None and {"multi-depot", "demo"} <= move.thing
    move = date_move(node("Updated: partner demo\nMoved from Mon 20 Apr to Wed 22 Apr."))
    assert move is not None
    assert (move.from_day, move.to.date()) == (date(2026, 4, 20), date(2026, 4, 22))


def test_a_move_only_weighed_or_with_no_later_date_moves_nothing() -> None:
    assert date_move(node("The load test is on 20 Apr; worst case it moves to Mon 27 Apr")) is None
    assert date_move(node("If the build fails, the demo moves to 28 April")) is None
    assert date_move(node("Their feed job moves to 06:00 from 20 Apr")) is None
    assert date_move(node("The demo is on Thursday 23 April")) is None


def demo_stream(last: tuple[str, str]) -> tuple[dict[str, Step], list]:  # type: ignore[type-arg]
    texts = [
        ("d-0", "Demo of multi-depot routing - Thursday 23 April, we need to show 40 trucks"),
        ("d-1", "Sprint goal: routing in production two days before the demo on 23 April"),
        ("d-2", "Dry run for the multi-depot demo on 23 April, I must book the room"),
        last,
    ]
    script = {
        "d-0": Step(["Routing demo"], category="work", deadline=DEMO),
        "d-1": Step(["Routing demo"], category="work", deadline=DEMO),
        "d-2": Step(["Routing demo"], category="work", deadline=DEMO),
        last[0]: Step(["Routing demo"], category="work", deadline=MOVED),
    }
    sources = ("email", "calendar", "note", "email")  # several channels converge on it
    events = [
        event(i, t, T0 + timedelta(days=n, hours=1), sources[n]) for n, (i, t) in enumerate(texts)
    ]
    return script, events


async def test_a_date_moved_before_it_passes_is_the_goals_new_deadline() -> None:
    """The demo was named for 23 April three times; the rollout failed and the demo was moved
    to 28 April: however often the old day was named, the goal is now due by the new one."""
    script, events = demo_stream(
        ("d-3", "Moving the multi-depot demo to Tuesday 28 April, we will confirm the room")
    )
    memory, _ = await fold(script, events)
    intent = the_intent(memory)
    assert intent.deadline is not None and intent.deadline.date() == MOVED.date()
    assert intent.title.endswith("(by 28 Apr)")


async def test_a_move_of_another_thing_leaves_the_goals_date() -> None:
    script, events = demo_stream(
        ("d-3", "The team lunch moved to Tuesday 28 April, we will confirm the room")
    )
    memory, _ = await fold(script, events)
    intent = the_intent(memory)
    assert intent.deadline is not None and intent.deadline.date() == DEMO.date()


# ------------------------------------------------------------------------ retitles


async def titled_for_a_step(last: tuple[str, str]) -> tuple[FoldEngine, TenantMemory, Node, Node]:
    """The demo stream folded into one intent (no concept split), and that intent as if it
    had been titled for a step at its first milestone ("Bring estimates")."""
    config = EngineConfig()
    config.topics.split_min_members = 1000
    script, events = demo_stream(last)
    engine = FoldEngine(HashingEmbedder(dim=256), ScriptedPlanner(script), config)
    memory = engine.new_memory("alice")
    for raw in events:
        await engine.fold(memory, raw)
    intent = the_intent(memory)
    step = intent.model_copy(update={"title": "Bring estimates", "attrs": {"titled_at": 1}})
    return engine, memory, intent, step


def test_a_retitle_needs_a_better_goal_by_the_evidence(namer: Namer) -> None:
    """The evidence keeps speaking of the ceiling, once of the leak: the ceiling is the
    better goal, not the leak; a new verb for the same object is no better (no churn)."""
    texts = [
        "Please confirm who repairs the bathroom ceiling and by when",
        "The ceiling stays open while the drying machine runs",
        "Rent reduced by 10% until the bathroom ceiling is repaired",
        "The plumber will locate the leak on Wednesday",
    ]
    events = [event(f"w-{n}", t, T0 + timedelta(days=n), "email") for n, t in enumerate(texts)]
    memory = stored(HashingEmbedder(dim=256), events)
    ids = [event_node_id("alice", e.id) for e in events]
    old, new = "Locate the leak", "Repair the bathroom ceiling"
    assert namer.title_object(new) == "ceiling" and namer.title_object(old) == "leak"
    assert namer.better_goal(memory, ids, None, old, new)
    assert not namer.better_goal(memory, ids, None, new, old)
    assert not namer.better_goal(memory, ids, None, "Repaint the bathroom ceiling", new)
    # what to bring is a step: the goal's action replaces it
    assert namer.better_goal(memory, ids, None, "Bring estimates", new)
    # moving a date changes the plan; it is no goal, however much the evidence speaks of it
    assert not namer.better_goal(memory, ids, None, old, "Postpone the bathroom ceiling")


# ------------------------------------------------------------------------ kept verb
def test_a_passive_with_a_date_after_it_does_not_hide_the_kept_verb(
    parser: PhraseParser,
) -> None:
    """ "The drain will be repaired on 17 Nov" puts a date after the verb, not an object: the
    repair is still said with its direct object ("Repair the bathroom ceiling")."""
    texts = (
        "Please confirm who repairs the ceiling afterwards and by when.",
        "Our painter will repaint the bathroom ceiling. The drain will be repaired on 17 Nov.",
        "Rent reduced by 10% until the bathroom ceiling is repaired.",
    )
    analyses = parser.analyse([("", text, frozenset()) for text in texts])
    repaint = Ranked(1.0, "Repaint the bathroom ceiling", verb="repaint", head="ceiling")
    assert in_kept_verb(analyses, repaint, texts) == "Repair the bathroom ceiling"
    # a verb the texts use with a prepositional object in the active keeps the action's own
    active = (*texts, "We repaired for the landlord before.")
    assert in_kept_verb(analyses, repaint, active) == "Repaint the bathroom ceiling"


async def test_a_retitle_at_a_milestone_replaces_a_step_and_never_brings_back_an_old_object() -> (
    None
):
    """An intent named for what to bring takes its evidence's goal at the next milestone; a
    title whose object it was renamed from does not come back, whatever the evidence says."""
    engine, memory, intent, step = await titled_for_a_step(
        ("d-3", "Moving the multi-depot demo to Tuesday 28 April, we will confirm the room")
    )
    attrs: dict[str, object] = {}
    retitled = engine.emergence._retitle(memory, step, intent.deadline, attrs)
    assert retitled is not None and "demo" in retitled
    assert attrs["dropped_objects"] == ["estimate"]
    # the same evidence, but "demo" was an object the intent was renamed from
    back = step.model_copy(update={"attrs": {"titled_at": 1, "dropped_objects": ["demo"]}})
    assert engine.emergence._retitle(memory, back, intent.deadline, {}) is None
    # between milestones nothing is re-chosen
    assert (
        engine.emergence._retitle(
            memory, step.model_copy(update={"attrs": {"titled_at": 4}}), intent.deadline, {}
        )
        is None
    )


async def test_a_retitle_follows_up_only_on_a_thing_a_cue_sentence_acts_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A goal renamed to follow up on a thing, with no verb of the evidence's own, needs a
    sentence with a goal cue that acts on it: "I must book the room" makes "Follow up on the
    room" a goal, the sprint goal a heading names is none (before, LoCoMo-10's conv-48 plan
    "Sort out the books" was renamed "Follow up on the fond memories")."""
    engine, memory, intent, step = await titled_for_a_step(
        ("d-3", "The multi-depot demo went fine, thanks all")
    )
    namer = engine.emergence.namer

    def retitled(title: str) -> str | None:
        monkeypatch.setattr(namer, "title_intent", lambda *args, **kwargs: title)
        return engine.emergence._retitle(memory, step, intent.deadline, {})

    assert retitled("Follow up on the room") == "Follow up on the room"
    assert retitled("Follow up on the sprint goal") is None
