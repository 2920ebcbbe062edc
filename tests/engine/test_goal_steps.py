"""A goal's steps are not the goal (issue 11): a stated step ("we have to cite FooNet") gives
way to the thing that is due, found even where a parser reads its date as the head of the
phrase, by the name its heading gives it; and an open goal's date holds against a step's day."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fold_helpers import ScriptedPlanner, Step

from schemas.events import RawEvent
from schemas.graph import Node, NodeKind
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.memory import TenantMemory, event_node_id
from topologies.naming import Namer
from topologies.naming.phrases import PhraseParser
from topologies.naming.titles import by_its_heading, dated_heads

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
PAPER = datetime(2026, 11, 24, tzinfo=UTC)
SPRINT = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
PLAN = "Deadline plan: Mirela 2026: abstract registration Thu 19 Nov, full paper Tue 24 Nov"


def event(event_id: str, text: str, at: datetime, source: str = "note") -> RawEvent:
    return RawEvent(id=event_id, tenant="alice", source=source, ts=at, title=text)


def stored(events: list[RawEvent]) -> TenantMemory:
    engine = FoldEngine(HashingEmbedder(dim=256), ScriptedPlanner({}), EngineConfig())
    memory = engine.new_memory("alice")
    for raw in events:
        engine.ingest(memory, raw)
    return memory


def dated(texts: list[str], deadline: datetime, parser: PhraseParser) -> frozenset[str]:
    events = [event(f"x-{i}", t, T0 + timedelta(days=i)) for i, t in enumerate(texts)]
    return dated_in(events, deadline, parser)


def dated_in(events: list[RawEvent], deadline: datetime, parser: PhraseParser) -> frozenset[str]:
    """Heads of the things the deadline's day is written against in the stored events."""
    memory = stored(events)
    nodes = [memory.graph.node(event_node_id("alice", e.id)) for e in events]
    return dated_heads(nodes, parser.analyse_nodes(nodes), deadline, parser.parse)


def test_a_thing_whose_date_the_parser_reads_as_its_head_is_still_dated(
    parser: PhraseParser,
) -> None:
    """spaCy reads "full paper Tue 24 Nov" as one noun chunk of "Nov": the event's phrases
    lack the paper, the words before the date parsed alone have it; "paper ID 2291" in
    another event speaks of it even where the parser makes it an ID."""
    later = "Abstract registered as paper ID 2291 at 12:48"
    assert dated([PLAN, later], PAPER, parser) == {"paper"}
    assert not dated([PLAN, "Abstract registered at 12:48"], PAPER, parser)  # one event only


def test_a_heading_says_whose_the_dated_thing_is() -> None:
    texts = [f"Plan\n{PLAN.split(': ', 1)[1]}", "Comments on the paper"]
    assert by_its_heading("full paper", texts, frozenset()) == "Mirela 2026 full paper"
    # a heading of common words, or a person's, names no particular thing
    assert (
        by_its_heading("full paper", ["Budget request: full paper Tue 24 Nov"], frozenset()) is None
    )
    assert (
        by_its_heading("full paper", ["Anja: full paper Tue 24 Nov"], frozenset({"anja"})) is None
    )


def title_of(namer: Namer, events: list[RawEvent], deadline: datetime) -> str:
    memory = stored(events)
    return namer.title_intent(memory, [event_node_id("alice", e.id) for e in events], deadline)


def test_a_stated_step_gives_way_to_the_thing_that_is_due(namer: Namer) -> None:
    """ "We have to cite FooNet" states a goal, but no event that names the deadline's day
    speaks of FooNet, while the plan writes the full paper against it: citing is a step of
    the paper."""
    events = [
        event("s-0", PLAN, T0),
        event(
            "s-1", "Reviewing: FooNet is public now, so we have to cite FooNet", T0 + timedelta(1)
        ),
        event("s-2", "Related work on FooNet rewritten for the paper", T0 + timedelta(2)),
        event("s-3", "Abstract registered as paper ID 2291", T0 + timedelta(3)),
    ]
    assert title_of(namer, events, PAPER) == "Prepare for the Mirela 2026 full paper (by 24 Nov)"


def test_a_stated_goal_that_the_days_event_speaks_of_keeps_its_title(namer: Namer) -> None:
    events = [
        event("c-0", "The crown must be cemented before we fly on Tue 24 Nov", T0),
        event("c-1", "Dentist: crown preparation, temporary crown fitted", T0 + timedelta(1)),
        event("c-2", "Flight to Bangkok Tue 24 Nov, seats 31A and 31B", T0 + timedelta(2)),
    ]
    assert title_of(namer, events, PAPER) == "Get the crown cemented (by 24 Nov)"


Scripted = tuple[str, str, list[str], datetime | None]  # id, text, concepts, its day


