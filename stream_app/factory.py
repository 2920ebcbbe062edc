"""Build the runtime's parts from Settings: the engine's collaborators (embedder, planner,
engine) and the embedded hub around them (store, intent outputs, write locks).

Planners are listed by name in :data:`PLANNERS`: a function of ``(settings, embedder,
config)`` returning ``(planner, fallback or None)``. A new planner is a new line there.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator, Sequence

import structlog

from connectors.sinks import Sink
from schemas.errors import ConfigError
from stream_app.embedded.hub import MemoryHub
from stream_app.embedded.interlock import TenantLocks
from stream_app.embedded.store import Store
from stream_app.hub.reader import cores, shared_reader
from stream_app.ingest.admission import Admission
from stream_app.llm_factory import build_llm_planner
from stream_app.outbox.sinks import default_sinks, embedded_deliveries
from stream_app.settings import Settings
from topologies.config import EngineConfig
from topologies.embedding import Embedder, HashingEmbedder, MiniLmOnnxEmbedder, OpenAIEmbedder
from topologies.engine import FoldEngine
from topologies.heuristic_planner import HeuristicPlanner
from topologies.planner import Planner
from topologies.vector_index import use_single_thread

log = structlog.get_logger(__name__)
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
    from topologies.llm.planner import LLMPlanner

    # the LLM planner's client also serves fact extraction and the nightly inductor
    completer = planner.client if isinstance(planner, LLMPlanner) else None
    reader = shared_reader() if settings.parse_ahead and cores() > 1 else None
    return FoldEngine(
        embedder, planner, config, fallback=fallback, completer=completer, reader=reader
    )


def build_hub(
    settings: Settings,
    *,
    sinks: Sequence[Sink] | None = None,
    embedder: Embedder | None = None,
) -> MemoryHub:
    """Store + engine + intent sinks (default: the terminal, DATA_DIR/intents.jsonl and
    FOLDMEM_WEBHOOK_URL when set): everything a runner, the API or a CLI write command needs."""
    engine = build_engine(settings, embedder)
    store = Store(settings.db_path, synchronous=settings.store_synchronous)
    try:
        outputs = embedded_deliveries(
            settings, store, default_sinks(settings) if sinks is None else sinks
        )
        return MemoryHub(
            store,
            engine,
            outputs,
            admission=Admission.of(settings.max_future_days),
            locks=TenantLocks(settings.locks_path, settings.write_lock_timeout_s),
        )
    except BaseException:
        store.close()
        raise


def close_outputs(hub: MemoryHub) -> None:
    """Deliver what is left (a webhook: for up to FOLDMEM_WEBHOOK_DRAIN_S; the rest waits in
    the outbox for the next process), then release the sinks. Called where an event loop
    already runs (a command invoked from async code), it leaves the rest in the outbox."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(hub.close_outputs())
        return
    log.info("outputs_not_drained", reason="inside a running event loop; kept in the outbox")


@contextlib.contextmanager
def open_hub(settings: Settings) -> Iterator[MemoryHub]:
    """A hub for one CLI command; its outputs are drained and its store closed on the way
    out."""
    hub = build_hub(settings)
    try:
        yield hub
    finally:
        try:
            close_outputs(hub)  # a webhook delivers what the command emitted (retractions)
        finally:
            hub.store.close()
