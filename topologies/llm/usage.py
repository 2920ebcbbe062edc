"""Token accounting per event, per tenant and per day, and the per-tenant daily budget.

The ledger is in memory and cheap; the embedded runner's store can persist it either whole
(``snapshot()`` / ``restore()`` of a JSON-able dict) or row by row (``listener`` is called with
``(tenant, day, counters)`` after every change: an upsert of one row per tenant and day).
Days are UTC calendar days of the wall clock (budgets are about money, not stream time), named
by the clock the runtime passes in.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import structlog

log = structlog.get_logger(__name__)

SNAPSHOT_VERSION = 1
Listener = Callable[[str, str, dict[str, int]], None]


@dataclass
class Counters:
    """One (tenant, day) row. ``events`` counts planned events; the outcome counters split them."""

    events: int = 0
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    estimated_calls: int = 0  # the server sent no usage: tokens estimated from characters
    llm: int = 0  # plan from the model (first reply)
    repaired: int = 0  # plan from the model after a repair round
    llm_empty: int = 0  # the model planned nothing, said why, and the heuristic agreed
    fallback_empty: int = 0  # the model planned nothing, the heuristic had ops -> heuristic
    fallback_invalid: int = 0  # model replied but no op was usable after repair -> heuristic
    fallback_error: int = 0  # model unreachable / timed out / failed -> heuristic
    skipped_duplicate: int = 0  # near-duplicate event: reinforcement without a call
    skipped_breaker: int = 0  # breaker open -> heuristic without a call
    skipped_budget: int = 0  # daily budget spent -> heuristic without a call
    # how the model's plans were mended (topologies.llm.reply_plan)
    salvaged: int = 0  # planned events whose plan lost ops the validator or the checks refused
    ops_dropped: int = 0  # those ops
    truncated: int = 0  # replies cut at max_output_tokens (their complete ops kept)
    facts_from_plan: int = 0  # events whose fact items came from the plan (no extra call)
    concept_from_rules: int = 0  # the model gave no (close) concept: the heuristic's joined
    # concept boundaries from the rules (LLMConfig.concept_boundaries): the model had chosen
    # another concept for the event than the heuristic planner
    concept_overridden: int = 0
    # side calls about an event already counted (its calls and tokens are in the totals above,
    # they are not planned events): fact extraction with a call of its own
    # (topologies.facts.llm_extract) and fact reconciliation (topologies.facts.llm_reconcile)
    facts_llm: int = 0  # items from the model
    facts_invalid: int = 0  # unusable reply -> rule-based extraction
    facts_error: int = 0  # call failed -> rule-based extraction (breaker failure)
    facts_skipped: int = 0  # breaker open or budget spent -> rules, without a call
    reconcile_llm: int = 0  # a belief decision from the model
    reconcile_invalid: int = 0  # unusable reply -> the heuristic rules decide
    reconcile_error: int = 0  # call failed -> the rules decide (breaker failure)
    reconcile_skipped: int = 0  # breaker open or budget spent -> the rules, without a call
    reconcile_overruled: int = 0  # an UPDATE of a belief that says something else -> the rules

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out

    def add(self, other: Counters) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)


OUTCOMES = (
    "llm",
    "repaired",
    "llm_empty",
    "fallback_empty",
    "fallback_invalid",
    "fallback_error",
    "skipped_duplicate",
    "skipped_breaker",
    "skipped_budget",
)
# why the LLM planner used the heuristic planner's plan, by ledger outcome
FALLBACK_REASONS = {
    "fallback_invalid": "invalid",  # no usable op, also after repair
    "fallback_empty": "empty",  # no op, and the heuristic planner had some
    "fallback_error": "error",  # timeout, server down, retries exhausted
    "skipped_breaker": "breaker_open",
    "skipped_budget": "budget_spent",
}


def fallback_counts(counters: dict[str, int]) -> dict[str, int]:
    """The LLM planner's fallbacks to the heuristic by reason, from ledger counters."""
    return {
        reason: int(counters.get(outcome, 0))
        for outcome, reason in FALLBACK_REASONS.items()
        if counters.get(outcome)
    }


