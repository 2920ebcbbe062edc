"""With an LLM planner, the model's concept labels and intent titles pass the same checks as
the heuristic's names; a name that fails gives way to the heuristic's name for the evidence."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from llm_helpers import Rig, fold, new_concept, plan_json

from foldmem_testing.fakeserver import Reply
from schemas.graph import NodeKind
from topologies.embedding import HashingEmbedder
from topologies.naming import Namer
from topologies.text import tokens

_CONCEPT_LINE = re.compile(r'^(\w+) CONCEPT "([^"]+)"', re.MULTILINE)


def titles(rig: Rig, kind: NodeKind) -> list[str]:
    return [n.title for n in rig.memory("alice").graph.nodes(kind)]


def short_ids(body: dict[str, Any]) -> dict[str, str]:
    """Concept title -> the short id the prompt gave it."""
    prompt = "\n".join(str(m.get("content", "")) for m in body["messages"])
    return {title: short for short, title in _CONCEPT_LINE.findall(prompt)}


async def test_a_label_that_is_a_function_word_gives_way_to_the_heuristic_label(
    make_rig: Callable[..., Rig], make_event: Any, embedder: HashingEmbedder
) -> None:
    namer = Namer(embedder)
    rig = make_rig(namer=namer)
    rig.fake.push(Reply(content=plan_json(*new_concept("Whether"))))
    event = make_event("Passport renewal", "The passport renewal appointment is at the office.")
    await fold(rig, event)
    (label,) = titles(rig, NodeKind.CONCEPT)
    assert label != "Whether" and namer.label_problem(label) is None
    assert {w.lower() for w in tokens(label)} <= {w.lower() for w in tokens(event.body)}


async def test_a_label_with_a_person_of_the_event_gives_way(
    make_rig: Callable[..., Rig], make_event: Any, embedder: HashingEmbedder
) -> None:
    rig = make_rig(namer=Namer(embedder))
    rig.fake.push(Reply(content=plan_json(*new_concept("Mam Rang"))))
    await fold(rig, make_event("Dinner plans", "Dinner with the cousins on Friday."))
    (label,) = titles(rig, NodeKind.CONCEPT)
    assert "Mam" not in label and "Rang" not in label


async def test_a_label_that_names_someone_of_an_earlier_event_gives_way(
    make_rig: Callable[..., Rig], make_event: Any, embedder: HashingEmbedder
) -> None:
    """A 1.5B model named a concept after the friend who drives to physiotherapy ("Dani"): the
    name is in an earlier chat's sender, not in this event's participants."""
    rig = make_rig(namer=Namer(embedder))
    rig.fake.push(Reply(content=plan_json(*new_concept("Tuesday drive"))))
    await fold(rig, make_event("Chat", "I can drive you on Tuesday", participants=["Marcus Bell"]))
    rig.fake.push(Reply(content=plan_json(*new_concept("Marcus"))))
    await fold(rig, make_event("Physio", "Physio session at nine; Marcus drives me there."))
    labels = titles(rig, NodeKind.CONCEPT)
    assert "Tuesday drive" in labels and "Marcus" not in labels and len(labels) == 2


async def test_a_good_label_from_the_model_is_kept(
    make_rig: Callable[..., Rig], make_event: Any, embedder: HashingEmbedder
) -> None:
    rig = make_rig(namer=Namer(embedder))
    rig.fake.push(Reply(content=plan_json(*new_concept("Flux Tariffs launch"))))
    await fold(rig, make_event("Flux Tariffs weekly launch sync", "agenda"))
    assert titles(rig, NodeKind.CONCEPT) == ["Flux Tariffs launch"]


async def test_a_label_the_model_writes_in_lower_case_starts_upper_case(
    make_rig: Callable[..., Rig], make_event: Any, embedder: HashingEmbedder
) -> None:
    rig = make_rig(namer=Namer(embedder))
    rig.fake.push(Reply(content=plan_json(*new_concept("release check"))))
    await fold(rig, make_event("Release check for v5", "the release check is on Friday"))
    assert titles(rig, NodeKind.CONCEPT) == ["Release check"]


async def test_a_failing_rename_keeps_the_current_label(
    make_rig: Callable[..., Rig], make_event: Any, embedder: HashingEmbedder
) -> None:
    rig = make_rig(namer=Namer(embedder))
    rig.fake.push(Reply(content=plan_json(*new_concept("Passport renewal"))))
    await fold(rig, make_event("Passport renewal", "The appointment is on Monday."))

    def rename(body: dict[str, Any]) -> Reply:
        target = short_ids(body)["Passport renewal"]
        op = {"op": "UPDATE_NODE", "id": target, "title": "and then we", "reasoning": "x"}
        return Reply(content=plan_json(op))

    rig.fake.handler = rename
    await fold(rig, make_event("Passport photos", "Photos for the passport renewal."))
    assert titles(rig, NodeKind.CONCEPT) == ["Passport renewal"]


async def test_an_intent_title_that_glues_labels_gives_way_to_a_to_do_item(
    make_rig: Callable[..., Rig], make_event: Any, embedder: HashingEmbedder
) -> None:
    namer = Namer(embedder)
    rig = make_rig(namer=namer)
    rig.fake.push(
        Reply(content=plan_json(*new_concept("Passport renewal"))),
        Reply(content=plan_json(*new_concept("Lisbon trip"))),
    )
    await fold(rig, make_event("Passport", "I need to renew the passport before the trip."))
    await fold(rig, make_event("Flights booked", "Flights to Lisbon on 18 Dec are booked."))

    def intent(body: dict[str, Any]) -> Reply:
        ids = short_ids(body)
        ops = [
            {"op": "ADD_NODE", "ref": "n1", "kind": "INTENT", "reasoning": "x",
             "title": "Passport renewal before Lisbon trip", "deadline": "2026-12-18T08:00:00Z"},
            *({"op": "ADD_EDGE", "src": ids[label], "dst": "n1", "kind": "TRIGGERS",
               "reasoning": "x"} for label in ("Passport renewal", "Lisbon trip")),
            {"op": "ADD_EDGE", "src": "E", "dst": ids["Passport renewal"],
             "kind": "REINFORCES", "reasoning": "x"},  # the event corroborates a supporter
        ]  # fmt: skip
        return Reply(content=json.dumps({"ops": ops, "notes": ""}))

    rig.fake.handler = intent
    await fold(rig, make_event("Passport photo", "Got the photo for the passport."))
    (node,) = rig.memory("alice").graph.nodes(NodeKind.INTENT)
    assert rig.heuristic.calls == 0 and node.attrs["reasoning"] == "x"  # the model's intent
    title = node.title
    assert title == "Renew the passport before the trip (by 18 Dec)"
    assert namer.title_problem(title) is None


async def test_the_heuristic_name_that_replaces_a_label_is_no_person_either(
    make_rig: Callable[..., Rig], make_event: Any, embedder: HashingEmbedder
) -> None:
    """A 1.5B model's label had no word of its event ("Qatar shift"); the namer's name for the
    event, which replaced it, was the colleague it mentions ("Joost")."""
    rig = make_rig(namer=Namer(embedder))
    rig.fake.push(Reply(content=plan_json(*new_concept("Weekly planning"))))
    await fold(rig, make_event("Weekly planning", "Weekly planning", participants=["Joost Visser"]))
    rig.fake.push(Reply(content=plan_json(*new_concept("Qatar shift"))))
    await fold(rig, make_event("Joost", "Covering while Joost is out"))
    labels = titles(rig, NodeKind.CONCEPT)
    assert "Qatar shift" not in labels and "Joost" not in labels
