"""One guarded model call for the fact tasks (extraction, reconcile): no call while the planner's
circuit breaker is open or the tenant's daily budget is spent; a failed call is a breaker
failure; calls and tokens are booked in the usage ledger under the task's outcome prefix
(``facts_*``, ``reconcile_*``, see :mod:`topologies.llm.usage`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schemas.errors import LLMError
from topologies.llm.breaker import CircuitBreaker
from topologies.llm.completer import JsonCompleter
from topologies.llm.usage import EventUsage, UsageLedger


@dataclass
class GuardedTask:
    """``client`` behind ``breaker`` and ``ledger`` (both optional) for one task ``prefix``."""

    client: JsonCompleter
    prefix: str
    breaker: CircuitBreaker | None = None
    ledger: UsageLedger | None = None

    def usage(self, tenant: str, event_id: str) -> EventUsage:
        return EventUsage(tenant=tenant, event_id=event_id, outcome=f"{self.prefix}_skipped")

    async def call(
        self,
        usage: EventUsage,
        messages: list[dict[str, str]],
        task: str,
        schema: dict[str, Any],
        log_ctx: dict[str, str],
    ) -> Any | None:
        """The reply, or None without a call (breaker open, budget spent: booked as skipped).
        A failed call is booked as ``<prefix>_error`` and re-raised. The caller books the
        outcome of a reply with :meth:`book` (``<prefix>_llm`` or ``<prefix>_invalid``)."""
        if (self.ledger is not None and self.ledger.over_budget(usage.tenant)) or (
            self.breaker is not None and not self.breaker.allow()
        ):
            self.book(usage, "skipped")
            return None
        try:
            reply = await self.client.complete_json(messages, task, schema, log_ctx=log_ctx)
        except LLMError as exc:
            if self.breaker is not None:
                self.breaker.record_failure()
            usage.extra["error"] = str(exc)[:300]
            self.book(usage, "error")
            raise
        except BaseException:
            if self.breaker is not None:
                self.breaker.release()
            raise
        if self.breaker is not None:
            self.breaker.record_success()
        usage.calls = 1
        usage.tokens_in = int(getattr(reply, "tokens_in", 0))
        usage.tokens_out = int(getattr(reply, "tokens_out", 0))
        if getattr(reply, "estimated", False):
            usage.extra["estimated_calls"] = 1
        usage.extra["seconds"] = float(getattr(reply, "seconds", 0.0))
        return reply

    def book(self, usage: EventUsage, outcome: str) -> None:
        usage.outcome = f"{self.prefix}_{outcome}"
        if self.ledger is not None:
            self.ledger.record(usage)
