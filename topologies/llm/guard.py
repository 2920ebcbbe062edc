"""The planner's circuit breaker and usage ledger around the model calls of another LLM task.

Fact extraction with a call of its own (:mod:`topologies.facts.llm_extract`) and fact
reconciliation (:mod:`topologies.facts.llm_reconcile`) call the same model as the planner, so
they share its breaker and ledger: no call while the breaker is open or the tenant's daily
budget is spent (``<task>_skipped``), a failed call is a breaker failure (``<task>_error``,
the error is raised again for the caller to fall back), and every call's tokens are booked
with the event (``<task>_llm`` or ``<task>_invalid``; ``topologies.llm.usage.SIDE_OUTCOMES``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from schemas.errors import LLMError
from topologies.llm.breaker import CircuitBreaker
from topologies.llm.usage import SIDE_TASKS, EventUsage, UsageLedger


class CallGuard:
    def __init__(
        self,
        task: str,
        breaker: CircuitBreaker | None = None,
        ledger: UsageLedger | None = None,
    ) -> None:
        if task not in SIDE_TASKS:
            raise ValueError(f"unknown side task {task!r}; one of {SIDE_TASKS}")
        self.task = task
        self.breaker = breaker
        self.ledger = ledger

    async def call(
        self, tenant: str, event_id: str, send: Callable[[], Awaitable[Any]]
    ) -> tuple[Any, EventUsage] | None:
        """``send()``'s reply and its booking (finish it with :meth:`book`), or None when no
        call may go out (booked as skipped). LLMError from ``send`` is booked and raised."""
        usage = EventUsage(tenant=tenant, event_id=event_id, outcome=f"{self.task}_skipped")
        if (self.ledger is not None and self.ledger.over_budget(tenant)) or (
            self.breaker is not None and not self.breaker.allow()
        ):
            self._record(usage)
            return None
        try:
            reply = await send()
        except LLMError as exc:
            if self.breaker is not None:
                self.breaker.record_failure()
            usage.outcome = f"{self.task}_error"
            usage.extra["error"] = str(exc)[:300]
            self._record(usage)
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
        return reply, usage

    def book(self, usage: EventUsage, valid: bool) -> None:
        """Book a call :meth:`call` returned: its reply was usable, or not."""
        usage.outcome = f"{self.task}_{'llm' if valid else 'invalid'}"
        self._record(usage)

    def _record(self, usage: EventUsage) -> None:
        if self.ledger is not None:
            self.ledger.record(usage)
