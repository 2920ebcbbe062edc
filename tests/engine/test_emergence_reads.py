"""What intent emergence keeps between its readings (issue 15) is read anew when what it was
read from changes: an event's answer when the event changes, a goal's evidence when an edge
is written or rolled back, a concept's evidence rows when an edge is touched again, and the
order of a fold's events once the fold is over. The kept readings change the cost, never the
answer."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from fold_helpers import ScriptedPlanner
from test_goal_steps import event, stored

from schemas.graph import Edge, EdgeKind, Node, NodeKind
from topologies import intents
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.goals import CUES_ATTR, cached_signals, says_moved
from topologies.graph import decayed_weight
from topologies.intents import FoldReads, IntentEmergence
from topologies.memory import TenantMemory, event_node_id
from topologies.naming import Namer
from topologies.naming import namer as namer_module
from topologies.naming.phrases import PhraseParser
from topologies.scope import FoldScope

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=3, seconds=7, microseconds=123_457)
TOOTH = "Get the tooth fixed"


def node(node_id: str, kind: NodeKind, title: str) -> Node:
    return Node(id=node_id, tenant="alice", kind=kind, title=title, created_at=T0, updated_at=T0)


def edge(src: str, dst: str, kind: EdgeKind, at: datetime, w0: float = 1.0) -> Edge:
    return Edge(src=src, dst=dst, kind=kind, w0=w0, t_last=at, created_at=at)


def goal_memory(count: int) -> tuple[TenantMemory, list[str]]:
    """Events about a tooth, an intent and a concept, each event grounding both."""
    texts = ["Dentist: the tooth needs a crown", "Tooth still hurts", "Crown fitted on the tooth"]
    raws = [event(f"t-{n}", texts[n % 3], T0 + timedelta(hours=n)) for n in range(count)]
    memory = stored(raws)
    ids = [event_node_id("alice", raw.id) for raw in raws]
    with memory.transaction():
        memory.graph.add_node(node("i-tooth", NodeKind.INTENT, TOOTH))
        memory.graph.add_node(node("c-dentist", NodeKind.CONCEPT, "Dentist"))
    return memory, ids


def emergence() -> IntentEmergence:
    namer = Namer(None, PhraseParser())
    engine = FoldEngine(HashingEmbedder(dim=64), ScriptedPlanner({}), EngineConfig(), namer=namer)
    return engine.emergence


def test_an_event_that_changes_is_asked_again_whether_it_speaks_of_the_goal() -> None:
    memory, ids = goal_memory(1)
    names = Namer(None, PhraseParser())
    assert names.speaking_of(memory, ids, TOOTH) == {ids[0]}
    with memory.transaction():
        memory.graph.update_node(ids[0], title="Lunch with Mika at the canal")
    assert names.speaking_of(memory, ids, TOOTH) == set()


def test_values_of_several_nodes_are_derived_together_and_only_for_new_versions() -> None:
    memory, ids = goal_memory(3)
    asked: list[list[str]] = []

    def titles(nodes: list[Node]) -> list[str]:
        asked.append([n.id for n in nodes])
        return [n.title for n in nodes]

    memo, graph = memory.node_memo, memory.graph
    first = [graph.node(e) for e in ids[:2]]
    assert memo.many("title", first, titles) == [n.title for n in first]
    assert (
        memo.many("title", [graph.node(e) for e in ids], titles)[2] == "Crown fitted on the tooth"
    )
    with memory.transaction():
        graph.update_node(ids[0], title="Tooth fixed")
    assert memo.many("title", [graph.node(e) for e in ids], titles)[0] == "Tooth fixed"
    assert asked == [ids[:2], ids[2:], ids[:1]]


def test_a_goals_evidence_is_read_again_when_an_edge_is_written_or_rolled_back() -> None:
    memory, ids = goal_memory(3)
    graph, emerging = memory.graph, emergence()
    with memory.transaction():
        graph.put_edge(edge(ids[0], "i-tooth", EdgeKind.GROUNDS, T0))
    emerging._reads = FoldReads(graph)  # as while a fold runs
    assert emerging._intent_evidence(memory, "i-tooth") == {ids[0]}
    with memory.transaction():
        graph.put_edge(edge(ids[1], "i-tooth", EdgeKind.REINFORCES, T0))
    assert emerging._intent_evidence(memory, "i-tooth") == {ids[0], ids[1]}
    memory.begin()
    graph.put_edge(edge(ids[2], "i-tooth", EdgeKind.REINFORCES, T0))
    assert emerging._intent_evidence(memory, "i-tooth") == set(ids)
    memory.rollback()
    assert emerging._intent_evidence(memory, "i-tooth") == {ids[0], ids[1]}


def test_an_event_removed_after_a_fold_leaves_the_order_its_goal_is_read_in() -> None:
    """An event removed after a fold (forgotten) is not read from the order the fold kept,
    even at the same stream time; a failed fold leaves no fold's reads behind."""
    memory, ids = goal_memory(3)
    emerging = emergence()
    scope = FoldScope(tenant="alice", event_id="t-2", event_node_id=ids[2], now=NOW)
    emerging.emerge(memory, scope)
    with memory.transaction():
        memory.graph.remove_node(ids[2])
    intent = memory.graph.node("i-tooth")
    assert emerging._latest_speaking_of(memory, set(ids), intent, NOW) == set(ids[:2])

    def failing(memory: TenantMemory, scope: FoldScope) -> list[str]:
        raise RuntimeError("a plan failed")

    emerging._emerge = failing  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        emerging.emerge(memory, scope)
    assert emerging._reads is None


