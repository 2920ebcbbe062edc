"""A correspondent's name heading a direct message counts as evidence of the message's theme in
proportion to how few themes the person's messages already span (topologies/correspondents.py,
docs/boundaries.md): a colleague who writes about one thing keeps the name's pull, a partner
whose messages sit in several concepts has the next one placed by what it says."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import numpy as np
from fold_helpers import ScriptedPlanner, Step, concept_id

from schemas.events import RawEvent
from schemas.graph import EdgeKind, NodeKind
from schemas.plans import AddEdge
from topologies import correspondents, topics
from topologies.config import EngineConfig, TopicConfig
from topologies.context import assemble_context
from topologies.correspondents import Record, correspondent, name_weight
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.entities import EntityIndex
from topologies.heuristic_planner import HeuristicPlanner
from topologies.memory import POOL, TenantMemory, event_node_id
from topologies.planner import PlanRequest

MakeEvent = Callable[..., RawEvent]
PARTNER = "Jonas Weber"

SMALL_TALK = ["ok see you at home", "love you too", "on my way now", "call me later ok"]
TRIP = [
    "Flights to Bangkok went up again, book the flights today?",
    "Yes book the Bangkok flights, return on 3 January",
    "Bangkok hotel for the trip is booked, flights confirmed",
]
FILMS = ["Cinema tonight? The new film starts at eight", "The film at the cinema was great"]
LEAKS = [
    "Water dripping from the bathroom ceiling again",
    "The bathroom ceiling leak is dripping water on the floor",
    "Plumber says the bathroom ceiling leak comes from the flat above",
]
NOTES = [
    "Quarterly tax return: receipts and the accountant",
    "Recipe: spaghetti with garlic, olive oil and chili",
    "Book club picks a novel about a lighthouse keeper",
    "Bike repair: new brake pads and a chain",
    "Library books due back on Friday",
    "Garden: plant the tulip bulbs before the frost",
]


def message(make_event: MakeEvent, body: str, event_id: str, hours: float) -> RawEvent:
    """A direct message headed, as chat apps head them, by the correspondent's name."""
    return make_event(
        PARTNER, body, id=event_id, hours=hours, source="chat", participants=[PARTNER, "Alice"]
    )


# ------------------------------------------------------------------- the rule itself
def test_a_heading_that_is_a_participants_name_names_the_correspondent() -> None:
    assert correspondent("Jonas Weber", ["Jonas Weber", "Alice Keller"]) == "person:jonas weber"
    assert correspondent("jonas  weber", ["Jonas Weber <jonas@example.org>"]) == (
        "person:jonas weber"
    )
    assert correspondent("#flux-launch", ["Ruben Lindqvist"]) is None
    assert correspondent("Mama", ["Ilse Keller", "Alice Keller"]) is None  # not her name
    assert correspondent("Week plan", []) is None


def test_the_name_counts_fully_for_a_young_record_or_a_person_of_one_theme() -> None:
    config = TopicConfig(name_record_min=8)
    assert name_weight(Record(events=5, themes=4, share=0.1), config) == 1.0
    assert name_weight(Record(events=12, themes=1, share=0.1), config) == 1.0


def test_the_name_counts_one_over_the_themes_the_persons_messages_span() -> None:
    config = TopicConfig(name_record_min=8)
    assert name_weight(Record(events=12, themes=2, share=0.1), config) == 0.5
    assert name_weight(Record(events=12, themes=4, share=0.1), config) == 0.25


def test_a_name_on_more_than_the_configured_share_of_the_stream_counts_fully() -> None:
    config = TopicConfig(name_record_min=8, name_share_max=1 / 3)
    assert name_weight(Record(events=40, themes=12, share=0.5), config) == 1.0


def test_a_speaker_on_half_of_a_conversation_is_weighed_by_the_themes_they_span() -> None:
    """Each of the two speakers of a conversation that is the whole memory (LoCoMo) takes
    part in half of it: their name weighs as anyone's, else their short turns gather by
    speaker into folders of moods."""
    config = TopicConfig(name_record_min=8)
    assert name_weight(Record(events=40, themes=12, share=0.5), config) == 1 / 12


# --------------------------------------------------------------- in the fold
def history_script() -> dict[str, Step]:
    return {
        **{f"talk-{i}": Step(["Small talk"]) for i in range(len(SMALL_TALK))},
        **{f"trip-{i}": Step(["Trip"]) for i in range(len(TRIP))},
        **{f"film-{i}": Step(["Cinema"]) for i in range(len(FILMS))},
        **{f"leak-{i}": Step(["Bathroom leak"]) for i in range(len(LEAKS))},
    }


