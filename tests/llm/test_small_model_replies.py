"""What a small local model writes (issue 13), against the loopback fake server: copied example
ids, edges no rule allows, MERGE keep as a list, a ref used twice, output running to the token
cap, empty plans, names that are not names. Each ends with the event grounded by a valid plan
(the model's, mended, or the heuristic's) and the cost booked."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from llm_helpers import Rig, fold, new_concept, plan_json

from foldmem_testing.fakeserver import Reply
from schemas.graph import EdgeKind, NodeKind
from schemas.plans import AddEdge, AddNode, UpdatePlan
from topologies.llm.prompts.repair import REPAIR_PROMPT
from topologies.memory import event_node_id
from topologies.planner import PlanRequest

CONCEPT = new_concept("Flux tariffs")


def edge(src: str, kind: str, dst: str) -> dict[str, Any]:
    return {"op": "ADD_EDGE", "src": src, "kind": kind, "dst": dst}


def concepts(rig: Rig) -> list[str]:
    return sorted(n.title for n in rig.memory().graph.nodes(NodeKind.CONCEPT))


def last_usage(rig: Rig) -> Any:
    return rig.ledger.recent(1)[0]


def prompt_of(body: dict[str, Any]) -> str:
    return str(body["messages"][1]["content"])


async def test_the_examples_id_is_dropped_and_the_rest_applied(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig()
    rig.fake.push(Reply(content=plan_json(edge("E", "REINFORCES", "C99"), *CONCEPT)))
    result = await fold(rig, make_event("Flux tariffs launch sync", "agenda"))
    assert result.planner == "llm" and concepts(rig) == ["Flux tariffs"]
    assert rig.fake.calls == 1  # no repair round for one slip
    usage = last_usage(rig)
    assert usage.outcome == "llm" and "example's id" in usage.extra["dropped"][0]
    assert rig.ledger.tenant("alice")["salvaged"] == 1


async def test_only_copied_ids_get_a_repair_naming_them_then_the_heuristic(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig()
    copied = plan_json(edge("E", "REINFORCES", "C99"), edge("E", "REINFORCES", "W2"))
    rig.fake.push(Reply(content=copied), Reply(content=copied))
    await fold(rig, make_event("Flux tariffs launch sync", "agenda"))
    repair = rig.fake.requests[1]["messages"][-1]["content"]
    assert "'C99' is the example's id" in repair and "'W2' is not an id" in repair
    assert rig.heuristic.calls == 1 and last_usage(rig).outcome == "fallback_invalid"


async def test_the_example_in_the_prompt_cannot_be_a_real_id_or_phrase(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig()
    for i in range(3):
        await fold(rig, make_event(f"Flux tariffs launch sync {i}", "agenda for the launch"))
    system = rig.fake.requests[-1]["messages"][0]["content"]
    example = system.split("EXAMPLE", 1)[1]
    shown = [line.split()[0] for line in prompt_of(rig.fake.requests[-1]).splitlines()
             if line[:1] in "PCGT" and line[1:2].isdigit()]  # fmt: skip
    assert shown and "C99" in example and "C99" not in shown
    assert '"facts": ["<' in example  # phrases are placeholders, never text of a real context


async def test_reinforces_into_an_event_becomes_related_to(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig()
    await fold(rig, make_event("Flux tariffs launch sync", "weekly sync of the launch"))
    first = event_node_id("alice", "ev-0001")
    rig.fake.push(Reply(content=plan_json(edge("E", "REINFORCES", "P1"), *CONCEPT)))
    await fold(rig, make_event("Flux tariffs launch sync again", "weekly sync of the launch"))
    assert "P1 EVENT" in prompt_of(rig.fake.requests[-1])
    graph = rig.memory().graph
    second = event_node_id("alice", "ev-0002")
    assert graph.edge(second, first, EdgeKind.RELATED_TO) is not None
    assert graph.edge(second, first, EdgeKind.REINFORCES) is None
    assert "made RELATED_TO" in last_usage(rig).extra["fixes"][0]


async def test_a_ref_used_twice_names_two_nodes(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig()
    ops = [
        {"op": "ADD_NODE", "ref": "n1", "kind": "CONCEPT", "title": "Flux tariffs"},
        edge("E", "GROUNDS", "n1"),
        {"op": "ADD_NODE", "ref": "n1", "kind": "FACT", "title": "The launch moved to 19 Nov"},
        edge("E", "GROUNDS", "n1"),  # the nearest n1 before: the fact
    ]
    rig.fake.push(Reply(content=plan_json(*ops)))
    await fold(rig, make_event("Launch news", "Flux tariffs: the launch moved to 19 Nov, says Dan"))
    graph = rig.memory().graph
    assert concepts(rig) == ["Flux tariffs"]
    assert "The launch moved to 19 Nov" in [n.title for n in graph.nodes(NodeKind.FACT)]
    usage = last_usage(rig)
    assert usage.outcome == "llm" and any("was used again" in f for f in usage.extra["fixes"])


async def test_runaway_output_to_the_token_cap_keeps_the_complete_ops(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig(max_output_tokens=200)
    runaway = json.dumps({"notes": "x", "ops": [*CONCEPT, *[edge("E", "GROUNDS", "n1")] * 200]})
    rig.fake.push(Reply(content=runaway))
    result = await fold(rig, make_event("Launch sync", "Flux tariffs launch"))
    assert rig.fake.requests[0]["max_tokens"] == 200
    assert result.planner == "llm" and concepts(rig) == ["Flux tariffs"] and rig.fake.calls == 1
    row = rig.ledger.tenant("alice")
    assert row["truncated"] == 1 and row["llm"] == 1


async def test_runaway_without_one_complete_op_is_repaired(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig(max_output_tokens=64)
    long_title = {"op": "ADD_NODE", "ref": "n1", "kind": "CONCEPT", "title": "Flux " * 400}
    rig.fake.push(Reply(content=plan_json(long_title)), Reply(content=plan_json(*CONCEPT)))
    await fold(rig, make_event("Launch sync", "Flux tariffs launch"))
    assert "stopped at the limit of 64 tokens" in rig.fake.requests[1]["messages"][-1]["content"]
    assert concepts(rig) == ["Flux tariffs"] and last_usage(rig).outcome == "repaired"


class Busy:
    """A heuristic planner with something to do: one new concept grounded by the event."""

    name = "heuristic"

    def __init__(self) -> None:
        self.calls = 0

    async def plan(self, request: PlanRequest) -> UpdatePlan:
        self.calls += 1
        node = request.event_node.id
        return UpdatePlan(
            planner=self.name,
            ops=[
                AddNode(ref="h1", kind=NodeKind.CONCEPT, title="Heuristic theme"),
                AddEdge(src=node, dst="h1", kind=EdgeKind.GROUNDS),
            ],
        )


async def test_an_empty_plan_after_repair_falls_back_to_the_heuristic(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig()
    rig.planner.heuristic = busy = Busy()
    rig.fake.push(Reply(content="{not json"), Reply(content=json.dumps({"ops": [], "notes": "ok"})))
    await fold(rig, make_event("Launch sync", "Flux tariffs launch"))
    assert "skipped" not in REPAIR_PROMPT and '"ops": []' not in REPAIR_PROMPT
    assert concepts(rig) == ["Heuristic theme"] and busy.calls == 1
    assert last_usage(rig).outcome == "fallback_empty"


async def test_an_empty_plan_stands_only_with_a_reason_and_the_heuristics_agreement(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig()  # its heuristic plans nothing
    rig.fake.push(
        Reply(content=json.dumps({"ops": [], "notes": "An automatic delivery notice."})),
        Reply(content=json.dumps({"ops": [], "notes": ""})),
    )
    await fold(rig, make_event("Your parcel", "tracking"))
    assert last_usage(rig).outcome == "llm_empty"
    await fold(rig, make_event("Another parcel", "tracking"))
    assert last_usage(rig).outcome == "fallback_empty"  # no reason given
    rig.planner.heuristic = Busy()
    rig.fake.push(Reply(content=json.dumps({"ops": [], "notes": "Nothing new."})))
    await fold(rig, make_event("Launch sync", "Flux tariffs launch"))
    assert last_usage(rig).outcome == "fallback_empty" and concepts(rig) == ["Heuristic theme"]
    assert rig.fake.calls == 3  # an empty plan gets no repair round


async def test_labels_that_are_not_noun_phrases_get_the_heuristics_label(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig()
    title = "Weekly sync with Dan about the Flux tariffs launch"
    for label in (title, "The launch moved. Dan will send the deck.", "<noun phrase>", "Dan"):
        rig.fake.push(Reply(content=plan_json(*new_concept(label))))
        await fold(rig, make_event(title, "agenda: Flux tariffs launch", participants=["Dan"]))
    labels = concepts(rig)
    assert all(len(label.split()) <= 4 and "." not in label for label in labels), labels
    assert title not in labels and "Dan" not in labels and "<noun phrase>" not in labels


async def test_the_schema_reaches_a_llama_cpp_server_as_a_grammar(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig()
    rig.fake.reject_json_schema = True
    rig.fake.reject_status = 500  # llama-cpp-python
    await fold(rig, make_event("Flux tariffs launch sync", "agenda"))
    await fold(rig, make_event("Flux tariffs launch sync again", "agenda"))
    fmt = rig.fake.requests[-1]["response_format"]
    assert fmt["type"] == "json_object"
    schema = fmt["schema"]
    ops = schema["properties"]["ops"]
    assert ops["maxItems"] == rig.planner.config.max_plan_ops  # no runaway list
    variants = {v["properties"]["op"]["enum"][0]: v for v in ops["items"]["anyOf"]}
    ids = variants["ADD_EDGE"]["properties"]["dst"]["enum"]
    assert "E" in ids and "C1" in ids and "C99" not in ids  # this request's ids only
    merge = variants["MERGE_NODES"]
    assert merge["properties"]["keep"]["type"] == "string"  # keep is one id, never a list


async def test_a_concept_rename_beyond_the_bound_is_dropped_but_the_plan_kept(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = make_rig()
    rig.fake.push(Reply(content=plan_json(*new_concept("Flux tariffs"))))
    await fold(rig, make_event("Launch sync", "Flux tariffs launch"))
    reply = {
        "notes": "another launch sync",
        "concept": "C1",
        "facts": [],
        "ops": [{"op": "UPDATE_NODE", "id": "C1", "title": "Purpose"}],  # far from the title
    }
    rig.fake.push(Reply(content=json.dumps(reply)))
    result = await fold(rig, make_event("Launch sync 2", "Flux tariffs launch again"))
    assert result.planner == "llm" and rig.fake.calls == 2  # no repair, no fallback
    assert concepts(rig) == ["Flux tariffs"]  # reinforced, not renamed
    usage = last_usage(rig)
    assert usage.outcome == "llm" and "plan bound" in usage.extra["dropped"][0]


async def test_the_heuristics_dates_and_event_links_join_the_models_plan(
    make_rig: Callable[..., Rig], make_event: Any, embedder: Any
) -> None:
    from topologies.config import EngineConfig
    from topologies.heuristic_planner import HeuristicPlanner

    rig = make_rig(rule_structure=True, concept_boundaries="model")
    rig.planner.heuristic = HeuristicPlanner(embedder, EngineConfig())
    rig.fake.push(Reply(content=json.dumps({"notes": "demo", "concept": "Client demo",
                                            "facts": [], "ops": []})))  # fmt: skip
    await fold(rig, make_event("Demo prep", "Client demo with Kessler on Monday 23 November"))
    graph = rig.memory().graph
    times = list(graph.nodes(NodeKind.TIME))
    assert times and "2026-11-23" in times[0].title  # the heuristic's date
    event = event_node_id("alice", "ev-0001")
    assert graph.edge(times[0].id, event, EdgeKind.DEADLINE_FOR) is not None
    assert concepts(rig) == ["Client demo"]  # the model's concept, not the heuristic's
    assert last_usage(rig).extra["rule_ops"] == 2


async def test_a_listed_concept_far_from_the_event_is_not_its_concept(
    make_rig: Callable[..., Rig], make_event: Any
) -> None:
    """A small model answers the only listed concept for every event: one concept swallows
    the stream. Only concepts at the engine's assignment similarity may be the event's."""
    rig = make_rig()
    rig.fake.push(Reply(content=plan_json(*new_concept("Flux tariffs"))))
    await fold(rig, make_event("Launch sync", "Flux tariffs launch agenda"))
    answer = {"notes": "dentist", "concept": "C1", "facts": [], "ops": []}
    rig.fake.push(Reply(content=json.dumps(answer)), Reply(content=json.dumps(answer)))
    await fold(rig, make_event("Dentist", "Crown on the lower molar, Tuesday"))
    body = rig.fake.requests[1]
    assert "No listed concept is close to the event" in prompt_of(body)
    graph = rig.memory().graph
    (concept,) = graph.nodes(NodeKind.CONCEPT)
    assert graph.edge(event_node_id("alice", "ev-0002"), concept.id, EdgeKind.REINFORCES) is None
    assert "is not close to the event" in " ".join(rig.fake.requests[2]["messages"][-1]["content"]
                                                   .split())  # fmt: skip


def test_the_grammar_offers_only_close_concepts_as_the_events_concept() -> None:
    from topologies.llm.prompts.plan_update import IdMap, grammar_schema

    ids = IdMap()
    ids.add(NodeKind.EVENT, "e", event=True)
    ids.add(NodeKind.CONCEPT, "near")  # C1
    ids.add(NodeKind.CONCEPT, "far")  # C2
    ids.sims.update({"C1": 0.7, "C2": 0.1})
    close = ids.close_concepts(0.4)
    schema = grammar_schema(ids, 6, close)
    choices = schema["properties"]["concept"]["anyOf"]
    assert close == ["C1"] and choices[0]["enum"] == ["C1"]
    assert {"type": "null"} in choices and "pattern" in choices[1]  # or a new noun phrase