async def the_goal(texts: list[Scripted], days: list[datetime]) -> Node:
    """The one intent of these events folded on these days (the script's concepts, each
    event's day as a TIME node on its first concept)."""
    script = {
        i: Step(concepts, category="work", deadline=day, deadline_on=concepts[0] if day else None)
        for i, _, concepts, day in texts
    }
    config = EngineConfig()
    config.topics.split_min_members = 1000
    engine = FoldEngine(HashingEmbedder(dim=256), ScriptedPlanner(script), config)
    memory = engine.new_memory("alice")
    for (i, text, _, _), at in zip(texts, days, strict=True):
        await engine.fold(memory, event(i, text, at))
    (intent,) = memory.graph.nodes(NodeKind.INTENT)
    return intent


async def test_an_open_goals_date_holds_against_a_work_sessions_day() -> None:
    """The plan writes the full paper against 24 Nov; a writing sprint on Fri 20 Nov, named
    once and due by nothing, is a step's day: the goal stays due by 24 Nov."""
    texts = [
        ("p-0", PLAN, ["Paper"], PAPER),
        ("p-1", "I need to rerun the baseline for the paper, Table 2 is wrong", ["Paper"], None),
        (
            "p-2",
            "We have to finish the paper draft and the related work",
            ["Paper", "Writing"],
            None,
        ),
        (
            "p-3",
            "Writing: related work rewritten, section 2 over budget",
            ["Writing", "Paper"],
            None,
        ),
        ("p-4", "Writing sprint: Fri 20 Nov, 10:00-13:00, cut section 5", ["Writing"], SPRINT),
        ("p-5", "Writing: figures merged, page count down", ["Writing"], None),
    ]
    intent = await the_goal(texts, [T0 + timedelta(days=n) for n in range(len(texts))])
    assert intent.deadline == PAPER
    assert intent.title.endswith("(by 24 Nov)")


def test_the_thing_that_is_due_takes_the_action_asked_of_it(namer: Namer) -> None:
    """The deck is what 18 Nov is written against, and a mail asks to send it: the to-do is
    "Send the review deck", not a general "Prepare for the review deck", though the user's
    own notes make an action on another object rank first."""
    deck = datetime(2026, 11, 18, 12, 0, tzinfo=UTC)
    texts = [
        ("Launch sync: get the launch plan signed off, the launch plan is late", "note"),
        ("Farida wants the review deck by Wed 18 Nov noon", "note"),
        ("Launch plan: get the launch plan approved before the launch", "note"),
        ("Please send the review deck tonight", "email"),
        ("Launch plan review: I need to get the launch plan final", "note"),
        ("Launch plan comments from legal on the launch plan", "note"),
    ]
    events = [event(f"d-{n}", t, T0 + timedelta(n), s) for n, (t, s) in enumerate(texts)]
    assert title_of(namer, events, deck) == "Send the review deck (by 18 Nov)"


def test_a_stated_goal_the_evidence_speaks_of_more_than_the_dated_thing_stays(
    namer: Namer,
) -> None:
    """The flight is what 18 Dec is written against, but the passport is what the evidence
    keeps speaking of: renewing it is the goal, not a step of the flight."""
    flight = datetime(2026, 12, 18, tzinfo=UTC)
    texts = [
        ("My passport expires in November, I need to renew the passport", "note"),
        ("Booked the Bangkok flight on Fri 18 Dec, seats 31A and 31B", "email"),
        ("Passport photos taken at the drugstore", "note"),
        ("Passport appointment at the citizens office confirmed", "email"),
        ("Flight check: the flight to Bangkok leaves at 21:40", "note"),
    ]
    events = [event(f"f-{n}", t, T0 + timedelta(n), s) for n, (t, s) in enumerate(texts)]
    assert title_of(namer, events, flight).startswith("Renew the passport")


async def test_a_passed_date_moves_only_to_a_day_the_goals_own_thing_is_due_by() -> None:
    """The venue was due by 10 Nov; after that day the offsite's OKR draft, a neighbouring
    theme's event that joined the goal, is due by 30 Nov. Nothing about the venue is due
    then: the goal stays due by 10 Nov (it read "Decide on the venue (by 30 Nov)")."""
    venue_day = datetime(2026, 11, 10, tzinfo=UTC)
    draft_day = datetime(2026, 11, 30, tzinfo=UTC)
    texts = [
        ("v-0", "Offsite to-do: decide on the venue by Tue 10 Nov", ["Venue"], venue_day),
        ("v-1", "Venue shortlist: the quinta in Sintra or the loft in Lisbon", ["Venue"], None),
        ("v-2", "We have to decide on the venue, the loft holds 7 people", ["Venue"], None),
        ("v-3", "Offsite agenda: day 1 at the venue, day 2 workshops", ["Offsite", "Venue"], None),
        ("v-4", "Offsite dinner booked for the team", ["Offsite", "Venue"], None),
        ("v-5", "Offsite OKRs: the draft is due by Mon 30 Nov", ["Offsite"], draft_day),
    ]
    days = [T0 + timedelta(days=n) for n in range(len(texts) - 1)]
    days.append(venue_day + timedelta(days=2))  # the OKR draft comes after the venue's day
    intent = await the_goal(texts, days)
    assert intent.deadline == venue_day
    assert intent.title == "Decide on the venue (by 10 Nov)"
