"""How the runtime builds a planner: ``build_planner(settings_or_config, ...)``."""

from __future__ import annotations

from typing import Any

import structlog

from topologies.config import EngineConfig
from topologies.embedding import Embedder
from topologies.executor import PlanExecutor
from topologies.llm.client import CapabilityMemory
from topologies.llm.config import LLMConfig
from topologies.llm.planner import LLMPlanner
from topologies.llm.usage import UsageLedger
from topologies.naming import Namer
from topologies.planner import Planner

log = structlog.get_logger(__name__)

DISABLED_REASON = "no FOLDMEM_LLM_BASE_URL and no FOLDMEM_LLM_API_KEY: heuristic planner"
_said_disabled = False


def build_planner(
    settings_or_config: Any,
    embedder: Embedder,
    engine_config: EngineConfig,
    heuristic: Planner,
    *,
    ledger: UsageLedger | None = None,
    capabilities: CapabilityMemory | None = None,
    http_client: Any | None = None,
) -> Planner:
    """The LLM planner (falling back to ``heuristic``) when an endpoint is configured, else
    ``heuristic`` itself (said once in the log). Pass the same ``heuristic`` as the engine's
    ``fallback``. ``ledger`` lets the runtime share (and persist) one UsageLedger."""
    global _said_disabled
    config = LLMConfig.from_settings(settings_or_config)
    config = config.model_copy(update={"concept_similarity": engine_config.assign_similarity})
    if not config.enabled:
        if not _said_disabled:
            log.info("llm_disabled", reason=DISABLED_REASON)
            _said_disabled = True
        return heuristic
    validator = PlanExecutor(embedder, engine_config).validate
    if ledger is None:
        ledger = UsageLedger(daily_token_budget=config.daily_token_budget)
    elif not ledger.daily_token_budget:
        ledger.daily_token_budget = config.daily_token_budget
    log.info(
        "llm_enabled",
        model=config.model,
        endpoint=config.endpoint,
        structured_output=config.structured_output,
        concurrency=config.concurrency,
        daily_token_budget=config.daily_token_budget,
    )
    return LLMPlanner(
        config,
        heuristic=heuristic,
        validator=validator,
        ledger=ledger,
        capabilities=capabilities,
        http_client=http_client,
        namer=Namer(embedder),
    )


def llm_status(planner: Planner) -> dict[str, Any]:
    """What `foldmem status` and the API show about the LLM path, whatever the planner is."""
    if isinstance(planner, LLMPlanner):
        return planner.status()
    return {"enabled": False, "planner": planner.name, "reason": DISABLED_REASON}
