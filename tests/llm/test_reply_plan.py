"""A model's plan reply mapped to an UpdatePlan (topologies/llm/reply_plan.py): ids back, slips
of small models mended or dropped, bound breaches refused."""

from __future__ import annotations

from datetime import UTC
from typing import Any

import pytest

from schemas.errors import PlanRejectedError
from schemas.graph import EdgeKind, NodeKind
from schemas.plans import AddEdge, AddNode, MergeNodes
from topologies.llm.prompts.plan_update import IdMap
from topologies.llm.reply_plan import convert, stated_in

EVENT_TEXT = "Sprint 18 planning: the demo for Kessler moved to Thursday 23 April."


def ids() -> IdMap:
    m = IdMap()
    m.add(NodeKind.EVENT, "ev-node", event=True)
    m.add(NodeKind.CONCEPT, "c-demo")  # C1
    m.add(NodeKind.CONCEPT, "c-demos")  # C2
    m.add(NodeKind.EVENT, "ev-old")  # P1
    m.add(NodeKind.INTENT, "i-ship")  # G1
    return m


def run(*ops: dict[str, Any], notes: str = "sprint planning", max_ops: int = 6) -> Any:
    return convert({"notes": notes, "ops": list(ops)}, ids(), "llm", max_ops, UTC, EVENT_TEXT)


def edge(src: str, kind: str, dst: str) -> dict[str, Any]:
    return {"op": "ADD_EDGE", "src": src, "kind": kind, "dst": dst}


def node(ref: str, kind: str, title: str, **kw: Any) -> dict[str, Any]:
    return {"op": "ADD_NODE", "ref": ref, "kind": kind, "title": title, **kw}


def test_short_ids_map_back_in_any_case_and_quoting() -> None:
    out = run(edge("e", "reinforces", " 'c1' "))
    assert out.plan.ops == [
        AddEdge(src="ev-node", dst="c-demo", kind=EdgeKind.REINFORCES, reasoning="sprint planning",
                grounded_in=["ev-node"])
    ]  # fmt: skip


def test_merge_keep_as_a_list_keeps_its_first_id() -> None:
    out = run({"op": "MERGE_NODES", "keep": ["C1", "C2"], "absorb": []})
    (merge,) = out.plan.ops
    assert isinstance(merge, MergeNodes) and merge.keep == "c-demo" and merge.absorb == ["c-demos"]
    assert "keep was a list" in out.fixes[0]


def test_a_ref_used_twice_names_two_nodes_in_reading_order() -> None:
    out = run(
        node("n1", "CONCEPT", "Sprint planning"),
        edge("E", "GROUNDS", "n1"),
        node("n1", "FACT", "The demo moved to Thursday 23 April"),
        edge("n1", "GROUNDS", "C1"),  # the fact just added supports concept C1
    )
    nodes = [op for op in out.plan.ops if isinstance(op, AddNode)]
    assert [(n.ref, n.kind) for n in nodes] == [("n1", NodeKind.CONCEPT), ("n2", NodeKind.FACT)]
    edges = {(op.src, op.kind, op.dst) for op in out.plan.ops if isinstance(op, AddEdge)}
    assert ("n2", EdgeKind.GROUNDS, "c-demo") in edges
    assert ("ev-node", EdgeKind.GROUNDS, "n2") in edges  # new facts are grounded by the event


def test_a_ref_used_before_its_node_names_the_next_definition() -> None:
    out = run(edge("E", "GROUNDS", "n1"), node("n1", "CONCEPT", "Sprint planning"))
    assert isinstance(out.plan.ops[0], AddNode)  # defined before use
    assert [op.dst for op in out.plan.ops if isinstance(op, AddEdge)] == ["n1"]


def test_reinforces_event_to_event_becomes_related_to_and_backwards_edges_turn() -> None:
    out = run(edge("E", "REINFORCES", "P1"), edge("C1", "REINFORCES", "E"))
    kinds = [(op.src, op.kind, op.dst) for op in out.plan.ops if isinstance(op, AddEdge)]
    assert kinds == [
        ("ev-node", EdgeKind.RELATED_TO, "ev-old"),
        ("ev-node", EdgeKind.REINFORCES, "c-demo"),
    ]
    assert len(out.fixes) == 2 and not out.dropped


