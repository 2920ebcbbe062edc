"""The model decides ADD / SUPERSEDE / UPDATE / NONE for an item against its candidates.

Task ``reconcile_fact`` (:mod:`topologies.llm.prompts.reconcile_fact`) through any
:class:`~topologies.llm.completer.JsonCompleter` (the LLM planner's client: its JSON ladder,
retries), behind the planner's circuit breaker and usage ledger (``reconcile_*`` outcomes,
:class:`~topologies.llm.guard.GuardedTask`). ``FactStep.prepare`` asks before the fold
transaction, only for items that have candidates. Each ask is a model call beside the plan's,
so it is kept rare: only an item where a revision is at stake (it says something changed, it
sets the same keyed attribute as a candidate, or a candidate says nearly the same) is asked
about, and at most ``calls_per_event`` items per event. :meth:`LLMReconciler.decide` returns
None when it does not ask, the breaker is open, the model answers invalidly or names a
candidate that was not shown (a failed call raises, after booking it), and the heuristic rules
(:func:`topologies.facts.reconcile.decide`) decide that item instead. An UPDATE (the same
belief said again) stands only when its target says nearly the same (sentence cosine at least
``restated``) or sets the same keyed attribute: a small model answers UPDATE for most
statements ("adds a new detail"), and each wrong UPDATE ties the event to another theme's
belief; it is booked ``reconcile_overruled`` and the rules decide.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import structlog

from topologies.facts.extract import ExtractedItem
from topologies.facts.reconcile import Candidate, Decision
from topologies.facts.slots import cue_of
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


def at_stake(item: ExtractedItem, found: list[Candidate], similar: float) -> bool:
    """Could the item revise or repeat one of these beliefs? It says something changed or how
    things are now, sets the same keyed attribute as a candidate, or a candidate says nearly
    the same."""
    if item.revision or cue_of(item.text) > 0:
        return True
    if item.key and any(c.head.attrs.get("key") == item.key for c in found):
        return True
    return any(c.similarity >= similar for c in found)


class LLMReconciler:
    """``FactStep``'s optional judge: ``FactStep(embedder, judge=LLMReconciler(client))``;
    pass the planner's ``breaker`` and ``ledger`` so every LLM task shares them."""

    def __init__(
        self,
        client: JsonCompleter,
        max_candidates: int = MAX_CANDIDATES,
        *,
        breaker: CircuitBreaker | None = None,
        ledger: UsageLedger | None = None,
        calls_per_event: int = 1,
        similar: float = 0.6,
    ) -> None:
        self.client = client
        self.max_candidates = max_candidates
        self.guard = GuardedTask(client, "reconcile", breaker, ledger)
        self.calls_per_event = calls_per_event
        self.similar = similar
        self._asked: tuple[str, str, int] = ("", "", 0)  # (tenant, event id, calls so far)

    def _may_ask(self, tenant: str, event_id: str) -> bool:
        asked_tenant, asked_event, calls = self._asked
        if (asked_tenant, asked_event) != (tenant, event_id):
            calls = 0
        if calls >= self.calls_per_event:
            return False
        self._asked = (tenant, event_id, calls + 1)
        return True

    async def decide(
        self,
        item: ExtractedItem,
        author: str,
        when: datetime,
        found: list[Candidate],
        log_ctx: dict[str, str],
        same_belief: Callable[[Candidate], bool] | None = None,
    ) -> Decision | None:
        """The model's decision for one item, or None (then the heuristic decides)."""
        shown = found[: self.max_candidates]
        if not shown or not at_stake(item, shown, self.similar):
            return None
        tenant, event_id = log_ctx.get("tenant", ""), log_ctx.get("event_id", "")
        if not self._may_ask(tenant, event_id):
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
        usage = self.guard.usage(tenant, event_id)
        reply = await self.guard.call(usage, messages, TASK, schema(), log_ctx)
        if reply is None:
            return None
        try:
            parsed = parse_reply(getattr(reply, "data", reply), len(shown))
        except ValueError as exc:
            log.info("fact_reconcile_invalid", error=str(exc)[:200], **log_ctx)
            self.guard.book(usage, "invalid")
            return None
        target = shown[parsed.target] if parsed.target is not None else None
        if parsed.op == "UPDATE" and target is not None and same_belief and not same_belief(target):
            log.info("fact_reconcile_update_overruled", target=target.head.id,
                     similarity=round(target.similarity, 3), **log_ctx)  # fmt: skip
            self.guard.book(usage, "overruled")
            return None
        self.guard.book(usage, "llm")
        return Decision(
            _OPS[parsed.op],  # type: ignore[arg-type]
            target.head.id if target is not None else None,
            target.similarity if target is not None else 0.0,
            f"model: {parsed.reason}"[:200] if parsed.reason else "model",
        )