def test_a_concepts_evidence_follows_an_edge_touched_again() -> None:
    memory, ids = goal_memory(2)
    graph, cache = memory.graph, memory.edge_cache
    with memory.transaction():
        for at, event_id in enumerate(ids):
            graph.put_edge(edge(event_id, "c-dentist", EdgeKind.GROUNDS, T0 + timedelta(at)))
    before = cache.evidence(graph, "c-dentist", EdgeKind.GROUNDS, 64)
    touched = graph.edge(ids[0], "c-dentist", EdgeKind.GROUNDS)
    assert touched is not None
    with memory.transaction():  # reinforced: a new weight and touch, the edge stays where it was
        graph.put_edge(touched.model_copy(update={"w0": 0.5, "t_last": NOW}))
    after = cache.evidence(graph, "c-dentist", EdgeKind.GROUNDS, 64)
    assert [row[2].w0 for row in after] == [1.0, 0.5]  # newest attached first
    assert after[0] is before[0]  # the untouched edge's row is kept
    assert after[1][3] > before[1][3]  # the touched one is read again


def test_a_concepts_evidence_is_the_sum_of_its_decayed_edge_weights_to_the_bit() -> None:
    memory, ids = goal_memory(3)
    graph = memory.graph
    with memory.transaction():
        for n, event_id in enumerate(ids):
            at = T0 + timedelta(hours=n, microseconds=333_333 * n + 1)
            graph.put_edge(edge(event_id, "c-dentist", EdgeKind.GROUNDS, at, w0=0.7 + n / 7))
    emerging = emergence()
    decay = emerging.config.consolidation.decay_per_day
    total, events = emerging._evidence(memory, "c-dentist", NOW, None)
    expected = 0.0
    for source in reversed(ids):  # the most recently attached first, as the scan reads them
        found = graph.edge(source, "c-dentist", EdgeKind.GROUNDS)
        assert found is not None
        expected += decayed_weight(found, NOW, decay)
    assert total == expected
    assert events == set(ids)


def newest(memory: TenantMemory, events: list[str], now: datetime = NOW) -> list[str]:
    return memory.event_order.newest(memory.graph, events, now)


