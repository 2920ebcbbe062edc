"""What the goal was for is what its day holds (issue 11): the calendar entry that starts on
the deadline's day names the thing the steps serve ("Lisbon offsite - day 1": the offsite, not
the venue decided on the way), and its joining the evidence is a moment to choose the title
again, however little the evidence has grown."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import partial

from fold_helpers import ScriptedPlanner, Step
from test_goal_steps import dated, dated_in, event, stored

from schemas.events import RawEvent
from schemas.graph import Node, NodeKind
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.intents import MAX_TIME_SCAN
from topologies.memory import TenantMemory, event_node_id
from topologies.naming import Namer, next_naming
from topologies.naming.phrases import PhraseParser
from topologies.naming.titles import (
    by_its_name,
    entry_thing,
    held_on,
    the_thing_named,
)

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
OFFSITE = datetime(2026, 11, 24, tzinfo=UTC)
DAY_ONE = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)
STEPS = [
    ("Offsite to-do: decide on the venue by Friday, first agenda draft", "note"),
    ("Venue shortlist for the offsite: the quinta in Sintra or the loft in Lisbon", "email"),
    ("The loft is free for the offsite, I can go and look at the venue", "chat"),
]
MORE = [
    ("Venue: the loft confirmed for three days, lunch included", "email"),
    ("Offsite agenda v2: arrivals, workshops, dinner near the venue", "email"),
]


def entry(title: str, at: datetime = DAY_ONE, source: str = "calendar") -> RawEvent:
    return event("o-day", title, at, source)


def steps() -> list[RawEvent]:
    return [event(f"o-{n}", t, T0 + timedelta(days=n), s) for n, (t, s) in enumerate(STEPS)]


def heads(events: list[RawEvent], parser: PhraseParser) -> frozenset[str]:
    return dated_in(events, OFFSITE, parser)


def test_the_calendar_entry_of_the_deadlines_day_names_what_happens_then(
    parser: PhraseParser,
) -> None:
    """No text writes the offsite against 24 Nov, but its calendar entry starts that day:
    the title before the detail ("- day 1") is what the day holds."""
    assert heads([*steps(), entry("Lisbon offsite - day 1")], parser) == {"offsite"}
    # the entry of another day, a note with the same words, one the evidence never speaks of
    assert not heads([*steps(), entry("Lisbon offsite - day 1", DAY_ONE + timedelta(1))], parser)
    assert not heads([*steps(), entry("Lisbon offsite - day 1", source="note")], parser)
    assert not heads([*steps(), entry("Pottery class - wheel")], parser)
    assert dated(["Lisbon offsite - day 1"], OFFSITE, parser) == frozenset()  # said once only


def test_the_goal_is_what_its_day_holds_not_a_step_on_the_way(namer: Namer) -> None:
    memory = stored([*steps(), entry("Lisbon offsite - day 1")])
    ids = [event_node_id("alice", f"o-{n}") for n in range(len(STEPS))]
    day = [*ids, event_node_id("alice", "o-day")]
    assert namer.title_intent(memory, ids, OFFSITE) == "Decide on the venue (by 24 Nov)"
    assert namer.title_intent(memory, day, OFFSITE) == "Prepare for the Lisbon offsite (by 24 Nov)"


def test_what_an_entry_says_happens_and_which_entries_are_occasions(parser: PhraseParser) -> None:
    """The first part of its title that ends in a common noun phrase: who or where comes
    first in some entries ("Kessler Logistik - ..."), a detail in brackets; a recurring
    entry is a routine."""

    def thing(title: str) -> str | None:
        (node,) = nodes([entry(title)])
        found = entry_thing(node, parser.analyse_nodes([node])[0], parser.parse)
        return None if found is None else found.text

    assert thing("Lisbon offsite - day 1") == "Lisbon offsite"
    assert thing("Kessler Logistik - multi-depot routing demo") == "multi-depot routing demo"
    assert thing("PUC emergency meeting - July 14 outage") == "PUC emergency meeting"
    assert thing("Plumber - Sanitär Kuhn (Jonas at home)") is None  # no thing, a detail
    (day,) = nodes([entry("Lisbon offsite - day 1")])
    assert held_on(OFFSITE, day) and not held_on(OFFSITE + timedelta(days=1), day)
    weekly = day.model_copy(update={"attrs": {"raw_attrs": {"recurrence": "weekly on Tuesday"}}})
    assert not held_on(OFFSITE, weekly)


def nodes(events: list[RawEvent]) -> list[Node]:
    memory = stored(events)
    return [memory.graph.node(event_node_id("alice", e.id)) for e in events]


async def folded(
    texts: list[tuple[str, str, str]], days: list[datetime]
) -> tuple[FoldEngine, TenantMemory, Node]:
    """The one intent of these events (id, text, source) folded on these days, each about
    the offsite and its venue, the first naming the offsite's day."""
    script = {
        i: Step(["Offsite", "Venue"], category="work", deadline=OFFSITE if n == 0 else None)
        for n, (i, _, _) in enumerate(texts)
    }
    config = EngineConfig()
    config.topics.split_min_members = 1000
    engine = FoldEngine(HashingEmbedder(dim=256), ScriptedPlanner(script), config)
    memory = engine.new_memory("alice")
    for (i, text, source), at in zip(texts, days, strict=True):
        await engine.fold(memory, event(i, text, at, source))
    (intent,) = memory.graph.nodes(NodeKind.INTENT)
    return engine, memory, intent


