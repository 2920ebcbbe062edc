"""Concept boundaries from the rules (issue 13): a small model opens a concept for nearly every
event; with ``concept_boundaries="rules"`` which concept an event joins is the heuristic
planner's call and the model's label names the concepts the rules open."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llm_helpers import Rig, fold, new_concept, plan_json

from foldmem_testing.fakeserver import Reply
from schemas.graph import EdgeKind, NodeKind
from schemas.plans import AddEdge, AddNode, UpdateNode, UpdatePlan
from topologies.config import EngineConfig
from topologies.heuristic_planner import HeuristicPlanner
from topologies.llm import names
from topologies.llm.boundaries import rule_boundaries
from topologies.naming.namer import Namer

EVENT = "ev:new"
KINDS = {EVENT: NodeKind.EVENT, "ev:old": NodeKind.EVENT, "c:trip": NodeKind.CONCEPT,
         "c:dentist": NodeKind.CONCEPT, "i:goal": NodeKind.INTENT}  # fmt: skip


def kind_of(node: str) -> NodeKind | None:
    return KINDS.get(node)


def plan(*ops: Any) -> UpdatePlan:
    return UpdatePlan(ops=list(ops), planner="test")


def concept(ref: str, title: str) -> AddNode:
    return AddNode(ref=ref, kind=NodeKind.CONCEPT, title=title)


def edges(result: UpdatePlan) -> set[tuple[str, EdgeKind, str]]:
    return {(op.src, op.kind, op.dst) for op in result.ops if isinstance(op, AddEdge)}


def new_titles(result: UpdatePlan) -> list[str]:
    return [op.title for op in result.ops if isinstance(op, AddNode)]


def test_a_new_concept_of_the_model_becomes_the_concept_the_rules_join() -> None:
    model = plan(
        concept("n1", "Passport renewal"),
        AddEdge(src=EVENT, dst="n1", kind=EdgeKind.GROUNDS),
        AddEdge(src="n1", dst="i:goal", kind=EdgeKind.TRIGGERS),
    )
    rules = plan(AddEdge(src=EVENT, dst="c:trip", kind=EdgeKind.REINFORCES),
                 UpdateNode(id="c:trip", attrs={"members": 4}))  # fmt: skip
    bounded = rule_boundaries(model, rules, EVENT, kind_of)
    assert new_titles(bounded.plan) == []  # no concept of one event
    assert edges(bounded.plan) == {
        (EVENT, EdgeKind.REINFORCES, "c:trip"),
        ("c:trip", EdgeKind.TRIGGERS, "i:goal"),  # the model's link, on the rules' concept
    }
    assert bounded.overridden


def test_the_models_label_names_the_concept_the_rules_open() -> None:
    model = plan(concept("n1", "Passport renewal"),
                 AddEdge(src=EVENT, dst="n1", kind=EdgeKind.GROUNDS))  # fmt: skip
    rules = plan(
        concept("n1", "Application"),
        AddEdge(src=EVENT, dst="n1", kind=EdgeKind.GROUNDS),
        AddEdge(src="ev:old", dst="n1", kind=EdgeKind.GROUNDS),
        AddEdge(src="n1", dst="ev:old", kind=EdgeKind.DERIVED_FROM),
    )
    bounded = rule_boundaries(model, rules, EVENT, kind_of)
    assert new_titles(bounded.plan) == ["Passport renewal"]
    assert edges(bounded.plan) == {
        (EVENT, EdgeKind.GROUNDS, "hc1"),
        ("ev:old", EdgeKind.GROUNDS, "hc1"),  # the earlier unassigned event the rules pooled
        ("hc1", EdgeKind.DERIVED_FROM, "ev:old"),
    }
    assert not bounded.overridden


def test_no_concept_yet_when_the_rules_give_none() -> None:
    model = plan(
        AddEdge(src=EVENT, dst="c:dentist", kind=EdgeKind.REINFORCES),
        concept("n1", "Crown fitting"),
        AddEdge(src=EVENT, dst="n1", kind=EdgeKind.GROUNDS),
        AddEdge(src="n1", dst="c:dentist", kind=EdgeKind.RELATED_TO),
    )
    bounded = rule_boundaries(model, plan(), EVENT, kind_of)
    assert bounded.plan.ops == [] and bounded.overridden


def test_a_rename_by_the_model_keeps_the_rules_bookkeeping() -> None:
    model = plan(AddEdge(src=EVENT, dst="c:trip", kind=EdgeKind.REINFORCES),
                 UpdateNode(id="c:trip", title="Thailand trip"))  # fmt: skip
    rules = plan(
        AddEdge(src=EVENT, dst="c:trip", kind=EdgeKind.REINFORCES),
        UpdateNode(id="c:trip", title="Flights", attrs={"members": 5, "named_at": 5}),
    )
    bounded = rule_boundaries(model, rules, EVENT, kind_of)
    updates = [op for op in bounded.plan.ops if isinstance(op, UpdateNode)]
    assert [(u.title, u.attrs) for u in updates] == [
        ("Thailand trip", {"members": 5, "named_at": 5})
    ]
    assert not bounded.overridden


# ----------------------------------------------------------------- folded through the planner
TRIP = ["Thailand trip flights booked Bangkok", "Thailand trip hotel Bangkok booked",
        "Thailand trip visa Bangkok flights", "Thailand trip packing list Bangkok"]  # fmt: skip
TEETH = ["Dentist crown fitting appointment", "Dentist crown temporary appointment",
         "Dentist crown bill appointment"]  # fmt: skip


def model_label(text: str) -> str:
    return " ".join(text.split()[2:4])  # "flights booked", "crown fitting"


def rig_with_rules(make_rig: Callable[..., Rig], embedder: Any, boundaries: str) -> Rig:
    rig = make_rig(rule_structure=True, concept_boundaries=boundaries)
    rig.planner.heuristic = HeuristicPlanner(embedder, EngineConfig())
    return rig


async def fold_split_happy_model(rig: Rig, make_event: Any) -> list[str]:
    """Each event gets a reply opening a concept of its own (what Qwen 0.5B did)."""
    for text in TRIP + TEETH:
        rig.fake.push(Reply(content=plan_json(*new_concept(model_label(text)))))
        await fold(rig, make_event(text, text + " details"))
    return [n.title for n in rig.memory().graph.nodes(NodeKind.CONCEPT)]


async def test_a_model_opening_a_concept_per_event_gets_the_rules_boundaries(
    make_rig: Callable[..., Rig], make_event: Any, embedder: Any
) -> None:
    rig = rig_with_rules(make_rig, embedder, "rules")
    titles = await fold_split_happy_model(rig, make_event)
    assert 1 <= len(titles) <= 2  # a trip and a dentist, not seven
    assert {t.casefold() for t in titles} <= {model_label(t).casefold() for t in TRIP + TEETH}
    overridden = sum(u.extra.get("concept_overridden", 0) for u in rig.ledger.recent(7))
    assert overridden >= 5
    assert rig.ledger.tenant("alice")["concept_overridden"] == overridden


async def test_with_model_boundaries_the_models_concepts_stand(
    make_rig: Callable[..., Rig], make_event: Any, embedder: Any
) -> None:
    titles = await fold_split_happy_model(rig_with_rules(make_rig, embedder, "model"), make_event)
    assert len(titles) == 7


def test_the_setting_reaches_the_planner() -> None:
    from stream_app.settings import Settings
    from topologies.llm.config import LLMConfig

    assert LLMConfig().concept_boundaries == "rules"
    settings = Settings(llm_concept_boundaries="model")  # FOLDMEM_LLM_CONCEPT_BOUNDARIES
    assert LLMConfig.from_settings(settings).concept_boundaries == "model"


# ------------------------------------------------- labels that fit the members (rules' boundaries)
ERRANDS = ["umbrella", "adapter", "sunscreen", "earplugs"]


def off_theme(text: str, errand: str) -> str:
    return f"{text}, and buy the {errand}"


def titles_of(rig: Rig) -> list[str]:
    return [n.title for n in rig.memory().graph.nodes(NodeKind.CONCEPT)]


async def test_a_label_of_one_events_errand_gives_way_to_the_rules_label(
    make_rig: Callable[..., Rig], make_event: Any, embedder: Any
) -> None:
    """The model sees one event: it names the trip after the errand in it (a word of the
    event, so it passes the copy checks); the members' centroid is the trip."""
    rig = make_rig(rule_structure=True, concept_boundaries="rules", namer=Namer(embedder))
    rig.planner.heuristic = HeuristicPlanner(embedder, EngineConfig())
    for text, errand in zip(TRIP, ERRANDS, strict=True):
        rig.fake.push(Reply(content=plan_json(*new_concept(errand.capitalize()))))
        await fold(rig, make_event(off_theme(text, errand), text))
    titles = titles_of(rig)
    assert titles and not {t.casefold() for t in titles} & set(ERRANDS)
    kept = sum(u.extra.get("labels_from_rules", 0) for u in rig.ledger.recent(4))
    assert kept >= 1