def test_an_events_place_moves_with_its_time_and_back_on_a_rollback() -> None:
    memory, ids = goal_memory(3)
    assert newest(memory, ids) == ids[::-1]
    memory.begin()
    memory.graph.update_node(ids[0], ts=T0 + timedelta(days=1))  # re-dated: now the newest
    assert newest(memory, ids) == [ids[0], ids[2], ids[1]]
    memory.rollback()
    assert newest(memory, ids) == ids[::-1]


def test_an_event_whose_fold_was_rolled_back_is_no_longer_ordered() -> None:
    memory, ids = goal_memory(2)
    memory.begin()
    late = node("e-late", NodeKind.EVENT, "Crown fitted").model_copy(update={"ts": NOW})
    memory.graph.add_node(late)
    assert newest(memory, [*ids, "e-late"]) == ["e-late", ids[1], ids[0]]
    memory.rollback()
    assert newest(memory, [*ids, "e-late"]) == [ids[1], ids[0]]


def test_an_event_without_a_time_is_placed_at_each_readings_stream_time() -> None:
    memory, ids = goal_memory(2)
    with memory.transaction():
        memory.graph.add_node(node("e-undated", NodeKind.EVENT, "Tooth note"))
    events = [*ids, "e-undated"]
    assert newest(memory, events, NOW) == ["e-undated", ids[1], ids[0]]
    between = T0 + timedelta(minutes=30)  # after the first event, before the second
    assert newest(memory, events, between) == [ids[1], "e-undated", ids[0]]


def test_a_goals_evidence_holds_only_events_of_its_intent_and_concepts() -> None:
    """A fact or a concept grounding the intent is no evidence event of it, nor is an
    event grounding a concept that does not trigger it."""
    memory, ids = goal_memory(3)
    graph = memory.graph
    with memory.transaction():
        graph.add_node(node("f-crown", NodeKind.FACT, "The crown is ceramic"))
        graph.add_node(node("c-lunch", NodeKind.CONCEPT, "Lunch"))
        graph.put_edge(edge("c-dentist", "i-tooth", EdgeKind.TRIGGERS, T0))
        graph.put_edge(edge(ids[0], "i-tooth", EdgeKind.GROUNDS, T0))
        graph.put_edge(edge("f-crown", "i-tooth", EdgeKind.GROUNDS, T0))
        graph.put_edge(edge(ids[1], "c-dentist", EdgeKind.REINFORCES, T0))
        graph.put_edge(edge(ids[2], "c-lunch", EdgeKind.GROUNDS, T0))
    assert emergence()._intent_evidence(memory, "i-tooth") == {ids[0], ids[1]}


def test_whether_an_event_moves_a_date_reads_as_its_cues_say() -> None:
    memory, ids = goal_memory(1)
    unstored = node("e-moved", NodeKind.EVENT, "Dentist moved to Fri 13 Nov")
    unstored = unstored.model_copy(update={"ts": T0})
    stored_cue = unstored.model_copy(update={"attrs": {CUES_ATTR: {"moved": False}}})
    for event_node in (unstored, stored_cue, memory.graph.node(ids[0])):
        assert says_moved(event_node) == cached_signals(event_node).moved
    assert says_moved(unstored) and not says_moved(stored_cue)


def test_the_ids_present_in_a_graph_leave_out_an_absorbed_ones_alias() -> None:
    memory, ids = goal_memory(2)
    with memory.transaction():
        memory.graph.set_alias("t-absorbed", ids[0])
    assert memory.graph.present([ids[0], "t-absorbed", "t-unknown", ids[1]]) == set(ids)


def test_a_forgotten_events_place_is_not_kept() -> None:
    memory, ids = goal_memory(2)
    assert newest(memory, ids) == ids[::-1]
    with memory.transaction():
        memory.graph.remove_node(ids[0])
    assert ids[0] not in memory.event_order  # nothing read from it stays behind


