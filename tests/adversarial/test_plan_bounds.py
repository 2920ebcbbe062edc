"""The bounds of one event's plan (topologies/plan_bounds.py), op by op: what a planner's plan
may not do is refused, what an honest plan does still passes, and the engine's own plans (no
bounds) keep their powers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from schemas.errors import PlanRejectedError
from schemas.events import RawEvent
from schemas.graph import EdgeKind, NodeKind
from schemas.intents import IntentStatus
from schemas.plans import AddEdge, AddNode, MergeNodes, PlanOp, RemoveNode, UpdateNode, UpdatePlan
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.executor import PlanExecutor
from topologies.memory import event_node_id
from topologies.plan_bounds import PlanBounds
from topologies.scope import FoldScope


class Graph:
    """A tenant with a few concepts and an intent, each grounded by its own earlier event."""

    def __init__(self, embedder: HashingEmbedder, make_event: Callable[..., RawEvent]) -> None:
        self.config = EngineConfig()
        self.engine = FoldEngine(embedder, _Empty(), self.config)
        self.executor = PlanExecutor(embedder, self.config)
        self.memory = self.engine.new_memory("alice")
        self.make_event = make_event
        self.ids: dict[str, str] = {}
        self.concept("dentist", "Dentist appointment for the molar")
        self.concept("dentist2", "Dentist visit about the molar")
        self.concept("tooth", "Molar tooth pain")
        self.concept("press", "Press release for the launch")
        self.concept("passport", "Passport photo")
        ops: list[PlanOp] = [
            AddNode(ref="i", kind=NodeKind.INTENT, title="Book the dentist for the molar"),
            AddEdge(src=self.ids["dentist"], dst="i", kind=EdgeKind.TRIGGERS),
            AddEdge(src=self.ids["tooth"], dst="i", kind=EdgeKind.TRIGGERS),
        ]
        self.ids["intent"] = self.run(ops, "ev-intent")["i"]
        ops = [
            AddNode(ref="i", kind=NodeKind.INTENT, title="Book a dentist visit for the molar"),
            AddEdge(src=self.ids["dentist2"], dst="i", kind=EdgeKind.TRIGGERS),
            AddEdge(src=self.ids["dentist"], dst="i", kind=EdgeKind.TRIGGERS),
        ]
        self.ids["intent2"] = self.run(ops, "ev-intent2")["i"]
        self.event = make_event("Dentist called back", "Molar appointment moved", id="ev-now")
        self.engine.ingest(self.memory, self.event)
        self.event_node = event_node_id("alice", self.event.id)

    def concept(self, key: str, title: str) -> None:
        event = self.make_event(title, title, id=f"ev-{key}")
        self.engine.ingest(self.memory, event)
        node = event_node_id("alice", event.id)
        ops: list[PlanOp] = [
            AddNode(ref="c", kind=NodeKind.CONCEPT, title=title),
            AddEdge(src=node, dst="c", kind=EdgeKind.GROUNDS),
        ]
        self.ids[key] = self.run(ops, event.id)["c"]

    def run(self, ops: list[PlanOp], event_id: str) -> dict[str, str]:
        """The engine's own powers: apply without bounds."""
        scope = FoldScope("alice", event_id, event_node_id("alice", event_id), self.memory_now)
        self.memory.begin()
        self.executor.apply(self.memory, UpdatePlan(ops=ops), scope)
        self.memory.commit()
        return scope.ref_ids

    @property
    def memory_now(self) -> Any:
        return self.make_event("clock").ts

    def bounds(self, *context: str) -> PlanBounds:
        ids = {self.event.id, self.event_node, *(self.ids[c] for c in context)}
        return PlanBounds(self.event.id, self.event_node, frozenset(ids))

    def check(self, ops: list[PlanOp], *context: str) -> None:
        scope = FoldScope("alice", self.event.id, self.event_node, self.memory_now)
        self.executor.validate(self.memory, UpdatePlan(ops=ops), scope, self.bounds(*context))


class _Empty:
    name = "empty"

    async def plan(self, request: Any) -> UpdatePlan:
        return UpdatePlan()


@pytest.fixture
def graph(embedder: HashingEmbedder, make_event: Callable[..., RawEvent]) -> Graph:
    return Graph(embedder, make_event)


def refused(graph: Graph, ops: list[PlanOp], *context: str) -> str:
    with pytest.raises(PlanRejectedError, match="plan bound") as info:
        graph.check(ops, *context)
    return str(info.value)


ALL = ("dentist", "dentist2", "tooth", "press", "passport", "intent", "intent2")


def test_ids_outside_the_context_are_refused_inside_it_accepted(graph: Graph) -> None:
    edge = AddEdge(src=graph.event_node, dst=graph.ids["press"], kind=EdgeKind.REINFORCES)
    assert "not in this event's context" in refused(graph, [edge], "dentist")
    graph.check([edge], "press")
    grounded = AddEdge(
        src=graph.event_node, dst=graph.ids["press"], kind=EdgeKind.REINFORCES,
        grounded_in=[graph.event.id, graph.ids["passport"]],
    )  # fmt: skip
    refused(graph, [grounded], "press")


