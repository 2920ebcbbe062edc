"""Fixtures shared by the engine's tests: one spaCy parser per module, a Namer on it, and an
engine whose planner proposes nothing (tests apply their own plans) with alice's memory, and
one with the heuristic planner."""

from __future__ import annotations

import pytest
from fold_helpers import ScriptedPlanner

from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.heuristic_planner import HeuristicPlanner
from topologies.memory import TenantMemory
from topologies.naming import Namer
from topologies.naming.phrases import PhraseParser


@pytest.fixture(scope="module")
def parser() -> PhraseParser:
    return PhraseParser()


@pytest.fixture
def namer(embedder: HashingEmbedder, parser: PhraseParser) -> Namer:
    return Namer(embedder, parser)


@pytest.fixture
def engine(embedder: HashingEmbedder, engine_config: EngineConfig) -> FoldEngine:
    return FoldEngine(embedder, ScriptedPlanner({}), engine_config)


@pytest.fixture
def memory(engine: FoldEngine) -> TenantMemory:
    return engine.new_memory("alice")


@pytest.fixture
def planning_engine(embedder: HashingEmbedder) -> FoldEngine:
    """An engine with the heuristic planner at thresholds for the hashing embedder, whose
    cosines are lower than MiniLM's."""
    config = EngineConfig(assign_similarity=0.35, pair_similarity=0.3)
    return FoldEngine(embedder, HeuristicPlanner(embedder, config), config)