def test_the_days_an_event_names_are_read_once_and_again_when_it_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A goal's latest events are read for the days they name at every reinforcement: each
    event's words once per version of it; a revision that names another day is read again."""
    memory, ids = goal_memory(1)
    graph = memory.graph
    with memory.transaction():
        graph.update_node(ids[0], text="The crown is fitted on Wed 18 Nov")
    read: list[str] = []
    dates_in = intents._dates_in
    monkeypatch.setattr(
        intents, "_dates_in", lambda text, ts: read.append(text) or dates_in(text, ts)
    )
    for _ in range(3):
        named, _cued = intents._days_named([graph.node(ids[0])], NOW, memory.node_memo)
        assert set(named) == {date(2026, 11, 18)}
    assert len(read) == 1
    with memory.transaction():
        graph.update_node(ids[0], text="The crown is fitted on Fri 20 Nov")
    named, _cued = intents._days_named([graph.node(ids[0])], NOW, memory.node_memo)
    assert set(named) == {date(2026, 11, 20)} and len(read) == 2


def test_an_open_goals_title_is_parsed_for_its_object_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An open goal's title is asked for its object at each of its reinforcements: its parse
    is read once per title, and another title is read for its own object."""
    names = Namer(None, PhraseParser())
    parsed: list[str] = []
    title_doc = names._title_doc
    monkeypatch.setattr(names, "_title_doc", lambda title: parsed.append(title) or title_doc(title))
    assert [names.title_object(TOOTH) for _ in range(3)] == ["tooth"] * 3
    assert names.title_object("Repair the bathroom ceiling") == "ceiling"
    assert parsed == [TOOTH, "Repair the bathroom ceiling"]


def titled_goal(held_title: str) -> tuple[TenantMemory, str]:
    """The tooth goal, titled at 100 evidence events (no milestone near), and the calendar
    entry of its day that just joined it."""
    raws = [event("t-0", "Tooth still hurts", T0), event("c-1", held_title, NOW, "calendar")]
    memory = stored(raws)
    intent = node("i-tooth", NodeKind.INTENT, TOOTH)
    with memory.transaction():
        memory.graph.add_node(intent.model_copy(update={"attrs": {intents.TITLED_AT_ATTR: 100}}))
        memory.graph.put_edge(edge(event_node_id("alice", "t-0"), "i-tooth", EdgeKind.GROUNDS, T0))
    return memory, event_node_id("alice", "c-1")


@pytest.mark.parametrize("held_title", ["Crown for the tooth", "Dr Berg - tooth"])
def test_the_entry_of_the_goals_day_that_cannot_rename_it_chooses_no_title(
    held_title: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between milestones the calendar entry of a goal's day renames it only for the thing
    the day holds: an entry that holds what the goal is already about ("Crown for the
    tooth" for "Get the tooth fixed"), or names nothing, cannot rename it, so the goal's
    evidence is not read for a title at all."""
    memory, held = titled_goal(held_title)
    emerging = emergence()
    chosen: list[str] = []

    def title(*args: object) -> str:
        chosen.append("title")
        return TOOTH

    monkeypatch.setattr(emerging.namer, "title_intent", title)
    attrs: dict[str, object] = {}
    assert emerging._retitle(memory, memory.graph.node("i-tooth"), NOW, attrs, held) is None
    assert chosen == [] and attrs == {}


def test_the_entry_of_the_goals_day_that_holds_another_thing_may_rename_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An entry that holds another thing ("Dentist - tooth crown": the crown) is read with
    the goal's evidence for a title: the day may be for the crown."""
    memory, held = titled_goal("Dentist - tooth crown")
    emerging = emergence()
    chosen: list[list[str]] = []

    def title(memory: TenantMemory, evidence: list[str], deadline: datetime) -> str:
        chosen.append(evidence)
        return TOOTH

    monkeypatch.setattr(emerging.namer, "title_intent", title)
    emerging._retitle(memory, memory.graph.node("i-tooth"), NOW, {}, held)
    assert chosen == [sorted([event_node_id("alice", "t-0"), held])]


