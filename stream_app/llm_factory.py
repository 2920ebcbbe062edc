"""The planners "auto" and "llm" of stream_app.factory.PLANNERS: the LLM planner with its
fallback."""

from __future__ import annotations

from adapters.llm.factory import build_planner
from stream_app.settings import Settings
from topologies.config import EngineConfig
from topologies.embedding import Embedder
from topologies.heuristic_planner import HeuristicPlanner
from topologies.planner import Planner


def build_llm_planner(
    settings: Settings, embedder: Embedder, config: EngineConfig
) -> tuple[Planner, Planner | None]:
    """(LLMPlanner, heuristic) when FOLDMEM_LLM_BASE_URL or FOLDMEM_LLM_API_KEY is set, else
    (heuristic, None) with one log line saying so."""
    heuristic = HeuristicPlanner(embedder, config)
    planner = build_planner(settings.llm_config(), embedder, config, heuristic)
    return planner, (heuristic if planner is not heuristic else None)