async def partner_of_three_themes(
    make_event: MakeEvent, **topic_overrides: float
) -> tuple[FoldEngine, TenantMemory]:
    """Nine messages with the partner in three concepts (small talk, the trip, the cinema),
    the leak noted three times, and notes enough that the partner is a sixth of the stream."""
    config = EngineConfig()
    topics_config = config.topics.model_copy(update=topic_overrides)
    config = config.model_copy(update={"topics": topics_config})
    engine = FoldEngine(HashingEmbedder(dim=256), ScriptedPlanner(history_script()), config)
    memory = engine.new_memory("alice")
    events = [make_event(text, id=f"leak-{i}", hours=i) for i, text in enumerate(LEAKS)]
    chats = [(f"talk-{i}", t) for i, t in enumerate(SMALL_TALK)]
    chats += [(f"trip-{i}", t) for i, t in enumerate(TRIP)]
    chats += [(f"film-{i}", t) for i, t in enumerate(FILMS)]
    for n, (event_id, body) in enumerate(chats):
        hours = 10 + 6 * n
        events.append(message(make_event, body, event_id, hours))
        for k in range(5):
            note = NOTES[(n + k) % len(NOTES)]
            events.append(make_event(f"{note} ({n}.{k})", id=f"note-{n}-{k}", hours=hours + 1 + k))
    for event in events:
        await engine.fold(memory, event)
    return engine, memory


def place(engine: FoldEngine, memory: TenantMemory, event: RawEvent) -> list[str]:
    """Ingest the event and return the concepts the heuristic planner has it join."""
    engine.ingest(memory, event)
    node = event_node_id("alice", event.id)
    vector = memory.index(NodeKind.EVENT).get(node)
    assert vector is not None
    context = assemble_context(memory, vector, node, event.ts, engine.config.context)
    request = PlanRequest(event, memory.graph.node(node), vector, context, memory, event.ts)
    plan = HeuristicPlanner(engine.embedder, engine.config).plan_sync(request)
    return [op.dst for op in plan.ops if isinstance(op, AddEdge) and op.kind == EdgeKind.REINFORCES]


LEAK_NEWS = "ceiling leak"  # short: most of its embedding is the heading


async def test_a_partners_message_about_the_leak_joins_the_leak_not_their_small_talk(
    make_event: MakeEvent,
) -> None:
    engine, memory = await partner_of_three_themes(make_event)
    joined = place(engine, memory, message(make_event, LEAK_NEWS, "news", 500))
    assert joined == [concept_id(memory, "Bathroom leak")]


async def test_while_the_record_is_young_the_name_pulls_as_before(make_event: MakeEvent) -> None:
    engine, memory = await partner_of_three_themes(make_event, name_record_min=20)
    joined = place(engine, memory, message(make_event, LEAK_NEWS, "news", 500))
    assert joined == [concept_id(memory, "Small talk")]


async def test_the_topic_vector_weighs_the_heading_by_one_over_the_themes(
    make_event: MakeEvent,
) -> None:
    engine, memory = await partner_of_three_themes(make_event)
    mean, count = topics.background(memory)
    event = message(make_event, LEAK_NEWS, "news", 500)
    engine.ingest(memory, event)
    whole, body = engine.embedder.embed([event.text, event.body])
    expected = topics.center(
        correspondents.blend(whole, body, 1 / 3), mean, count, engine.config.topics
    )
    assert np.allclose(memory.index(POOL).get(event_node_id("alice", "news")), expected)


def test_the_entity_index_counts_the_events_of_a_time_span(make_event: MakeEvent) -> None:
    """The stream's events since a person's first recent one: what their share is taken of."""
    index = EntityIndex()
    events = [make_event(f"Note {n}", hours=n, id=f"n-{n}") for n in range(6)]
    for n, event in enumerate(events):
        index.add(f"n-{n}", event.ts, [])
    assert index.count_between(events[1].ts, events[4].ts) == 3  # n-1, n-2, n-3
    assert index.count_between(events[0].ts, events[5].ts + timedelta(hours=1)) == 6
    index.clear()
    assert index.count_between(events[0].ts, events[5].ts) == 0


def test_the_people_of_the_entity_index_include_each_person_as_soon_as_posted(
    make_event: MakeEvent,
) -> None:
    """A reaction check asks for the people the memory knows: one first named by the latest
    event is among them, and none is left after the index is cleared."""
    index = EntityIndex()
    event = make_event("Note", id="n-1")
    index.add("n-1", event.ts, ["person:dana weiss", "ticket:flx-1"])
    assert index.people() == {"dana weiss", "dana"}
    index.people().add("someone")  # a caller's copy
    index.add("n-2", event.ts, ["person:ola"])
    assert index.people() == {"dana weiss", "dana", "ola"}
    index.clear()
    assert index.people() == set()