def test_an_event_is_read_for_the_deadlines_day_once_per_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A goal's evidence is titled again as it grows: each event is read for whether it
    names the deadline's day once per version of it and deadline, not at every titling."""
    memory, ids = goal_memory(3)
    read: list[str] = []
    mentions_day = namer_module.mentions_day

    def counted(deadline: datetime | None, event_node: Node) -> bool:
        read.append(event_node.id)
        return mentions_day(deadline, event_node)

    monkeypatch.setattr(namer_module, "mentions_day", counted)
    names = Namer(HashingEmbedder(dim=64), PhraseParser())
    first = names.title_intent(memory, ids, NOW)
    assert names.title_intent(memory, ids, NOW) == first
    assert sorted(read) == sorted(ids)
    names.title_intent(memory, ids, NOW + timedelta(days=1))  # another day: read again
    assert len(read) == 2 * len(ids)


def _asking(monkeypatch: pytest.MonkeyPatch, emerging: IntentEmergence) -> list[list[str]]:
    """The chunks of events the emergence's namer is asked about, in order."""
    asked: list[list[str]] = []
    speaking_of = emerging.namer.speaking_of

    def spy(memory: TenantMemory, event_ids: list[str], title: str) -> set[str]:
        asked.append(list(event_ids))
        return speaking_of(memory, event_ids, title)

    monkeypatch.setattr(emerging.namer, "speaking_of", spy)
    return asked


def test_whether_a_goals_events_speak_of_it_is_asked_once_while_their_words_stay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A goal's events are asked whether they speak of its object once: an access (which
    gives each event a new version) asks nothing again, and the answer is the same."""
    memory, ids = goal_memory(3)
    emerging = emergence()
    asked = _asking(monkeypatch, emerging)
    intent = memory.graph.node("i-tooth")
    first = emerging._latest_speaking_of(memory, set(ids), intent, NOW)
    assert first == set(ids) and len(asked) == 1
    with memory.transaction():
        for event_id in ids:
            memory.graph.update_node(event_id, access_count=3, last_access=NOW)
    assert emerging._latest_speaking_of(memory, set(ids), intent, NOW) == first
    assert len(asked) == 1


def test_a_goals_events_are_asked_again_when_one_of_them_says_something_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """New words for one event (or an event gone, or a change rolled back) and the goal's
    events are asked again: the answer follows what they now say."""
    memory, ids = goal_memory(3)
    emerging = emergence()
    asked = _asking(monkeypatch, emerging)
    intent = memory.graph.node("i-tooth")
    assert emerging._latest_speaking_of(memory, set(ids), intent, NOW) == set(ids)
    with memory.transaction():
        memory.graph.update_node(ids[1], title="Lunch with Mika at the canal")
    assert emerging._latest_speaking_of(memory, set(ids), intent, NOW) == {ids[0], ids[2]}
    memory.begin()
    memory.graph.update_node(ids[1], title="The tooth again")
    assert emerging._latest_speaking_of(memory, set(ids), intent, NOW) == set(ids)
    memory.rollback()
    assert emerging._latest_speaking_of(memory, set(ids), intent, NOW) == {ids[0], ids[2]}
    assert len(asked) == 4


def test_the_words_of_events_change_their_stamp_an_access_or_another_kind_does_not() -> None:
    memory, ids = goal_memory(2)
    graph = memory.graph
    stamps = [graph.event_words_stamp]
    with memory.transaction():
        graph.update_node(ids[0], access_count=2, last_access=NOW)
        graph.update_node("i-tooth", title="Get the crown fitted")
        graph.update_node("c-dentist", text="Teeth and crowns")
    stamps.append(graph.event_words_stamp)
    with memory.transaction():
        graph.update_node(ids[0], participants=["Mika"])
    stamps.append(graph.event_words_stamp)
    with memory.transaction():
        graph.remove_node(ids[1])
    stamps.append(graph.event_words_stamp)
    assert stamps[0] == stamps[1] and len(set(stamps[1:])) == 3