async def test_the_days_calendar_entry_joining_the_goal_chooses_its_title_again() -> None:
    """Titled "Decide on the venue" from its first steps; the offsite's calendar entry joins
    before the evidence has doubled, and the title is chosen again from it."""
    texts = [(f"o-{n}", text, source) for n, (text, source) in enumerate(STEPS + MORE)]
    days = [T0 + timedelta(days=n) for n in range(len(texts))]
    *_, first = await folded(texts, days)
    assert first.title == "Decide on the venue (by 24 Nov)"
    titled_at = first.attrs["titled_at"]
    assert isinstance(titled_at, int) and titled_at + 1 < next_naming(titled_at)
    day_one = ("o-day", "Lisbon offsite - day 1", "calendar")
    *_, intent = await folded([*texts, day_one], [*days, DAY_ONE])
    assert intent.title == "Prepare for the Lisbon offsite (by 24 Nov)"


async def test_the_days_entry_renames_the_goal_only_for_what_it_holds() -> None:
    """Between milestones, the day's entry that joins renames the goal only when the new
    title is about the thing that entry names: the team dinner that evening does not make
    the offsite the goal (the offsite's own entry does)."""
    texts = [(f"o-{n}", text, source) for n, (text, source) in enumerate(STEPS + MORE)]
    days = [T0 + timedelta(days=n) for n in range(len(texts))]
    both = [("o-day", "Lisbon offsite - day 1", "calendar"), ("o-eve", "Team dinner", "calendar")]
    engine, memory, intent = await folded(texts + both, [*days, DAY_ONE, DAY_ONE])
    venue = intent.model_copy(update={"title": "Decide on the venue (by 24 Nov)"})
    held = {e: event_node_id("alice", e) for e in ("o-day", "o-eve")}
    retitle = partial(engine.emergence._retitle, memory, venue, OFFSITE, {})
    assert retitle(held["o-eve"]) is None
    assert retitle(held["o-day"]) == "Prepare for the Lisbon offsite (by 24 Nov)"


def test_a_thing_with_several_names_is_called_what_most_texts_call_it() -> None:
    """The calendar calls it the "Data Platform offsite", the agenda and the travel plans
    the "Lisbon offsite" and Lisbon: the person's name for it is the one most texts write;
    on a tie the name it already has stays."""
    texts = [
        "Data Platform offsite - day 1",
        "Lisbon offsite agenda v2: arrivals by 11:00",
        "Flights to Lisbon booked for the team",
    ]
    known = ("Data Platform offsite",)
    assert by_its_name("offsite", texts, frozenset(), known) == "Lisbon offsite"
    assert by_its_name("offsite", texts[:2], frozenset(), known) == "Data Platform offsite"
    assert the_thing_named("Data Platform offsite") == "offsite"
    assert the_thing_named("Mirela 2026 full paper") == "full paper"


def test_the_days_entry_names_the_goal_as_the_person_does(namer: Namer) -> None:
    agenda = event("o-3", "Lisbon offsite agenda v2: arrivals by 11:00", T0 + timedelta(3))
    events = [*steps(), agenda, entry("Data Platform offsite - day 1")]
    memory = stored(events)
    ids = [event_node_id("alice", e.id) for e in events]
    assert namer.title_intent(memory, ids, OFFSITE) == "Prepare for the Lisbon offsite (by 24 Nov)"


def test_a_long_goals_passed_date_reads_only_its_latest_events_about_it() -> None:
    """A goal of a long stream has hundreds of evidence events; once its date has passed,
    the days it can move to are read from the newest events that speak of its object
    (``MAX_TIME_SCAN`` of them), so only those, not the whole evidence, are parsed."""
    parser = PhraseParser()
    engine = FoldEngine(
        HashingEmbedder(dim=256), ScriptedPlanner({}), EngineConfig(), namer=Namer(None, parser)
    )
    memory = engine.new_memory("alice")
    texts = ["Passport photos taken", "Lunch with Mika", "Passport form printed"]
    events = [event(f"p-{n}", f"{texts[n % 3]} ({n})", T0 + timedelta(hours=n)) for n in range(300)]
    for raw in events:
        engine.ingest(memory, raw)
    ids = {event_node_id("alice", e.id) for e in events}
    intent = Node(
        id="i-passport",
        tenant="alice",
        kind=NodeKind.INTENT,
        title="Renew the passport (by 24 Nov)",
        created_at=T0,
        updated_at=T0,
    )
    before = parser.parsed
    found = engine.emergence._latest_speaking_of(memory, ids, intent, OFFSITE)
    about = [event_node_id("alice", f"p-{n}") for n in range(299, -1, -1) if n % 3 != 1]
    assert set(about[:MAX_TIME_SCAN]) <= found  # the newest that speak of the passport
    assert not found & {event_node_id("alice", f"p-{n}") for n in range(1, 300, 3)}
    assert parser.parsed - before <= 2 * MAX_TIME_SCAN


def test_only_events_that_write_another_form_of_the_object_are_parsed_to_see_it() -> None:
    """An event whose words hold no form of the title's object ("tooth", "teeth") does not
    speak of it, and one that writes the object as a word ("the tooth") does: neither is
    parsed to find out. A plural the parser reads back to the object's lemma ("teeth") still
    counts: only that one is parsed."""
    parser = PhraseParser()
    names = Namer(None, parser)
    events = [
        event("t-1", "Both teeth hurt when I drink something cold", T0),
        event("t-2", "Lunch with Mika at the canal", T0 + timedelta(hours=1)),
        event("t-3", "Dentist: the tooth needs a crown", T0 + timedelta(hours=2)),
    ]
    memory = stored(events)
    ids = [event_node_id("alice", e.id) for e in events]
    before = parser.parsed
    found = names.speaking_of(memory, ids, "Get the tooth fixed")
    assert found == {ids[0], ids[2]}
    assert parser.parsed - before == 1
