"""Build the engine's collaborators (embedder, planner, engine) from Settings (the embedded
hub around them: :mod:`stream_app.embedded.factory`).

Planners are listed by name in :data:`PLANNERS`: a function of ``(settings, embedder,
config)`` returning ``(planner, fallback or None)``. A new planner is a new line there.
"""

from __future__ import annotations

from collections.abc import Callable

from schemas.errors import ConfigError
from stream_app.llm_factory import build_llm_planner
from stream_app.settings import Settings
from topologies.config import EngineConfig
from topologies.embedding import Embedder, HashingEmbedder, MiniLmOnnxEmbedder, OpenAIEmbedder
from topologies.engine import FoldEngine
from topologies.heuristic_planner import HeuristicPlanner
from topologies.planner import Planner
from topologies.vector_index import use_single_thread

PlannerFactory = Callable[[Settings, Embedder, EngineConfig], tuple[Planner, Planner | None]]


def build_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "hashing":
        return HashingEmbedder(dim=settings.hashing_dim)
    if settings.embedder == "openai":
        import openai

        key = settings.embedding_api_key.get_secret_value() if settings.embedding_api_key else None
        client = openai.OpenAI(base_url=settings.embedding_base_url, api_key=key or "unused")
        return OpenAIEmbedder(client, settings.embedding_model, settings.embedding_dim)
    embedder = MiniLmOnnxEmbedder(threads=settings.minilm_threads)
    MiniLmOnnxEmbedder.default_paths()  # fail early and clearly if the packages are missing
    return embedder


def heuristic_planner(
    settings: Settings, embedder: Embedder, config: EngineConfig
) -> tuple[Planner, Planner | None]:
    return HeuristicPlanner(embedder, config), None


PLANNERS: dict[str, PlannerFactory] = {
    "auto": build_llm_planner,  # the LLM planner when an endpoint or key is set
    "heuristic": heuristic_planner,
    "llm": build_llm_planner,
}


def build_planner(
    settings: Settings, embedder: Embedder, config: EngineConfig
) -> tuple[Planner, Planner | None]:
    factory = PLANNERS.get(settings.planner)
    if factory is None:
        raise ConfigError(
            f"unknown planner {settings.planner!r}; known: {', '.join(sorted(PLANNERS))}"
        )
    return factory(settings, embedder, config)


def build_engine(settings: Settings, embedder: Embedder | None = None) -> FoldEngine:
    config = settings.engine_config()
    use_single_thread()  # FAISS: single-query searches, no OpenMP pool contention
    embedder = embedder or build_embedder(settings)
    planner, fallback = build_planner(settings, embedder, config)
    engine = FoldEngine(embedder, planner, config, fallback=fallback)
    from topologies.facts.llm_extract import attach_llm_steps

    attach_llm_steps(engine)  # issue 7: LLM fact extraction when the LLM planner is on
    return engine
