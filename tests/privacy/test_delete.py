"""Hard delete, cascade, chain repair, tombstones, forget, export, audit (in memory)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from schemas.graph import EdgeKind, NodeKind
from tests.facts.helpers import REVISIONS, engine, stance_stream
from tests.nightly.helpers import domain_stream
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.facts.chains import chain_of
from topologies.facts.step import fact_id
from topologies.memory import TenantMemory, event_node_id
from topologies.nightly.run import run_nightly
from topologies.privacy import (
    ForgottenEventError,
    PrivacyError,
    audit_log,
    delete_event,
    delete_node,
    export_tenant,
    forget_tenant,
    layers,
    set_layers,
)

PRIVACY_NOW = datetime(2026, 12, 1, tzinfo=UTC)  # when the user asked (audit time)

MIDDLE = "Zumba classes on Thursdays"


async def _stances(embedder: HashingEmbedder) -> tuple[FoldEngine, TenantMemory]:
    eng = engine(embedder)
    memory = eng.new_memory("alice")
    for event in stance_stream():
        await eng.fold(memory, event)
    return eng, memory


def _dump(memory: TenantMemory) -> str:
    return orjson.dumps(export_tenant(memory, PRIVACY_NOW)).decode()


async def test_delete_middle_revision_relinks_the_chain(embedder: HashingEmbedder) -> None:
    eng, memory = await _stances(embedder)
    assert MIDDLE in _dump(memory)
    report = delete_event(memory, "stance-2", actor="alice", embedder=embedder, now=PRIVACY_NOW)
    gone = fact_id("alice", "stance-2", 0)
    assert (
        gone in report.deleted["FACT"]
        and event_node_id("alice", "stance-2") in report.deleted["EVENT"]
    )
    arc = chain_of(memory, fact_id("alice", "stance-0", 0))
    assert [n.text for n in arc] == [REVISIONS[0], REVISIONS[1], REVISIONS[3], REVISIONS[4]]
    before, after = arc[1], arc[2]
    assert before.superseded_by == after.id and after.supersedes == before.id
    assert memory.graph.edge(after.id, before.id, EdgeKind.SUPERSEDES) is not None
    assert before.valid_to == after.valid_from
    assert report.relinked == 1
    # the ChangeSet carries every deletion: node, vectors (FACT, EVENT, POOL), event state
    assert report.changes is not None
    assert report.changes.nodes[gone] is None
    assert report.changes.vectors[("FACT", gone)] is None
    assert report.changes.events["stance-2"] is None
    assert all(gone not in idx for idx in memory.indexes.values())
    assert MIDDLE not in _dump(memory)
    # a re-sent copy is refused; the tombstone is a hash, not the id or the content
    with pytest.raises(ForgottenEventError):
        await eng.fold(memory, stance_stream()[4])
    tombstones = [k for k in memory.meta if k.startswith("privacy.tombstone.")]
    assert len(tombstones) == 1 and "stance-2" not in tombstones[0]
    (entry,) = audit_log(memory)
    assert entry["actor"] == "alice" and entry["action"] == "forget_event"
    assert gone in entry["node_ids"] and MIDDLE not in orjson.dumps(entry).decode()
    assert "stance-2" not in orjson.dumps(entry).decode()


async def test_delete_head_and_tail(embedder: HashingEmbedder) -> None:
    _, memory = await _stances(embedder)
    delete_event(memory, "stance-4", now=PRIVACY_NOW)
    delete_event(memory, "stance-0", now=PRIVACY_NOW)
    arc = chain_of(memory, fact_id("alice", "stance-2", 0))
    assert [n.text for n in arc] == REVISIONS[1:4]
    assert arc[0].supersedes is None and arc[-1].superseded_by is None and arc[-1].valid_to is None


async def test_delete_cascades_to_schemas_intents_and_core(embedder: HashingEmbedder) -> None:
    eng = engine(embedder, heuristic=False)
    memory = eng.new_memory("dana")
    set_layers(memory, {"core_schemas": True}, now=PRIVACY_NOW)
    for event in domain_stream():
        await eng.fold(memory, event)
    run_nightly(eng, memory, eng.stream_now(memory))
    (intent,) = memory.graph.nodes(NodeKind.INTENT)
    (core,) = [n for n in memory.graph.nodes(NodeKind.CONCEPT) if n.core]
    health_events = [e.id for e in domain_stream() if "-note-" in e.id]
    for event_id in health_events[:-1]:
        delete_event(memory, event_id, embedder=embedder, now=PRIVACY_NOW)
    dump = _dump(memory)
    schema = next(n for n in memory.graph.nodes(NodeKind.CONCEPT) if n.category == "health")
    assert "stretches" in schema.text and "ankle" not in dump.lower()  # re-worded from survivors
    report = delete_event(memory, health_events[-1], embedder=embedder, now=PRIVACY_NOW)
    deleted = set(report.deleted_ids)
    assert schema.id in deleted and intent.id in deleted and core.id in deleted
    assert "physio" not in _dump(memory)


async def test_forget_tenant_keeps_only_hashes_and_audit(embedder: HashingEmbedder) -> None:
    eng, memory = await _stances(embedder)
    report = forget_tenant(memory, actor="alice", now=PRIVACY_NOW)
    assert len(memory.graph) == 0 and all(len(i) == 0 for i in memory.indexes.values())
    assert memory.event_states == {}
    assert set(memory.meta) <= {k for k in memory.meta if k.startswith("privacy.")}
    assert report.changes is not None and all(v is None for v in report.changes.nodes.values())
    for event in stance_stream():
        with pytest.raises(ForgottenEventError):
            eng.ingest(memory, event)
    dump = _dump(memory)
    assert all(text not in dump for text in REVISIONS)


async def test_layers_and_purge(embedder: HashingEmbedder) -> None:
    eng = engine(embedder, heuristic=False)
    memory = eng.new_memory("dana")
    assert layers(memory) == {
        "facts": True,
        "concepts": True,
        "intents": True,
        "core_schemas": False,
    }
    set_layers(memory, {"core_schemas": True}, now=PRIVACY_NOW)
    for event in domain_stream():
        await eng.fold(memory, event)
    run_nightly(eng, memory, eng.stream_now(memory))
    assert any(n.core for n in memory.graph.nodes(NodeKind.CONCEPT))
    set_layers(memory, {"core_schemas": False}, purge=True, now=PRIVACY_NOW)
    assert not any(n.core for n in memory.graph.nodes(NodeKind.CONCEPT))
    assert memory.graph.count(NodeKind.CONCEPT) == 3  # the within-domain schemas stay
    with pytest.raises(PrivacyError):
        set_layers(memory, {"dreams": True}, now=PRIVACY_NOW)


async def test_export_marks_inferred_layers(embedder: HashingEmbedder) -> None:
    _, memory = await _stances(embedder)
    data = export_tenant(memory, PRIVACY_NOW)
    by_layer = {n["layer"]: n["inferred"] for n in data["nodes"]}
    assert by_layer["events"] is False and by_layer["facts"] is True
    assert data["counts"]["facts"] >= 5 and data["layers"]["core_schemas"] is False


async def test_user_removes_one_inferred_node(embedder: HashingEmbedder) -> None:
    _, memory = await _stances(embedder)
    target = fact_id("alice", "stance-1", 0)
    delete_node(memory, target, now=PRIVACY_NOW)
    assert memory.graph.get(target) is None
    assert len(chain_of(memory, fact_id("alice", "stance-0", 0))) == 4
    assert memory.graph.get(event_node_id("alice", "stance-1")) is not None  # the event stays


async def test_delete_takes_every_revision_of_an_edited_event(embedder: HashingEmbedder) -> None:
    from datetime import timedelta

    from schemas.events import RawEvent
    from tests.facts.helpers import T0

    eng = engine(embedder, heuristic=False)
    memory = eng.new_memory("fay")
    first = RawEvent(id="m1", tenant="fay", source="chat", ts=T0, body="I love jasmine tea.")
    edited = first.model_copy(
        update={"body": "I love smoky lapsang tea.", "ts": T0 + timedelta(minutes=5)}
    )
    await eng.fold(memory, first)
    await eng.fold(memory, edited)
    assert memory.graph.count(NodeKind.EVENT) == 2
    report = delete_event(memory, "m1", now=PRIVACY_NOW)
    assert len(report.deleted["EVENT"]) == 2 and memory.graph.count(NodeKind.FACT) == 0
    assert memory.event_states == {} and not any(k.startswith("revision:") for k in memory.meta)
    assert "lapsang" not in _dump(memory) and "jasmine" not in _dump(memory)
    with pytest.raises(ForgottenEventError):
        await eng.fold(memory, edited)


def hourly(source: str, t0: datetime, items: list[tuple[str, str]], prefix: str = "e") -> list[Any]:
    """Events of alice from ``source``, an hour apart from ``t0``, ids ``<prefix>0``, ...;
    each item a (title, body)."""
    from datetime import timedelta

    from schemas.events import RawEvent

    return [
        RawEvent(
            id=f"{prefix}{i}",
            tenant="alice",
            source=source,
            ts=t0 + timedelta(hours=i),
            title=title,
            body=body,
        )
        for i, (title, body) in enumerate(items)
    ]


def forming_engine(embedder: HashingEmbedder) -> FoldEngine:
    """An engine whose heuristic planner forms a concept from two related events."""
    from topologies.config import EngineConfig
    from topologies.heuristic_planner import HeuristicPlanner

    config = EngineConfig(assign_similarity=0.35, pair_similarity=0.3)
    return FoldEngine(embedder, HeuristicPlanner(embedder, config), config)


def concept_over(
    eng: FoldEngine, memory: TenantMemory, events: list[Any], title: str, text: str = ""
) -> tuple[str, list[str]]:
    """The events ingested and one concept grounded in all of them, as a planner's plan
    makes it (without a fold's other steps); its id and its members' node ids."""
    from schemas.plans import AddEdge, AddNode, UpdatePlan
    from topologies.scope import FoldScope

    for event in events:
        eng.ingest(memory, event)
    ids = [event_node_id(memory.tenant, e.id) for e in events]
    scope = FoldScope(memory.tenant, events[-1].id, ids[-1], events[-1].ts)
    plan = UpdatePlan(
        ops=[
            AddNode(ref="c", kind=NodeKind.CONCEPT, title=title, text=text),
            *(AddEdge(src=i, dst="c", kind=EdgeKind.GROUNDS) for i in ids),
        ]
    )
    memory.begin()
    eng.executor.apply(memory, plan, scope)
    memory.commit()
    return scope.ref_ids["c"], ids


async def test_a_deleted_member_leaves_no_trace_in_its_concepts_centroid(
    embedder: HashingEmbedder,
) -> None:
    from topologies import topics
    from topologies.memory import TOPIC

    eng = engine(embedder)
    memory = eng.new_memory("alice")
    texts = ["Bathroom ceiling leak", "Ceiling leak is worse", "Plumber for the ceiling leak"]
    events = hourly("note", datetime(2026, 11, 2, 9, tzinfo=UTC), [(t, "") for t in texts])
    concept, ids = concept_over(eng, memory, events, "Ceiling leak")
    assert concept in memory.index(TOPIC)
    report = delete_event(memory, "e1", embedder=embedder, now=PRIVACY_NOW)
    assert concept not in memory.index(TOPIC)  # dropped, rebuilt from the members left
    assert report.changes is not None and report.changes.vectors[(TOPIC, concept)] is None
    rebuilt = topics.centroid(memory, concept, eng.config.topics)
    left = [topics.event_topic(memory, i, eng.config.topics) for i in (ids[0], ids[2])]
    assert rebuilt is not None and all(v is not None for v in left)
    expected = sum(left) / 2  # type: ignore[arg-type]
    assert float(rebuilt @ (expected / (expected @ expected) ** 0.5)) == pytest.approx(
        1.0, abs=1e-5
    )


async def test_what_a_deleted_message_said_leaves_the_concepts_text(
    embedder: HashingEmbedder,
) -> None:
    eng = forming_engine(embedder)
    memory = eng.new_memory("alice")
    said = [
        "Flights to Bangkok on 18 Dec went up again, shall we book the Bangkok flights today?",
        "Book the Bangkok flights today, the return flights on 3 Jan work with school.",
    ]
    t0 = datetime(2026, 11, 2, 9, tzinfo=UTC)
    for event in hourly("chat", t0, [("Jonas Weber", body) for body in said], prefix="m"):
        await eng.fold(memory, event)
    (concept,) = memory.graph.nodes(NodeKind.CONCEPT)
    assert "Flights to Bangkok on 18 Dec" in concept.text
    delete_event(memory, "m0", embedder=embedder, now=PRIVACY_NOW)
    (concept,) = memory.graph.nodes(NodeKind.CONCEPT)
    # summed up again from the message left, which keeps its line, chat's name and all
    assert "Flights to Bangkok" not in concept.text and "[deleted]" not in concept.text
    assert concept.text.startswith("Recurring: Jonas Weber: Book the Bangkok flights today")


async def test_a_concept_named_for_what_a_deleted_message_said_is_renamed_from_the_rest(
    embedder: HashingEmbedder,
) -> None:
    eng = engine(embedder)
    memory = eng.new_memory("alice")
    t0 = datetime(2026, 11, 7, 16, 0, tzinfo=UTC)
    said = [
        "Done! Express passport for the trip, ready from 24 Nov.",
        "The express passport costs more, but the passport is ready in time for the trip.",
        "Sure, I'll work from home on Wednesday. Send me the Hausverwaltung number.",
    ]
    events = hourly("chat", t0, [("Jonas Weber", body) for body in said], prefix="c")
    concept, _ = concept_over(
        eng,
        memory,
        events,
        "Hausverwaltung number",
        "Recurring: Jonas Weber: Sure, I'll work from home on Wednesday. Send…",
    )

    report = delete_event(memory, "c2", embedder=embedder, now=PRIVACY_NOW)

    renamed = memory.graph.node(concept)
    assert "hausverwaltung" not in f"{renamed.title} {renamed.text}".lower()
    assert "passport" in renamed.title.lower()  # what the messages left speak of
    assert renamed.text.count("Jonas Weber:") == 2
    vector = memory.index(NodeKind.CONCEPT).get(concept)  # re-made from the new words
    assert vector is not None
    assert float(vector @ embedder.embed([renamed.vector_text])[0]) == pytest.approx(1.0)
    # written with the deletion (the store and the changelogs apply its ChangeSet)
    assert report.changes is not None
    assert report.changes.nodes[concept] == renamed
    stored = report.changes.vectors[(NodeKind.CONCEPT.value, concept)]
    assert stored is not None and float(stored @ vector) == pytest.approx(1.0)


async def test_a_concept_whose_name_the_members_left_still_write_keeps_it(
    embedder: HashingEmbedder,
) -> None:
    eng = engine(embedder)
    memory = eng.new_memory("alice")
    t0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
    texts = ["Bathroom ceiling leak", "Water damage from upstairs", "Plumber for the ceiling leaks"]
    events = hourly("note", t0, [(t, "") for t in texts])
    concept, _ = concept_over(eng, memory, events, "Bathroom ceiling", "Recurring: a name of mine")

    delete_event(memory, "e1", embedder=embedder, now=PRIVACY_NOW)

    kept = memory.graph.node(concept)
    assert kept.title == "Bathroom ceiling"  # both words still written
    assert kept.text == "Recurring: Plumber for the ceiling leaks; Bathroom ceiling leak"


async def test_a_subject_the_mails_kept_share_with_the_deleted_one_stays_in_their_lines(
    embedder: HashingEmbedder,
) -> None:
    eng = engine(embedder)
    memory = eng.new_memory("alice")
    t0 = datetime(2026, 11, 12, 9, 0, tzinfo=UTC)
    subject = "Re: Water damage bathroom ceiling, apartment 3.2"
    mails = [
        (subject, "Dear Mr Albers, the plumber found the leak in 4.2."),
        (subject, "Dear Ms Keller, we ask the insurer about the ceiling."),
        ("Rent reduction - apartment 3.2", "Until the ceiling is repaired, I reduce the rent."),
    ]
    events = hourly("email", t0, mails, prefix="m")
    concept, _ = concept_over(eng, memory, events, "Water damage")

    report = delete_event(memory, "m0", embedder=embedder, now=PRIVACY_NOW)

    text = memory.graph.node(concept).text
    assert "[deleted]" not in text and subject in text  # the kept reply's line
    assert "plumber found the leak" not in text
    assert subject not in report.quotes  # nor blanked in the embedded mode's files


async def test_a_concept_text_written_before_member_lines_loses_a_deleted_mails_cut_title(
    embedder: HashingEmbedder,
) -> None:
    eng = forming_engine(embedder)
    memory = eng.new_memory("alice")
    subject = "Re: Water damage bathroom ceiling, Grünberger Str. 41, apartment 3.2 (photos)"
    body = "The ceiling stain in the bathroom grows."
    t0 = datetime(2026, 11, 2, 9, tzinfo=UTC)
    mails = [(subject, body), ("Water damage bathroom", body)]
    for event in hourly("email", t0, mails, prefix="m"):
        await eng.fold(memory, event)
    (concept,) = memory.graph.nodes(NodeKind.CONCEPT)
    cut = subject[:59] + "…"  # as a store folded before member lines wrote it
    memory.graph.replace_node(concept.model_copy(update={"text": f"Recurring: {cut}"}))

    # without an embedder the concept cannot be named again (names are ranked by vectors):
    # what it quotes of the deleted mail is scrubbed
    delete_event(memory, "m0", embedder=None, now=PRIVACY_NOW)

    (concept,) = memory.graph.nodes(NodeKind.CONCEPT)
    assert subject[:30] not in concept.text and "[deleted]" in concept.text