def test_a_label_narrowed_to_one_members_detail_adds_a_detail() -> None:
    interviews = ["Interview loop for the backend role: system design round on Thursday",
                  "Interview feedback due for the frontend candidate",
                  "Schedule the interview debrief with the hiring panel"]  # fmt: skip
    assert names.adds_a_detail("System design interview", "Interview", interviews)
    two_of_three = [interviews[0], interviews[0].replace("backend", "data"), interviews[2]]
    assert names.adds_a_detail("System design interview", "Interview", two_of_three)
    assert not names.adds_a_detail("Interview debrief", "Interview", interviews[2:])  # all say it
    assert not names.adds_a_detail("Hiring", "Interview", interviews)  # another word, not more
    assert not names.adds_a_detail("Interview", "Interview", interviews)


async def test_a_label_of_one_members_detail_gives_way_to_the_rules_label(
    make_rig: Callable[..., Rig], make_event: Any, embedder: Any
) -> None:
    """The model's label describes the trip's members as well as the rules' label does (by
    their centroid), but adds the packing list only one event speaks of: the rules' stays."""
    rig = make_rig(rule_structure=True, concept_boundaries="rules", namer=Namer(embedder))
    rig.planner.heuristic = HeuristicPlanner(embedder, EngineConfig())
    narrowed = "Thailand trip Bangkok flights packing"
    for text in TRIP:
        rig.fake.push(Reply(content=plan_json(*new_concept(narrowed))))
        await fold(rig, make_event(text, text))
    titles = titles_of(rig)
    assert titles and narrowed not in titles
    kept = sum(u.extra.get("labels_from_rules", 0) for u in rig.ledger.recent(4))
    assert kept >= 1


