"""Concept boundaries: assignment by member centroids, merge when members converge, split when
they diverge; ids keep resolving and everything rolls back with the fold (issue 11)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from fold_helpers import ScriptedPlanner, Step, concept_id, dump

from schemas.events import RawEvent
from schemas.graph import EdgeKind, NodeKind
from schemas.plans import AddEdge, AddNode, UpdatePlan
from topologies import entities as entities_module
from topologies import topics
from topologies.boundaries import code_share, two_means
from topologies.config import EngineConfig
from topologies.context import assemble_context
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.entities import entities_of
from topologies.heuristic_planner import HeuristicPlanner
from topologies.memory import TOPIC, TenantMemory, event_node_id
from topologies.planner import PlanRequest
from topologies.scope import FoldScope
from topologies.text import extract_entities

MakeEvent = Callable[..., RawEvent]

LEAKS = [
    "Water dripping from the bathroom ceiling again",
    "The bathroom ceiling leak is dripping water on the floor",
    "Plumber says the bathroom ceiling leak comes from the flat above",
    "Bathroom ceiling stained by the leak, water dripping",
    "Leak in the bathroom ceiling: water dripping into a bucket",
    "Ceiling leak in the bathroom, water dripping since Monday",
]
RUNS = [
    "Marathon training: 30 km long run at easy pace",
    "Interval run, marathon pace 5:00 per km, legs fine",
    "Marathon training week: long run and tempo run",
    "Easy recovery run after the marathon long run",
]
OTHER = [
    "Quarterly tax return: receipts and the accountant",
    "Recipe: spaghetti with garlic, olive oil and chili",
    "Book club picks a novel about a lighthouse keeper",
]


def scripted(script: dict[str, Step], **topic_overrides: float) -> FoldEngine:
    config = EngineConfig()
    config = config.model_copy(update={"topics": config.topics.model_copy(update=topic_overrides)})
    return FoldEngine(HashingEmbedder(dim=256), ScriptedPlanner(script), config)


async def fold_texts(
    engine: FoldEngine, memory: TenantMemory, make_event: MakeEvent, texts: list[tuple[str, str]]
) -> None:
    for hours, (event_id, text) in enumerate(texts):
        await engine.fold(memory, make_event(text, id=event_id, hours=hours))


def members(memory: TenantMemory, concept: str) -> set[str]:
    return set(topics.member_events(memory, concept))


# ------------------------------------------------------------------- assignment
async def test_an_event_joins_the_concept_whose_members_it_resembles_whatever_its_label(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = scripted({f"leak-{i}": Step(["Household matters"]) for i in range(3)})
    memory = engine.new_memory("alice")
    await fold_texts(engine, memory, make_event, [(f"o-{i}", t) for i, t in enumerate(OTHER)])
    await fold_texts(engine, memory, make_event, [(f"leak-{i}", LEAKS[i]) for i in range(3)])
    concept = concept_id(memory, "Household matters")
    assert memory.graph.node(concept).attrs[topics.MEMBERS_ATTR] == 3
    assert memory.index(TOPIC).get(concept) is not None

    event = make_event(LEAKS[3], id="leak-new", hours=50)
    engine.ingest(memory, event)
    node = event_node_id("alice", event.id)
    vector = memory.index(NodeKind.EVENT).get(node)
    assert vector is not None
    context = assemble_context(memory, vector, node, event.ts, engine.config.context)
    request = PlanRequest(event, memory.graph.node(node), vector, context, memory, event.ts)
    plan = HeuristicPlanner(embedder, engine.config).plan_sync(request)
    joined = [op for op in plan.ops if isinstance(op, AddEdge) and op.kind == EdgeKind.REINFORCES]
    assert [op.dst for op in joined] == [concept]
    assert "centroid" in joined[0].reasoning


# ---------------------------------------------------------------------- merging
LEAK_SCRIPT = {
    **{f"a-{i}": Step(["Dripping ceiling"]) for i in range(3)},
    **{f"b-{i}": Step(["Flat upstairs"]) for i in range(3)},
}


async def two_leak_concepts(make_event: MakeEvent, upto: int) -> tuple[FoldEngine, TenantMemory]:
    engine = scripted(LEAK_SCRIPT)
    memory = engine.new_memory("alice")
    texts = [(f"o-{i}", t) for i, t in enumerate(OTHER)]
    texts += [(f"a-{i}", LEAKS[i]) for i in range(3)]
    texts += [(f"b-{i}", LEAKS[3 + i]) for i in range(upto)]
    await fold_texts(engine, memory, make_event, texts)
    return engine, memory


async def test_concepts_whose_members_converge_merge_and_the_absorbed_id_keeps_resolving(
    make_event: MakeEvent,
) -> None:
    _, memory = await two_leak_concepts(make_event, upto=2)
    first = concept_id(memory, "Dripping ceiling")
    second = concept_id(memory, "Flat upstairs")  # two members: too few to tell, no merge yet
    centroids = memory.index(TOPIC)
    assert centroids.similarity(first, second) >= EngineConfig().topics.merge_similarity

    _, memory = await two_leak_concepts(make_event, upto=3)
    (keeper,) = memory.graph.ids(NodeKind.CONCEPT)
    assert keeper == first  # the older one keeps
    assert memory.graph.resolve(second) == keeper
    assert members(memory, keeper) == {
        event_node_id("alice", e) for e in [*(f"a-{i}" for i in range(3)), "b-0", "b-1", "b-2"]
    }
    assert second not in memory.index(TOPIC)
    node = memory.graph.node(keeper)
    assert node.attrs[topics.MEMBERS_ATTR] == 6
    # relabelled from its members: the label vector follows the new name
    expected = HashingEmbedder(dim=256).embed([node.embed_text])[0]
    assert np.allclose(memory.index(NodeKind.CONCEPT).get(keeper), expected, atol=1e-6)


async def test_one_shared_event_does_not_make_two_concepts_converge(
    make_event: MakeEvent,
) -> None:
    engine = scripted({"e1": Step(["Passport renewal", "Lisbon trip"])})
    memory = engine.new_memory("alice")
    await engine.fold(memory, make_event("Passport photos for the Lisbon trip", id="e1"))
    # identical centroids (one member each), but no theme is known yet: both stay
    assert memory.graph.count(NodeKind.CONCEPT) == 2


# One matter written in two registers: the launch channel's chat and the mails about the same
# tickets. The "other tickets" mails read the same but name tickets no chat names.
CHATS = [
    "FLX-142 feed fix is deployed to staging, price feed on time again",
    "FLX-157 price display copy approved by design, shipping today",
    "FLX-163 load test on rc3 is green, p95 well under target",
]
MAILS = [
    "Partner confirms the price feed lands on time after the FLX-142 fix",
    "Legal approved the FLX-157 price display copy, shipping today",
    "Report: FLX-163 load test of tariff release rc3 green",
]
OTHER_TICKETS = [mail.replace("FLX-1", "FLX-9") for mail in MAILS]
REGISTERS = {
    **{f"chat-{i}": Step(["Launch channel"]) for i in range(3)},
    **{f"mail-{i}": Step(["Launch mails"]) for i in range(3)},
}


async def chat_and_mails(
    make_event: MakeEvent, mails: list[str], upto: int = 3
) -> tuple[FoldEngine, TenantMemory]:
    """The chat concept and the mail concept: with three mails their centroids are between
    ``code_merge_similarity`` (0.45) and ``merge_similarity`` (0.6) whichever tickets the
    mails name (the hashing embedder: 0.57 with the chat's tickets, 0.51 with others)."""
    engine = scripted(REGISTERS)
    memory = engine.new_memory("alice")
    texts = [(f"o-{i}", t) for i, t in enumerate(OTHER)]
    texts += [(f"chat-{i}", t) for i, t in enumerate(CHATS)]
    texts += [(f"mail-{i}", t) for i, t in enumerate(mails[:upto])]
    await fold_texts(engine, memory, make_event, texts)
    return engine, memory


async def test_two_concepts_whose_members_name_the_same_tickets_merge_below_the_merge_bar(
    make_event: MakeEvent,
) -> None:
    _, memory = await chat_and_mails(make_event, MAILS, upto=2)
    chat, mails = concept_id(memory, "Launch channel"), concept_id(memory, "Launch mails")
    assert code_share(memory, chat, mails) == 1.0  # but two mail members: too few to tell yet

    _, memory = await chat_and_mails(make_event, MAILS)
    (keeper,) = memory.graph.ids(NodeKind.CONCEPT)  # merged at cosine 0.57: below 0.6
    assert keeper == chat  # the older one keeps
    assert memory.graph.resolve(mails) == keeper
    assert len(members(memory, keeper)) == 6


async def test_concepts_as_close_whose_members_name_other_tickets_stay_apart(
    make_event: MakeEvent,
) -> None:
    _, memory = await chat_and_mails(make_event, OTHER_TICKETS)
    chat, mails = concept_id(memory, "Launch channel"), concept_id(memory, "Launch mails")
    topic = EngineConfig().topics
    similarity = memory.index(TOPIC).similarity(chat, mails)
    assert topic.code_merge_similarity <= similarity < topic.merge_similarity
    assert code_share(memory, chat, mails) == 0.0


async def test_the_code_bar_set_above_the_merge_bar_leaves_the_centroid_merge_in_place(
    make_event: MakeEvent,
) -> None:
    """Turning the ticket rule off (``code_merge_similarity`` 1.0) must not turn off the
    merge of concepts whose centroids reach ``merge_similarity``."""
    engine = scripted(REGISTERS, merge_similarity=0.45, code_merge_similarity=1.0)
    memory = engine.new_memory("alice")
    texts = [(f"o-{i}", t) for i, t in enumerate(OTHER)]
    texts += [(f"chat-{i}", t) for i, t in enumerate(CHATS)]
    texts += [(f"mail-{i}", t) for i, t in enumerate(OTHER_TICKETS)]  # centroids 0.51 apart
    await fold_texts(engine, memory, make_event, texts)
    (keeper,) = memory.graph.ids(NodeKind.CONCEPT)
    assert len(members(memory, keeper)) == 6


async def test_code_share_counts_the_members_naming_a_ticket_or_thread_of_the_other(
    make_event: MakeEvent,
) -> None:
    script = {
        **{f"chat-{i}": Step(["Launch channel"]) for i in range(3)},
        "review": Step(["Launch channel"]),
        **{f"mail-{i}": Step(["Launch mails"]) for i in range(3)},
    }
    engine = scripted(script, merge_similarity=1.1, code_merge_similarity=1.1)  # no merge
    memory = engine.new_memory("alice")
    thread = {"thread_id": "thr-flux-gonogo"}
    steps = [(f"chat-{i}", t, {}) for i, t in enumerate(CHATS)]
    steps += [
        ("review", "Go/No-Go review for Flux Tariffs on Thursday", thread),
        ("mail-0", MAILS[0], {}),  # FLX-142, as the first chat
        ("mail-1", OTHER_TICKETS[1], {}),  # FLX-957: named by no chat
        ("mail-2", "Re: exec pre-brief moved to Wednesday", thread),  # the review's thread
    ]
    for hours, (event_id, text, attrs) in enumerate(steps):
        await engine.fold(memory, make_event(text, id=event_id, hours=hours, attrs=attrs))
    chat, mails = concept_id(memory, "Launch channel"), concept_id(memory, "Launch mails")
    # the smaller concept is the mails' (3 members): two name a ticket or thread of the other
    assert code_share(memory, chat, mails) == pytest.approx(2 / 3)
    assert code_share(memory, mails, chat) == pytest.approx(2 / 3)


async def test_code_share_reads_the_tickets_from_the_entities_already_read_for_each_event(
    make_event: MakeEvent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tickets and threads a member names are the entities the fold read for that version
    of the event (``entities_of``): asking about two concepts extracts no entity again."""
    script = {
        **{f"chat-{i}": Step(["Launch channel"]) for i in range(3)},
        **{f"mail-{i}": Step(["Launch mails"]) for i in range(3)},
    }
    engine = scripted(script, merge_similarity=1.1, code_merge_similarity=1.1)  # no merge
    memory = engine.new_memory("alice")
    texts = [(f"chat-{i}", t) for i, t in enumerate(CHATS)]
    texts += [(f"mail-{i}", t) for i, t in enumerate(MAILS)]
    await fold_texts(engine, memory, make_event, texts)
    chat, mails = concept_id(memory, "Launch channel"), concept_id(memory, "Launch mails")
    for concept in (chat, mails):  # what the fold read, as the planner reads it
        for node in memory.graph.nodes_of(topics.member_events(memory, concept)):
            entities_of(memory, node)
    extracted: list[str] = []

    def counting(text: str, *args: object, **kwargs: object) -> list[str]:
        extracted.append(text)
        return extract_entities(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(entities_module, "extract_entities", counting)
    share = code_share(memory, chat, mails)
    assert share > 0.0
    assert extracted == []


async def test_a_word_shaped_like_a_ticket_ties_no_two_matters(make_event: MakeEvent) -> None:
    """Health notes that name COVID-19 and a launch channel where one message does share no
    ticket: COVID-19 is a disease, not a work item of either."""
    script = {
        **{f"chat-{i}": Step(["Launch channel"]) for i in range(3)},
        "party": Step(["Launch channel"]),
        **{f"health-{i}": Step(["Health"]) for i in range(3)},
    }
    engine = scripted(script, merge_similarity=1.1, code_merge_similarity=1.1)  # no merge
    memory = engine.new_memory("alice")
    texts = [(f"chat-{i}", t) for i, t in enumerate(CHATS)]
    texts += [
        ("party", "Launch party on Friday, COVID-19 rules of the office apply"),
        ("health-0", "COVID-19 booster booked at the pharmacy for Saturday"),
        ("health-1", "COVID-19 test negative, back to the gym tomorrow"),
        ("health-2", "Mum's COVID-19 vaccination at the GP on Monday"),
    ]
    await fold_texts(engine, memory, make_event, texts)
    chat, health = concept_id(memory, "Launch channel"), concept_id(memory, "Health")
    assert code_share(memory, chat, health) == 0.0


# ---------------------------------------------------------------------- splitting
SPLIT_SCRIPT = {f"m-{i}": Step(["Things this week"]) for i in range(8)}
MIXED = [LEAKS[0], RUNS[0], LEAKS[1], RUNS[1], LEAKS[2], RUNS[2], LEAKS[3], RUNS[3]]


async def mixed_concept(make_event: MakeEvent, count: int) -> tuple[FoldEngine, TenantMemory]:
    engine = scripted(SPLIT_SCRIPT)
    memory = engine.new_memory("alice")
    texts = [(f"o-{i}", t) for i, t in enumerate(OTHER)]
    texts += [(f"m-{i}", MIXED[i]) for i in range(count)]
    await fold_texts(engine, memory, make_event, texts)
    return engine, memory


async def test_a_concept_whose_members_form_two_groups_splits(make_event: MakeEvent) -> None:
    _, memory = await mixed_concept(make_event, 7)
    (old,) = memory.graph.ids(NodeKind.CONCEPT)  # seven members: not examined yet

    _, memory = await mixed_concept(make_event, 8)
    assert memory.graph.count(NodeKind.CONCEPT) == 2
    (new,) = memory.graph.ids(NodeKind.CONCEPT) - {old}
    leaks = {event_node_id("alice", f"m-{i}") for i in (0, 2, 4, 6)}
    runs = {event_node_id("alice", f"m-{i}") for i in (1, 3, 5, 7)}
    assert members(memory, old) == leaks  # the side of the oldest member keeps the id
    assert members(memory, new) == runs
    graph = memory.graph
    for event in runs:
        assert graph.edge(event, new, EdgeKind.GROUNDS) is not None
        assert graph.edge(new, event, EdgeKind.DERIVED_FROM) is not None
        assert graph.edge(event, old, EdgeKind.REINFORCES) is None
        assert graph.edge(old, event, EdgeKind.DERIVED_FROM) is None
    assert graph.edge(new, old, EdgeKind.RELATED_TO) is not None
    assert graph.node(new).attrs["split_from"] == old
    # each text sums up its own members: the one that kept the id quotes no moved member
    kept_text, new_text = graph.node(old).text.lower(), graph.node(new).text.lower()
    assert "leak" in kept_text and "marathon" not in kept_text, kept_text
    assert "marathon" in new_text and "leak" not in new_text, new_text
    for concept in (old, new):
        assert graph.node(concept).attrs[topics.MEMBERS_ATTR] == 4
        assert concept in memory.index(TOPIC) and concept in memory.index(NodeKind.CONCEPT)
    assert memory.index(TOPIC).similarity(old, new) < EngineConfig().topics.split_similarity


async def test_a_split_replays_to_the_same_ids(make_event: MakeEvent) -> None:
    _, first = await mixed_concept(make_event, 8)
    _, second = await mixed_concept(make_event, 8)
    assert dump(first) == dump(second)


async def test_one_theme_spread_wide_does_not_split(make_event: MakeEvent) -> None:
    engine = scripted({f"m-{i}": Step(["Ceiling"]) for i in range(8)})
    memory = engine.new_memory("alice")
    texts = [(f"o-{i}", t) for i, t in enumerate(OTHER)]
    texts += [(f"m-{i}", text) for i, text in enumerate([*LEAKS, *LEAKS[:2]])]
    await fold_texts(engine, memory, make_event, texts)
    assert memory.graph.count(NodeKind.CONCEPT) == 1


async def test_merge_and_split_roll_back_with_the_fold(make_event: MakeEvent) -> None:
    for build, last_id, text in (
        (lambda: two_leak_concepts(make_event, upto=2), "b-2", LEAKS[5]),
        (lambda: mixed_concept(make_event, 7), "m-7", MIXED[7]),
    ):
        engine, memory = await build()
        event = make_event(text, id=last_id, hours=50)
        engine.ingest(memory, event)
        before = dump(memory)
        node = event_node_id("alice", event.id)
        vector = memory.index(NodeKind.EVENT).get(node)
        assert vector is not None
        context = assemble_context(memory, vector, node, event.ts, engine.config.context)
        request = PlanRequest(event, memory.graph.node(node), vector, context, memory, event.ts)
        plan = await engine.planner.plan(request)
        scope = FoldScope("alice", event.id, node, event.ts)
        memory.begin()
        engine.executor.apply(memory, plan, scope)
        engine.consolidator.consolidate(memory, scope)
        assert dump(memory) != before  # a merge or a split happened in the transaction
        memory.rollback()
        assert dump(memory) == before


def test_two_means_is_deterministic_and_reports_the_centroid_cosine() -> None:
    rows = np.array([[1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0.1, 0.9, 0]], dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    side, similarity = two_means(rows)
    assert side.tolist() in ([True, True, False, False], [False, False, True, True])
    a, b = rows[:2].mean(0), rows[2:].mean(0)
    expected = float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))
    assert similarity == pytest.approx(expected, abs=1e-5)
    again, _ = two_means(rows)
    assert again.tolist() == side.tolist()


def test_a_plan_made_concept_gets_a_centroid_from_its_members(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    engine = FoldEngine(embedder, ScriptedPlanner({}), EngineConfig())
    memory = engine.new_memory("alice")
    events = [make_event(t, id=f"e{i}") for i, t in enumerate(LEAKS[:2])]
    for event in events:
        engine.ingest(memory, event)
    ids = [event_node_id("alice", e.id) for e in events]
    scope = FoldScope("alice", events[1].id, ids[1], events[1].ts)
    memory.begin()
    engine.executor.apply(
        memory,
        UpdatePlan(
            ops=[
                AddNode(ref="c", kind=NodeKind.CONCEPT, title="Leak"),
                AddEdge(src=ids[0], dst="c", kind=EdgeKind.GROUNDS),
                AddEdge(src=ids[1], dst="c", kind=EdgeKind.GROUNDS),
            ]
        ),
        scope,
    )
    memory.commit()
    concept = scope.ref_ids["c"]
    stored = memory.index(TOPIC).get(concept)
    assert stored is not None
    recomputed = topics.centroid(memory, concept, engine.config.topics)
    memory.begin()
    memory.index(TOPIC).remove(concept)
    assert topics.centroid(memory, concept, engine.config.topics) is not None  # from members
    memory.rollback()
    assert recomputed is not None and np.allclose(stored, recomputed, atol=1e-5)


def test_the_topic_space_removes_half_of_the_tenants_running_mean() -> None:
    from topologies.config import TopicConfig

    memory = TenantMemory("alice", 3)
    config = TopicConfig(background_weight=0.5, background_horizon=2)
    a, b, c = (np.array(v, dtype=np.float32) for v in ([1, 0, 0], [0, 1, 0], [0, 0, 1]))
    memory.begin()
    assert np.allclose(topics.observe(memory, a, config), a)  # no background yet: raw
    assert np.allclose(topics.observe(memory, b, config), b)  # one event is no background
    mean, count = topics.background(memory)
    assert count == 2 and mean is not None and np.allclose(mean, [0.5, 0.5, 0])
    shifted = c - 0.5 * mean
    assert np.allclose(topics.observe(memory, c, config), shifted / np.linalg.norm(shifted))
    mean, count = topics.background(memory)  # the horizon caps the count: a moving average
    assert count == 2 and mean is not None and np.allclose(mean, [0.25, 0.25, 0.5])
    memory.rollback()
    assert topics.background(memory) == (None, 0)


def test_the_topic_vectors_of_several_events_are_each_events_own() -> None:
    """A split reads its members' topic vectors together: an event still in the POOL gives
    its ingest-time vector, one that left it its embedding centred on today's background,
    one without a vector none."""
    from topologies.config import TopicConfig
    from topologies.memory import POOL

    memory = TenantMemory("alice", 3)
    config = TopicConfig(background_weight=0.5, background_horizon=4)
    memory.begin()
    for name, raw in (("a", [1, 0, 0]), ("b", [0, 1, 0]), ("c", [0, 0, 1])):
        vector = np.array(raw, dtype=np.float32)
        memory.index(NodeKind.EVENT).upsert(name, vector)
        memory.index(POOL).upsert(name, topics.observe(memory, vector, config))
    memory.index(POOL).remove("a")  # a member now: it left the POOL
    read = topics.event_topics(memory, ["a", "b", "missing", "c"], config)
    pooled = [memory.index(POOL).get(e) for e in ("b", "c")]
    raw_a = memory.index(NodeKind.EVENT).get("a")
    assert raw_a is not None
    centred_a = topics.center(raw_a, *topics.background(memory), config)
    memory.rollback()
    assert read[2] is None
    assert read[0] is not None and read[0].tolist() == centred_a.tolist()
    assert not np.allclose(read[0], [1, 0, 0])  # centred, not raw
    for together, kept in zip([read[1], read[3]], pooled, strict=True):
        assert together is not None and kept is not None
        assert together.tolist() == kept.tolist()