def test_slips_are_dropped_with_their_reason() -> None:
    out = run(
        edge("E", "REINFORCES", "C99"),  # the example's id
        edge("E", "REINFORCES", "W2"),  # an id of another prompt
        edge("E", "PART_OF", "C1"),  # no rule allows EVENT -> CONCEPT for PART_OF
        node("n1", "TIME", "Demo", ts="2026-04-23"),  # no DEADLINE_FOR
        node("n2", "FACT", "The user loves pizza on Fridays"),  # not said by the event
        node("n3", "INTENT", "Ship the demo"),  # no TRIGGERS
        {"op": "SPLIT_NODE", "id": "C1"},
        edge("E", "REINFORCES", "C1"),
        max_ops=8,
    )
    assert [type(op) for op in out.plan.ops] == [AddEdge]
    reasons = " | ".join(out.dropped)
    for part in ("example's id", "'W2' is not an id", "PART_OF cannot go", "DEADLINE_FOR",
                 "not a statement of the new event", "TRIGGERS", "unknown op"):  # fmt: skip
        assert part in reasons, part
    assert not out.refused


@pytest.mark.parametrize(
    "op",
    [
        {"op": "REMOVE_NODE", "id": "C1"},
        {"op": "UPDATE_NODE", "id": "G1", "status": "resolved"},
        {"op": "UPDATE_NODE", "id": "G1", "title": "Wire money"},
        edge("E", "RELATED_TO", "f_8c1d0e7a9b2c"),  # a node id the model was never shown
    ],
    ids=["remove", "intent-status", "intent-title", "foreign-id"],
)
def test_bound_breaches_refuse_the_reply(op: dict[str, Any]) -> None:
    out = run(op, edge("E", "REINFORCES", "C1"))
    assert out.refused and "plan bound" in out.refused[0]


def test_repeated_ops_are_kept_once_and_extra_ops_cut() -> None:
    out = run(*[edge("E", "REINFORCES", "C1")] * 20)
    assert len(out.plan.ops) == 1 and "after the first 6" in out.dropped[0]


def test_a_time_with_its_deadline_edge_gets_an_aware_date() -> None:
    out = run(node("n1", "TIME", "Demo", ts="2026-04-23"), edge("n1", "DEADLINE_FOR", "G1"))
    time = out.plan.ops[0]
    assert isinstance(time, AddNode) and time.ts is not None and time.ts.tzinfo is UTC


def test_a_reply_without_an_ops_list_is_not_a_plan() -> None:
    with pytest.raises(PlanRejectedError):
        convert({"items": []}, ids(), "llm", 6)  # another task's reply
    empty = convert({"ops": [], "notes": "<what the event is about>"}, ids(), "llm", 6)
    assert empty.empty_reply and empty.notes == ""  # a copied placeholder is no reason


def test_stated_in_needs_the_events_words() -> None:
    words = frozenset(w.lower() for w in EVENT_TEXT.replace(":", " ").replace(".", " ").split())
    assert stated_in("Demo for Kessler moved to Thursday", words)
    assert not stated_in("Tomasz re-ran the flaky test on gh-large-7", words)


def test_a_fact_written_twice_is_added_once_with_one_grounding_edge() -> None:
    fact = "The demo moved to Thursday 23 April"
    out = convert(
        {"notes": "x", "concept": "C1", "facts": [fact, "Pizza on Fridays", fact], "ops": []},
        ids(), "llm", 6, UTC, EVENT_TEXT,
    )  # fmt: skip
    facts = [op for op in out.plan.ops if isinstance(op, AddNode) and op.kind == NodeKind.FACT]
    assert len(facts) == 1
    grounds = [op for op in out.plan.ops if isinstance(op, AddEdge) and op.dst == facts[0].ref]
    assert len(grounds) == 1
    refs = {op.ref for op in out.plan.ops if isinstance(op, AddNode)}
    assert all(op.dst in refs | {"c-demo"} for op in out.plan.ops if isinstance(op, AddEdge))
