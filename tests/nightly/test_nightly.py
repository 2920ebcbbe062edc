"""The nightly engine on a synthetic three-domain stream (hashing embedder)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from schemas.graph import EdgeKind, NodeKind
from tests.facts.helpers import engine
from tests.nightly.helpers import domain_stream
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.memory import TenantMemory
from topologies.nightly.cluster import two_stage_dbscan
from topologies.nightly.induce import LLMInductor
from topologies.nightly.run import LAST_RUN_KEY, NightlyError, run_nightly, run_nightly_async
from topologies.privacy import set_layers

PRIVACY_NOW = datetime(2026, 12, 1, tzinfo=UTC)  # when the user asked (audit time)


async def _folded(
    embedder: HashingEmbedder, core: bool = True, per_domain: int = 5
) -> tuple[FoldEngine, TenantMemory]:
    eng = engine(embedder, heuristic=False)
    memory = eng.new_memory("dana")
    if core:
        set_layers(memory, {"core_schemas": True}, now=PRIVACY_NOW)
    for event in domain_stream(per_domain=per_domain):
        await eng.fold(memory, event)
    return eng, memory


def _schemas(memory: TenantMemory, core: bool = False) -> list[Any]:
    return [n for n in memory.graph.nodes(NodeKind.CONCEPT) if n.core == core]


async def test_night_writes_schemas_intent_and_core(embedder: HashingEmbedder) -> None:
    eng, memory = await _folded(embedder)
    report = run_nightly(eng, memory, eng.stream_now(memory), budget_s=30)
    assert report.clusters == 3 and not report.truncated
    schemas = _schemas(memory)
    assert len(schemas) == 3 and len(report.schemas_created) == 3
    for schema in schemas:  # every schema stands on its facts
        grounds = [e for e in memory.graph.in_edges(schema.id, EdgeKind.GROUNDS)]
        assert len(grounds) >= 3
        assert all(memory.graph.node(e.src).kind == NodeKind.FACT for e in grounds)
    (core,) = _schemas(memory, core=True)
    members = {
        memory.graph.node(e.src).attrs["domain"]
        for e in memory.graph.in_edges(core.id, EdgeKind.PART_OF)
    }
    assert members == {"software", "health"}
    assert report.core_created == [core.id] and report.collisions == 1
    (intent,) = memory.graph.nodes(NodeKind.INTENT)
    assert intent.deadline is not None
    assert len(list(memory.graph.in_edges(intent.id, EdgeKind.TRIGGERS))) == 2
    assert report.changes is not None and intent.id in report.changes.nodes
    assert [m.type for m in report.messages] == ["intent.created"]
    assert memory.meta[LAST_RUN_KEY]["schemas_created"] == 3


async def test_core_schemas_are_off_by_default(embedder: HashingEmbedder) -> None:
    eng, memory = await _folded(embedder, core=False)
    report = run_nightly(eng, memory, eng.stream_now(memory))
    assert len(_schemas(memory)) == 3
    assert _schemas(memory, core=True) == [] and report.collisions == 0


async def test_layers_concepts_and_intents_off(embedder: HashingEmbedder) -> None:
    eng, memory = await _folded(embedder)
    set_layers(memory, {"concepts": False, "intents": False}, now=PRIVACY_NOW)
    report = run_nightly(eng, memory, eng.stream_now(memory))
    assert report.clusters == 3 and report.clusters_done == 0
    assert memory.graph.count(NodeKind.CONCEPT) == 0 and memory.graph.count(NodeKind.INTENT) == 0


async def test_second_night_extends_instead_of_rebuilding(embedder: HashingEmbedder) -> None:
    eng, memory = await _folded(embedder)
    first = run_nightly(eng, memory, eng.stream_now(memory))
    ids_before = {n.id for n in memory.graph.nodes(NodeKind.CONCEPT)}
    for event in domain_stream(per_domain=5, start=5):
        await eng.fold(memory, event)
    second = run_nightly(eng, memory, eng.stream_now(memory))
    assert ids_before <= {n.id for n in memory.graph.nodes(NodeKind.CONCEPT)}
    assert second.fresh_facts > 0
    assert set(second.schemas_extended) & set(first.schemas_created)
    assert len(_schemas(memory, core=True)) == 1  # the same core schema, never a second copy


async def test_nothing_fresh_nothing_written(embedder: HashingEmbedder) -> None:
    eng, memory = await _folded(embedder)
    run_nightly(eng, memory, eng.stream_now(memory))
    again = run_nightly(eng, memory, eng.stream_now(memory))
    assert again.schemas_created == [] and again.intents_created == []
    assert again.changes is not None
    assert set(again.changes.nodes) <= {n.id for n in _schemas(memory)}  # behaviour attrs only


async def test_a_night_out_of_time_still_induces_its_largest_cluster(
    embedder: HashingEmbedder,
) -> None:
    """A budget spent before the first cluster (a loaded machine): one cluster, no more."""
    eng, memory = await _folded(embedder)
    report = run_nightly(eng, memory, eng.stream_now(memory), budget_s=0.0)
    assert report.truncated and report.clusters == 3 and report.clusters_done == 1
    assert len(report.schemas_created) == 1 and len(_schemas(memory)) == 1
    assert report.core_created == []  # the sweeper waits for a night with time left
    assert memory.meta[LAST_RUN_KEY]["truncated"] is True


async def test_nights_out_of_time_resume_until_every_cluster_is_induced(
    embedder: HashingEmbedder,
) -> None:
    eng, memory = await _folded(embedder, core=False)
    nights = [run_nightly(eng, memory, eng.stream_now(memory), budget_s=0.0) for _ in range(4)]
    assert [n.clusters for n in nights] == [3, 2, 1, 0]
    assert [n.clusters_done for n in nights] == [1, 1, 1, 0]
    assert [n.truncated for n in nights] == [True, True, False, False]
    assert len(_schemas(memory)) == 3 and memory.graph.count(NodeKind.INTENT) == 1


async def test_failure_rolls_back_the_whole_night(
    embedder: HashingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    eng, memory = await _folded(embedder)
    nodes_before = len(memory.graph)
    calls = 0
    real_apply = eng.executor.apply

    def flaky(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RuntimeError("disk on fire")
        return real_apply(*args, **kwargs)

    monkeypatch.setattr(eng.executor, "apply", flaky)
    with pytest.raises(NightlyError):
        run_nightly(eng, memory, eng.stream_now(memory))
    assert len(memory.graph) == nodes_before and not memory.in_transaction


class FakeLLM:
    """Answers like an LLM with the four tools; one answer is invalid on purpose."""

    def __init__(self) -> None:
        self.calls = 0

    async def complete_json(
        self,
        messages: list[dict[str, str]],
        schema_name: str,
        schema: dict[str, Any],
        log_ctx: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        import json

        self.calls += 1
        given = json.loads(messages[1]["content"])["facts"]
        facts = [f["id"] for f in given]
        if self.calls == 2:  # PART_OF from a FACT: the executor rejects it -> fallback
            return {
                "actions": [
                    {"tool": "add_edge", "src": facts[0], "dst": facts[1], "kind": "PART_OF"}
                ]
            }
        return {
            "actions": [
                {
                    "tool": "create_schema",
                    "ref": "s",
                    "title": f"LLM: {given[0]['text'][:60]}",
                    "category": "llm",
                    "evidence": [*facts, "f_not_in_cluster"],
                }
            ]
        }


async def test_llm_inductor_with_fallback(embedder: HashingEmbedder) -> None:
    eng, memory = await _folded(embedder)
    llm = FakeLLM()
    report = await run_nightly_async(
        eng, memory, eng.stream_now(memory), 30, inductor=LLMInductor(llm)
    )
    titles = sorted(n.title for n in _schemas(memory))
    assert llm.calls == 3 and report.plans_rejected == 1
    assert sum(t.startswith("LLM: ") for t in titles) == 2 and len(titles) == 3
    for node in _schemas(memory):  # evidence outside the cluster was dropped
        assert all(
            memory.graph.node(e.src).kind == NodeKind.FACT
            for e in memory.graph.in_edges(node.id, EdgeKind.GROUNDS)
        )


def test_two_stage_dbscan_splits_oversized_clusters() -> None:
    import numpy as np

    from topologies.nightly.cluster import ClusterConfig

    rng = np.random.default_rng(0)
    base = rng.normal(size=16)
    a = base + 0.25 * rng.normal(size=(20, 16))
    b = base + 0.25 * rng.normal(size=(20, 16))
    a[:, 0] += 1.2
    b[:, 1] += 1.2
    x = np.vstack([a, b]).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    ids = [f"f{i}" for i in range(40)]
    loose = two_stage_dbscan(ids, x, ClusterConfig(eps1=0.35, eps2=0.25, max_cluster=100))
    split = two_stage_dbscan(ids, x, ClusterConfig(eps1=0.35, eps2=0.05, max_cluster=10))
    assert len(loose) == 1 and len(loose[0]) == 40
    assert len(split) >= 2 and all(len(c) >= 3 for c in split)
