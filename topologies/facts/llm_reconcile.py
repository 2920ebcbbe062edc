"""The model decides ADD / SUPERSEDE / UPDATE / NONE for an item against its candidates.

Task ``reconcile_fact`` (:mod:`topologies.llm.prompts.reconcile_fact`) through any
:class:`~topologies.llm.completer.JsonCompleter` (the LLM planner's client: its JSON ladder,
retries). ``FactStep.prepare`` asks before the fold transaction, only for items that have
candidates; :meth:`LLMReconciler.decide` returns None when the model is down, answers
invalidly or names a candidate that was not shown, and the heuristic rules
(:func:`topologies.facts.reconcile.decide`) decide that item instead.
"""

from __future__ import annotations

from datetime import datetime

import structlog

from topologies.facts.extract import ExtractedItem
from topologies.facts.reconcile import Candidate, Decision
from topologies.llm.breaker import CircuitBreaker
from topologies.llm.completer import JsonCompleter
from topologies.llm.guard import GuardedTask
from topologies.llm.prompts.reconcile_fact import (
    MAX_CANDIDATES,
    TASK,
    Statement,
    build_messages,
    parse_reply,
    schema,
)
from topologies.llm.usage import UsageLedger

log = structlog.get_logger(__name__)

_OPS = {"ADD": "ADD", "SUPERSEDE": "SUPERSEDE", "UPDATE": "UPDATE", "NONE": "DUPLICATE"}


def speaker_name(author: str) -> str:
    return author or "the user"


class LLMReconciler:
    """``FactStep``'s optional judge: ``FactStep(embedder, judge=LLMReconciler(client))``."""

    def __init__(
        self,
        client: JsonCompleter,
        max_candidates: int = MAX_CANDIDATES,
        *,
        breaker: CircuitBreaker | None = None,
        ledger: UsageLedger | None = None,
    ) -> None:
        self.client = client
        self.max_candidates = max_candidates
        self.guard = GuardedTask(client, "reconcile", breaker, ledger)

    async def decide(
        self,
        item: ExtractedItem,
        author: str,
        when: datetime,
        found: list[Candidate],
        log_ctx: dict[str, str],
    ) -> Decision | None:
        """The model's decision for one item, or None (then the heuristic decides)."""
        shown = found[: self.max_candidates]
        if not shown:
            return None
        candidates = [
            Statement(
                c.head.text,
                speaker_name(str(c.head.attrs.get("author", ""))),
                c.head.valid_from or c.head.ts,
            )
            for c in shown
        ]
        messages = build_messages(Statement(item.text, speaker_name(author), when), candidates)
        usage = self.guard.usage(log_ctx.get("tenant", ""), log_ctx.get("event_id", ""))
        reply = await self.guard.call(usage, messages, TASK, schema(), log_ctx)
        if reply is None:
            return None
        try:
            parsed = parse_reply(getattr(reply, "data", reply), len(shown))
        except ValueError as exc:
            log.info("fact_reconcile_invalid", error=str(exc)[:200], **log_ctx)
            self.guard.book(usage, "invalid")
            return None
        self.guard.book(usage, "llm")
        target = shown[parsed.target] if parsed.target is not None else None
        return Decision(
            _OPS[parsed.op],  # type: ignore[arg-type]
            target.head.id if target is not None else None,
            target.similarity if target is not None else 0.0,
            f"model: {parsed.reason}"[:200] if parsed.reason else "model",
        )
