"""How the runtime builds a planner: ``build_planner(settings_or_config, ...)``.

The one place that joins the engine's LLM planner to the network client and the wall clock
(the daily budget's day).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import structlog

from adapters.llm.client import CapabilityMemory, LLMClient
from topologies.config import EngineConfig
from topologies.embedding import Embedder
from topologies.executor import PlanExecutor
from topologies.facts.llm_extract import PlanFacts
from topologies.llm.config import LLMConfig
from topologies.llm.planner import LLMPlanner
from topologies.llm.usage import UsageLedger
from topologies.naming import Namer
from topologies.planner import Planner

log = structlog.get_logger(__name__)

DISABLED_REASON = "no FOLDMEM_LLM_BASE_URL and no FOLDMEM_LLM_API_KEY: heuristic planner"
_said_disabled = False


def utc_day() -> str:
    """Today's UTC calendar day: the day a daily token budget is counted against."""
    return datetime.now(UTC).date().isoformat()


def usage_ledger(config: LLMConfig) -> UsageLedger:
    return UsageLedger(daily_token_budget=config.daily_token_budget, clock=utc_day)


def llm_planner(
    config: LLMConfig,
    *,
    heuristic: Planner | None = None,
    validator: Any | None = None,
    ledger: UsageLedger | None = None,
    capabilities: CapabilityMemory | None = None,
    http_client: Any | None = None,
    namer: Namer | None = None,
    fact_items: bool = False,
) -> LLMPlanner:
    """The LLM planner on an :class:`LLMClient` for ``config`` (``http_client``: an
    ``httpx.AsyncClient``, e.g. on an ``httpx.MockTransport`` in tests). ``fact_items``: the
    engine's fact step takes the plan's facts (``facts="plan"``) or makes calls of its own
    (``facts="call"``) on this planner's client; build the engine with
    ``completer=planner.client``."""
    return LLMPlanner(
        config,
        client=LLMClient(config, capabilities, http_client=http_client),
        ledger=ledger if ledger is not None else usage_ledger(config),
        heuristic=heuristic,
        validator=validator,
        namer=namer,
        fact_sink=PlanFacts() if fact_items and config.facts == "plan" else None,
    )


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
        ledger = usage_ledger(config)
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
    return llm_planner(
        config,
        heuristic=heuristic,
        validator=validator,
        ledger=ledger,
        capabilities=capabilities,
        http_client=http_client,
        namer=Namer(embedder),
        fact_items=True,
    )


def llm_status(planner: Planner) -> dict[str, Any]:
    """What `foldmem status` and the API show about the LLM path, whatever the planner is."""
    if isinstance(planner, LLMPlanner):
        return planner.status()
    return {"enabled": False, "planner": planner.name, "reason": DISABLED_REASON}