async def test_a_label_that_fits_the_members_is_the_models(
    make_rig: Callable[..., Rig], make_event: Any, embedder: Any
) -> None:
    rig = make_rig(rule_structure=True, concept_boundaries="rules", namer=Namer(embedder))
    rig.planner.heuristic = HeuristicPlanner(embedder, EngineConfig())
    for text in TRIP:
        rig.fake.push(Reply(content=plan_json(*new_concept("Thailand trip Bangkok"))))
        await fold(rig, make_event(text, text))
    assert titles_of(rig) == ["Thailand trip Bangkok"]


async def test_a_rename_that_fits_worse_keeps_the_current_name(
    make_rig: Callable[..., Rig], make_event: Any, embedder: Any
) -> None:
    rig = make_rig(rule_structure=True, concept_boundaries="rules", namer=Namer(embedder))
    rig.planner.heuristic = HeuristicPlanner(embedder, EngineConfig())
    for text in TRIP[:3]:
        rig.fake.push(Reply(content=plan_json(*new_concept("Thailand trip Bangkok"))))
        await fold(rig, make_event(text, text))
    (concept,) = rig.memory().graph.nodes(NodeKind.CONCEPT)
    rename = {"op": "UPDATE_NODE", "id": "C1", "title": "Earplugs", "reasoning": "renamed",
              "grounded_in": ["E"]}  # fmt: skip
    rig.fake.push(Reply(content=plan_json(rename)))
    await fold(rig, make_event(off_theme(TRIP[3], "earplugs"), TRIP[3]))
    assert rig.memory().graph.get(concept.id).title == "Thailand trip Bangkok"


async def test_the_rules_deadline_of_a_concept_comes_with_the_models_plan(
    make_rig: Callable[..., Rig], make_event: Any, embedder: Any
) -> None:
    """The rules open the concept on a day-naming event: its DEADLINE_FOR edge from the new
    TIME node reaches the rules' concept, as in the heuristic's own plan."""
    rig = rig_with_rules(make_rig, embedder, "rules")
    texts = [f"{t}, due by 2{i} November" for i, t in enumerate(TRIP)]
    for text in texts:
        rig.fake.push(Reply(content=plan_json(*new_concept(model_label(text)))))
        await fold(rig, make_event(text, text))
    graph = rig.memory().graph
    (concept,) = graph.nodes(NodeKind.CONCEPT)
    dated = [e for e in graph.in_edges(concept.id, EdgeKind.DEADLINE_FOR)]
    assert dated, "the concept lost the rules' deadline"
    assert len(list(graph.nodes(NodeKind.TIME))) == len(texts)  # every event's day, none skipped


async def test_a_models_label_gives_way_when_a_member_without_its_detail_joins(
    make_rig: Callable[..., Rig], make_event: Any, embedder: Any
) -> None:
    """Both first members speak of Bangkok flights and the model names the folder for them;
    the booking that joins next names no Bangkok, so the folder takes the rules' name."""
    rig = make_rig(rule_structure=True, concept_boundaries="rules", namer=Namer(embedder))
    rig.planner.heuristic = HeuristicPlanner(embedder, EngineConfig())
    flights = [TRIP[0], TRIP[2]]
    named = "Thailand trip Bangkok flights"
    for text in flights:
        rig.fake.push(Reply(content=plan_json(*new_concept(named))))
        await fold(rig, make_event(text, text))
    assert titles_of(rig) == [named]
    rig.fake.push(Reply(content=plan_json(*new_concept(named))))
    joining = "Thailand trip visa flights booked"
    await fold(rig, make_event(joining, joining))
    (title,) = titles_of(rig)
    assert title != named and "Bangkok" not in title
    assert rig.ledger.recent(1)[0].extra.get("labels_from_rules") == 1