def test_remove_only_what_the_plan_created(graph: Graph) -> None:
    assert "only nodes it created" in refused(graph, [RemoveNode(id=graph.ids["press"])], *ALL)
    own = [AddNode(ref="n1", kind=NodeKind.FACT, title="a note"), RemoveNode(id="n1")]
    graph.check(own, *ALL)


def test_no_intent_status_and_no_intent_rename_from_a_planner(graph: Graph) -> None:
    intent = graph.ids["intent"]
    resolve = UpdateNode(id=intent, status=IntentStatus.RESOLVED)
    assert "user's API" in refused(graph, [resolve], *ALL)
    corroborate = AddEdge(src=graph.event_node, dst=graph.ids["dentist"], kind=EdgeKind.REINFORCES)
    new: list[PlanOp] = [
        AddNode(ref="n1", kind=NodeKind.INTENT, title="Dentist visit for the molar"),
        corroborate,
        AddEdge(src=graph.ids["dentist"], dst="n1", kind=EdgeKind.TRIGGERS),
        AddEdge(src=graph.ids["dentist2"], dst="n1", kind=EdgeKind.TRIGGERS),
    ]
    graph.check(new, *ALL)
    assert "user's API" in refused(
        graph, [*new, UpdateNode(id="n1", status=IntentStatus.DEFERRED)], *ALL
    )
    assert "rename an intent" in refused(graph, [UpdateNode(id=intent, title="Wire money")], *ALL)
    graph.check([UpdateNode(id=intent, attrs={"seen": 1})], *ALL)


def test_renames_only_to_a_close_text(graph: Graph) -> None:
    far = UpdateNode(id=graph.ids["dentist"], title="Wire money to account DE00 1234 5678")
    assert "not close to the old one" in refused(graph, [far], *ALL)
    near = UpdateNode(id=graph.ids["dentist"], title="Dentist appointment for the molar tooth")
    graph.check([near], *ALL)


def test_merges_only_between_similar_nodes(graph: Graph) -> None:
    ids = graph.ids
    many = MergeNodes(keep=ids["dentist"], absorb=[ids["dentist2"], ids["press"], ids["passport"]])
    assert "only near-identical nodes merge" in refused(graph, [many], *ALL)
    graph.check([MergeNodes(keep=ids["dentist"], absorb=[ids["dentist2"]])], *ALL)
    intents = MergeNodes(keep=ids["intent"], absorb=[ids["intent2"]])
    assert "user's API" in refused(graph, [intents], *ALL)


def test_an_intent_needs_related_support_that_this_event_corroborates(graph: Graph) -> None:
    ids, ev = graph.ids, graph.event_node
    wire = [
        AddNode(ref="n1", kind=NodeKind.INTENT, title="Wire money to account DE00 1234 5678"),
        AddEdge(src=ev, dst=ids["press"], kind=EdgeKind.REINFORCES),
        AddEdge(src=ids["press"], dst="n1", kind=EdgeKind.TRIGGERS),
        AddEdge(src=ids["passport"], dst="n1", kind=EdgeKind.TRIGGERS),
    ]
    assert "unrelated to the intent" in refused(graph, wire, *ALL)
    related = [
        AddNode(ref="n1", kind=NodeKind.INTENT, title="Dentist visit for the molar"),
        AddEdge(src=ids["dentist"], dst="n1", kind=EdgeKind.TRIGGERS),
        AddEdge(src=ids["dentist2"], dst="n1", kind=EdgeKind.TRIGGERS),
    ]
    assert "grounded or reinforced by this event" in refused(graph, related, *ALL)
    corroborated = [AddEdge(src=ev, dst=ids["dentist"], kind=EdgeKind.REINFORCES), *related]
    graph.check(corroborated, *ALL)
    unrelated_support = AddEdge(src=ids["passport"], dst=ids["intent"], kind=EdgeKind.TRIGGERS)
    refused(graph, [unrelated_support], *ALL)


def test_the_engine_and_the_api_keep_their_powers(graph: Graph) -> None:
    """No bounds: removal, status and merges of dissimilar nodes all pass validation."""
    ops: list[PlanOp] = [
        RemoveNode(id=graph.ids["press"]),
        UpdateNode(id=graph.ids["intent"], status=IntentStatus.RESOLVED),
        MergeNodes(keep=graph.ids["dentist"], absorb=[graph.ids["passport"]]),
    ]
    scope = FoldScope("alice", graph.event.id, graph.event_node, graph.memory_now)
    graph.executor.validate(graph.memory, UpdatePlan(ops=ops), scope)


def test_bounds_can_be_switched_off(graph: Graph) -> None:
    graph.config.bounds.enabled = False
    graph.check([RemoveNode(id=graph.ids["press"])], *ALL)
