"""Reactions: a chat turn that only reacts to the one before founds no folder and joins none;
it is linked to the turn it answers (topologies/reactions.py, the heuristic planner)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from schemas.events import RawEvent
from schemas.graph import EdgeKind, NodeKind
from topologies.engine import FoldEngine
from topologies.entities import EntityIndex
from topologies.memory import TenantMemory, event_node_id
from topologies.naming.phrases import PhraseParser
from topologies.reactions import is_reaction

MakeEvent = Callable[..., RawEvent]
FRIENDS = frozenset({"maria", "john"})
POTTERY = (
    "Pottery class: the clay bowl glaze in the kiln.",
    "Pottery class: the clay bowl glaze out of the kiln.",
    "Pottery class: the clay bowl glaze cracked in the kiln.",
)


# ------------------------------------------------------------------- the rule itself
@pytest.mark.parametrize(
    "text",
    [
        "That's awesome, so proud of you!",
        "Thanks, Maria! I really appreciate your support, it means a lot to me.",
        "Oh no, I'm so sorry to hear that. Sending you lots of love.",
        "Hey John! Long time no see! What's up?",
        "Bye John! Take care!",
        "Wow, great job! Keep it up!",
        "Yep, John, sounds good.",
        "Congrats! Such great news, so much joy!",
    ],
)
def test_praise_thanks_sympathy_and_greetings_are_reactions(
    text: str, parser: PhraseParser
) -> None:
    assert is_reaction(text, FRIENDS, parser)


@pytest.mark.parametrize(
    "text",
    [
        "Congrats on the new job!",
        "So sorry about your knee surgery, John.",
        "Thanks for the tip about the pottery class!",
        "I went hiking with my dog yesterday.",
        "Congrats on Paris, John!",
    ],
)
def test_a_reply_that_names_a_thing_is_no_reaction(text: str, parser: PhraseParser) -> None:
    assert not is_reaction(text, FRIENDS, parser)


def test_a_shared_photo_is_a_thing_of_the_turn(parser: PhraseParser) -> None:
    assert not is_reaction("Wow! [shares a photo of a red vintage car]", FRIENDS, parser)


def test_only_a_known_persons_name_counts_as_no_thing(parser: PhraseParser) -> None:
    assert is_reaction("Thanks so much, Maria!", FRIENDS, parser)
    assert not is_reaction("Thanks so much, Maria!", frozenset(), parser)


def test_the_events_just_before_a_time_come_latest_first() -> None:
    index = EntityIndex()
    t0 = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)
    for minute, node_id in ((0, "a"), (1, "b"), (2, "c"), (90, "d")):
        index.add(node_id, t0 + timedelta(minutes=minute), [])
    before = t0 + timedelta(minutes=3)
    assert index.latest_before(before, t0, 8) == ["c", "b", "a"]
    assert index.latest_before(before, t0, 2) == ["c", "b"]
    assert index.latest_before(before, t0 + timedelta(minutes=1), 8) == ["c", "b"]


# ------------------------------------------------------------------------ in the fold
def turn(
    make_event: MakeEvent, speaker: str, body: str, minutes: float, channel: str = ""
) -> RawEvent:
    """A chat turn headed by its speaker, as a chat export heads it."""
    attrs = {"channel": channel} if channel else {}
    return make_event(
        speaker, body, source="chat", participants=[speaker], hours=minutes / 60, attrs=attrs
    )


async def fold_all(engine: FoldEngine, memory: TenantMemory, events: list[RawEvent]) -> None:
    for event in events:
        result = await engine.fold(memory, event)
        assert result.status == "folded", result.error


def folders_of(memory: TenantMemory, event: RawEvent) -> set[str]:
    node = event_node_id(memory.tenant, event.id)
    kinds = (EdgeKind.GROUNDS, EdgeKind.REINFORCES)
    concepts = memory.graph.ids(NodeKind.CONCEPT)
    return {
        e.dst for kind in kinds for e in memory.graph.out_edges(node, kind) if e.dst in concepts
    }


async def test_replies_of_praise_found_no_folder_of_their_own(
    planning_engine: FoldEngine, make_event: MakeEvent
) -> None:
    """Two friends cheering each other on, turn after turn: no "Support" folder."""
    memory = planning_engine.new_memory("alice")
    cheers = [
        ("Maria", "That's awesome, John! So proud of you, keep it up!"),
        ("John", "Thanks, Maria! So proud and happy, thanks for the support!"),
        ("Maria", "Awesome, John! So proud of you! Thanks for sharing!"),
        ("John", "Thanks so much, Maria! Your support means a lot, so happy!"),
        ("Maria", "So proud of you, John! That's awesome, keep it up!"),
    ]
    events = [turn(make_event, who, text, minutes=i) for i, (who, text) in enumerate(cheers)]
    await fold_all(planning_engine, memory, events)
    assert memory.graph.count(NodeKind.CONCEPT) == 0
    assert all(not folders_of(memory, event) for event in events)


async def test_a_reaction_is_linked_to_the_turn_it_answers_and_joins_no_folder(
    planning_engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = planning_engine.new_memory("alice")
    pottery = [turn(make_event, "John", text, i) for i, text in enumerate(POTTERY)]
    reply = turn(make_event, "Maria", "Wow, that's awesome, John! So proud of you!", 3)
    await fold_all(planning_engine, memory, [*pottery, reply])
    answered = event_node_id("alice", pottery[-1].id)
    reaction = event_node_id("alice", reply.id)
    assert memory.graph.edge(answered, reaction, EdgeKind.TRIGGERS) is not None
    assert folders_of(memory, pottery[-1])  # the theme has its folder
    assert not folders_of(memory, reply)  # the reply stays out of it


async def test_a_reaction_answers_nothing_an_hour_later_or_in_another_channel(
    planning_engine: FoldEngine, make_event: MakeEvent
) -> None:
    memory = planning_engine.new_memory("alice")
    news = turn(make_event, "John", "I passed the driving test this morning!", 0, "john")
    late = turn(make_event, "Maria", "That's awesome, so proud of you!", 90, "john")
    elsewhere = turn(make_event, "Maria", "Wow, congrats! So happy for you!", 91, "family")
    await fold_all(planning_engine, memory, [news, late, elsewhere])
    source = event_node_id("alice", news.id)
    for reply in (late, elsewhere):
        target = event_node_id("alice", reply.id)
        assert memory.graph.edge(source, target, EdgeKind.TRIGGERS) is None


async def test_a_reply_that_names_the_thing_joins_its_theme(
    planning_engine: FoldEngine, make_event: MakeEvent
) -> None:
    """ "Congrats on the new job!": the thing decides, not the mood."""
    memory = planning_engine.new_memory("alice")
    pottery = [turn(make_event, "John", text, i) for i, text in enumerate(POTTERY)]
    praise = "Congrats on the pottery class clay bowl glaze in the kiln!"
    reply = turn(make_event, "Maria", praise, 3)
    await fold_all(planning_engine, memory, [*pottery, reply])
    assert folders_of(memory, reply) == folders_of(memory, pottery[0])
    assert folders_of(memory, reply)
