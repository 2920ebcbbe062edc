"""The nightly engine on the CogEval scenarios (../shared/data/cogeval, read in place).

Slow (MiniLM embeddings of every event and fact): marked ``slow``. The per-event planner is
switched off so every schema counted here was written by the nightly engine itself.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from benchmarks.bench_nightly import COGEVAL_DIR, load_cogeval, scenario_files
from schemas.graph import EdgeKind, NodeKind
from tests.facts.helpers import engine
from topologies.nightly.run import run_nightly
from topologies.privacy import set_layers

PRIVACY_NOW = datetime(2026, 12, 1, tzinfo=UTC)  # when the user asked (audit time)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def minilm():  # type: ignore[no-untyped-def]
    from topologies.embedding import MiniLmOnnxEmbedder

    try:
        MiniLmOnnxEmbedder.default_paths()
    except Exception as exc:  # the model packages are optional in some environments
        pytest.skip(f"MiniLM model not installed: {exc}")
    from benchmarks.common import CachingEmbedder

    return CachingEmbedder(MiniLmOnnxEmbedder(threads=1))


async def test_nightly_on_cogeval_life(minilm) -> None:  # type: ignore[no-untyped-def]
    files = scenario_files()
    if not files:
        pytest.skip(f"CogEval scenarios absent: {COGEVAL_DIR} has no *.json")
    eng = engine(minilm, heuristic=False)
    memory = eng.new_memory("life")
    set_layers(memory, {"core_schemas": True}, now=PRIVACY_NOW)
    events = sorted((e for p in files for e in load_cogeval(p, "life")), key=lambda e: e.ts)
    for event in events:
        await eng.fold(memory, event)
    report = run_nightly(eng, memory, eng.stream_now(memory), budget_s=120)
    assert not report.truncated
    assert report.fresh_facts > 300 and report.clusters >= 3
    schemas = [n for n in memory.graph.nodes(NodeKind.CONCEPT) if not n.core]
    cores = [n for n in memory.graph.nodes(NodeKind.CONCEPT) if n.core]
    assert len(schemas) >= 3 and report.schemas_created
    assert cores, report.summary()
    for core in cores:  # members from at least two life domains
        members = [
            memory.graph.node(e.src) for e in memory.graph.in_edges(core.id, EdgeKind.PART_OF)
        ]
        assert len({m.attrs.get("domain") for m in members}) >= 2