def folded_by(planners: dict[str, int], counters: dict[str, int], folded: int) -> dict[str, Any]:
    """Which planner folded a tenant's events: events per plan author (the engine's count),
    the LLM planner's fallbacks by reason (its ledger counters summed over days), and folded
    events not counted (folded before the count was kept)."""
    planners = {str(k): int(v) for k, v in planners.items()}
    return {
        "planners": planners,
        "llm_fallbacks": fallback_counts(counters),
        "uncounted": max(0, folded - sum(planners.values())),
    }


SIDE_TASKS = ("facts", "reconcile")
SIDE_OUTCOMES = (
    *(f"{task}_{o}" for task in SIDE_TASKS for o in ("llm", "invalid", "error", "skipped")),
    "reconcile_overruled",
)
FACT_OUTCOMES = SIDE_OUTCOMES  # the fact tasks: extraction and reconcile
# EventUsage.extra counts booked with the event
_EXTRA_COUNTS = (
    "estimated_calls",
    "ops_dropped",
    "truncated",
    "concept_from_rules",
    "concept_overridden",
)


@dataclass
class EventUsage:
    tenant: str
    event_id: str
    outcome: str
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    day: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class UsageLedger:
    """Thread-safe counters; readers (CLI status, API) call ``summary()`` or ``tenant()``.

    ``clock`` names the current day (``YYYY-MM-DD``) the daily budget is counted against; the
    runtime passes the wall-clock day (``adapters.llm.factory.utc_day``), tests a fixed one.
    """

    def __init__(
        self,
        daily_token_budget: int = 0,
        listener: Listener | None = None,
        *,
        clock: Callable[[], str],
        keep_days: int = 31,
        keep_events: int = 1000,
    ) -> None:
        self.daily_token_budget = daily_token_budget
        self.listener = listener
        self._clock = clock
        self._keep_days = keep_days
        self._rows: dict[str, dict[str, Counters]] = {}  # tenant -> day -> counters
        self._recent: deque[EventUsage] = deque(maxlen=keep_events)
        self._lock = threading.Lock()

    # ----------------------------------------------------------------- budget
    def today(self) -> str:
        return self._clock()

    def spent_today(self, tenant: str) -> int:
        with self._lock:
            row = self._rows.get(tenant, {}).get(self.today())
            return row.tokens if row else 0

    def budget_left(self, tenant: str) -> int | None:
        """Tokens left today, or None when there is no budget."""
        if self.daily_token_budget <= 0:
            return None
        return max(0, self.daily_token_budget - self.spent_today(tenant))

    def over_budget(self, tenant: str) -> bool:
        left = self.budget_left(tenant)
        return left is not None and left <= 0

    # -------------------------------------------------------------- recording
    def record(self, usage: EventUsage) -> None:
        """Book one planned event (its calls and tokens, and how it was planned), or one fact
        extraction (``FACT_OUTCOMES``: calls and tokens, not an event)."""
        if usage.outcome not in OUTCOMES and usage.outcome not in SIDE_OUTCOMES:
            raise ValueError(f"unknown outcome {usage.outcome!r}")
        day = usage.day or self.today()
        usage.day = day
        delta = Counters(
            events=1 if usage.outcome in OUTCOMES else 0,
            calls=usage.calls,
            tokens_in=usage.tokens_in,
            tokens_out=usage.tokens_out,
            salvaged=1 if usage.extra.get("ops_dropped") else 0,
            facts_from_plan=1 if usage.extra.get("facts") else 0,
            **{name: int(usage.extra.get(name, 0)) for name in _EXTRA_COUNTS},
        )
        setattr(delta, usage.outcome, 1)
        with self._lock:
            days = self._rows.setdefault(usage.tenant, {})
            row = days.setdefault(day, Counters())
            row.add(delta)
            self._recent.append(usage)
            self._trim(days)
            snapshot_row = asdict(row)
        log.info(
            "llm_usage",
            tenant=usage.tenant,
            event_id=usage.event_id,
            outcome=usage.outcome,
            calls=usage.calls,
            tokens_in=usage.tokens_in,
            tokens_out=usage.tokens_out,
            tokens_today=snapshot_row["tokens_in"] + snapshot_row["tokens_out"],
        )
        if self.listener is not None:
            try:
                self.listener(usage.tenant, day, snapshot_row)
            except Exception as exc:  # persistence must never break planning
                log.warning("llm_usage_listener_failed", error=str(exc))

    def _trim(self, days: dict[str, Counters]) -> None:
        if len(days) > self._keep_days:
            for day in sorted(days)[: len(days) - self._keep_days]:
                del days[day]

    # ---------------------------------------------------------------- reading
    def tenant(self, tenant: str, day: str | None = None) -> dict[str, int]:
        """One tenant's counters for a day (default today)."""
        with self._lock:
            row = self._rows.get(tenant, {}).get(day or self.today(), Counters())
            return {**asdict(row), "tokens": row.tokens}

    def tenant_totals(self, tenant: str) -> dict[str, int]:
        """One tenant's counters summed over the days kept."""
        total = Counters()
        with self._lock:
            for row in self._rows.get(tenant, {}).values():
                total.add(row)
        return asdict(total)

    def totals(self) -> Counters:
        total = Counters()
        with self._lock:
            for days in self._rows.values():
                for row in days.values():
                    total.add(row)
        return total

    def recent(self, limit: int = 50) -> list[EventUsage]:
        with self._lock:
            return list(self._recent)[-limit:]

    def summary(self) -> dict[str, Any]:
        """What `foldmem status` and the API show: totals, per-event means, today per tenant."""
        total = self.totals()
        today = self.today()
        events = max(1, total.events)
        with self._lock:
            per_tenant = {
                tenant: {**asdict(days[today]), "tokens": days[today].tokens}
                for tenant, days in self._rows.items()
                if today in days
            }
        return {
            "totals": {**asdict(total), "tokens": total.tokens},
            "tokens_per_event": round(total.tokens / events, 1),
            "tokens_in_per_event": round(total.tokens_in / events, 1),
            "tokens_out_per_event": round(total.tokens_out / events, 1),
            "calls_per_event": round(total.calls / events, 3),
            "share_without_call": round(
                (total.skipped_duplicate + total.skipped_breaker + total.skipped_budget) / events, 3
            ),
            "daily_token_budget": self.daily_token_budget,
            "today": today,
            "tenants_today": per_tenant,
        }

    # ------------------------------------------------------------ persistence
    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "version": SNAPSHOT_VERSION,
                "rows": {
                    t: {d: asdict(c) for d, c in days.items()} for t, days in self._rows.items()
                },
            }

    def restore(self, data: dict[str, Any]) -> None:
        """Load a snapshot (replaces what is in memory). Unknown counter names are ignored."""
        if not data:
            return
        if int(data.get("version", SNAPSHOT_VERSION)) != SNAPSHOT_VERSION:
            raise ValueError(f"unsupported usage snapshot version {data.get('version')!r}")
        known = set(Counters.__dataclass_fields__)
        rows: dict[str, dict[str, Counters]] = {}
        for tenant, days in data.get("rows", {}).items():
            rows[tenant] = {
                day: Counters(**{k: int(v) for k, v in values.items() if k in known})
                for day, values in days.items()
            }
        with self._lock:
            self._rows = rows

    def restore_row(self, tenant: str, day: str, counters: dict[str, int]) -> None:
        """Load one persisted row (the row-by-row counterpart of ``listener``)."""
        known = set(Counters.__dataclass_fields__)
        with self._lock:
            self._rows.setdefault(tenant, {})[day] = Counters(
                **{k: int(v) for k, v in counters.items() if k in known}
            )
