"""A goal's steps are not the goal (issue 11): a stated step ("we have to cite FooNet") gives
way to the thing that is due, found even where a parser reads its date as the head of the
phrase, by the name its heading gives it; and an open goal's date holds against a step's day."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fold_helpers import ScriptedPlanner

from schemas.events import RawEvent
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
