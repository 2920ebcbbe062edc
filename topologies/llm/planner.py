"""LLMPlanner: UpdatePlans from any OpenAI-compatible model, behind the Planner protocol.

Per event, in order:
1. near-duplicate of an already folded EVENT (cosine >= ``near_duplicate`` or identical
   normalised text): the reinforcement plan the duplicate's concepts got, no call;
2. the tenant's daily token budget is spent, or the circuit breaker is open: the heuristic
   planner's plan, no call;
3. one call (structured-output ladder, retries); the reply is mapped back from short ids,
   parsed into UpdatePlan and checked by the validator (``PlanExecutor.validate``);
4. on a parse/validation failure, ``repair_rounds`` (default 1) repair round(s) showing the
   model its error; still invalid: the heuristic planner's plan;
5. the call failed (retries exhausted, 4xx): breaker failure, the heuristic planner's plan.
Without a heuristic planner, steps 2, 4 and 5 raise LLMError and the engine's fallback runs.
Safe to call concurrently for different tenants; it never mutates memory.
"""

from __future__ import annotations

from typing import Any, Protocol

import structlog

from schemas.errors import LLMError, PlanRejectedError
from schemas.graph import EdgeKind, NodeKind
from schemas.plans import AddEdge, AddNode, PlanOp, UpdateNode, UpdatePlan
from topologies.llm.breaker import CircuitBreaker
from topologies.llm.client import CapabilityMemory, LLMClient
from topologies.llm.config import LLMConfig
from topologies.llm.prompts import plan_update, repair
from topologies.llm.usage import EventUsage, UsageLedger
from topologies.memory import TenantMemory
from topologies.naming import Namer
from topologies.plan_bounds import PlanBounds
from topologies.planner import Planner, PlanRequest
from topologies.scope import FoldScope

log = structlog.get_logger(__name__)


class Validator(Protocol):
    """``PlanExecutor.validate``: whole-plan checks, within one event's bounds."""

    def __call__(
        self,
        memory: TenantMemory,
        plan: UpdatePlan,
        scope: FoldScope,
        bounds: PlanBounds | None = None,
    ) -> None: ...


_EVIDENCE = (EdgeKind.GROUNDS, EdgeKind.REINFORCES)


def normalise_text(text: str) -> str:
    return " ".join(text.casefold().split())


class LLMPlanner:
    name = "llm"

    def __init__(
        self,
        config: LLMConfig,
        *,
        heuristic: Planner | None = None,
        validator: Validator | None = None,
        ledger: UsageLedger | None = None,
        breaker: CircuitBreaker | None = None,
        client: LLMClient | None = None,
        capabilities: CapabilityMemory | None = None,
        http_client: Any | None = None,
        namer: Namer | None = None,
    ) -> None:
        self.config = config
        self.namer = namer  # checks the model's names; None: names are taken as they come
        self.heuristic = heuristic
        self.validator = validator
        self.ledger = ledger or UsageLedger(daily_token_budget=config.daily_token_budget)
        self.breaker = breaker or CircuitBreaker(config.breaker_failures, config.breaker_reset_s)
        self.client = client or LLMClient(config, capabilities, http_client=http_client)

    # --------------------------------------------------------------- protocol
    async def plan(self, request: PlanRequest) -> UpdatePlan:
        tenant, event_id = request.event.tenant, request.event.id
        usage = EventUsage(tenant=tenant, event_id=event_id, outcome="llm")
        duplicate, duplicate_of = self._duplicate_plan(request)
        if duplicate_of is not None:
            usage.outcome = "skipped_duplicate"
            self.ledger.record(usage)
            if duplicate is not None:
                return duplicate
            return await self._duplicate_fallback(request, duplicate_of)
        if self.ledger.over_budget(tenant):
            usage.outcome = "skipped_budget"
            self.ledger.record(usage)
            return await self._fallback(request, "daily token budget spent")
        if not self.breaker.allow():
            usage.outcome = "skipped_breaker"
            self.ledger.record(usage)
            return await self._fallback(request, "circuit breaker open")
        try:
            plan = await self._plan_with_model(request, usage)
        except LLMError as exc:
            self.breaker.record_failure()
            usage.outcome = "fallback_error"
            usage.extra["error"] = str(exc)[:300]
            self.ledger.record(usage)
            log.warning(
                "llm_call_failed",
                tenant=tenant,
                event_id=event_id,
                error=str(exc),
                breaker=self.breaker.state.value,
            )
            return await self._fallback(request, f"model call failed: {exc}")
        except BaseException:
            self.breaker.release()
            raise
        self.ledger.record(usage)
        if plan is None:
            return await self._fallback(request, str(usage.extra.get("error", "invalid plan")))
        return plan

    # ------------------------------------------------------------------ model
    async def _plan_with_model(self, request: PlanRequest, usage: EventUsage) -> UpdatePlan | None:
        ctx = {"tenant": usage.tenant, "event_id": usage.event_id}
        messages, ids = plan_update.build_messages(request, self.config)
        request.consulted.update(ids.short_to_node.values())  # what the model was shown
        reply = await self.client.complete_json(
            messages, plan_update.TASK, plan_update.RESPONSE_SCHEMA, ctx
        )
        self.breaker.record_success()
        self._charge(usage, reply.tokens_in, reply.tokens_out, reply.estimated)
        plan, error = self._check(request, reply.data, reply.error, ids)
        rounds = 0
        while plan is None and rounds < self.config.repair_rounds:
            if self.ledger.over_budget(usage.tenant):
                break
            rounds += 1
            assert error is not None
            log.info("llm_repair", error=error[:300], round=rounds, **ctx)
            repair_messages = repair.build_repair_messages(messages, reply.text, error)
            reply = await self.client.complete_json(
                repair_messages, plan_update.TASK, plan_update.RESPONSE_SCHEMA, ctx
            )
            self._charge(usage, reply.tokens_in, reply.tokens_out, reply.estimated)
            plan, error = self._check(request, reply.data, reply.error, ids)
        usage.extra["mode"] = reply.mode
        if plan is None:
            usage.outcome = "fallback_invalid"
            usage.extra["error"] = error or "invalid plan"
            log.warning("llm_plan_invalid", error=(error or "")[:300], rounds=rounds, **ctx)
            return None
        usage.outcome = "llm" if rounds == 0 else "repaired"
        log.info(
            "llm_planned",
            ops=len(plan.ops),
            rounds=rounds,
            mode=reply.mode,
            tokens_in=usage.tokens_in,
            tokens_out=usage.tokens_out,
            **ctx,
        )
        return plan

    def _charge(self, usage: EventUsage, tokens_in: int, tokens_out: int, estimated: bool) -> None:
        usage.calls += 1
        usage.tokens_in += tokens_in
        usage.tokens_out += tokens_out
        if estimated:
            usage.extra["estimated_calls"] = int(usage.extra.get("estimated_calls", 0)) + 1

    def _check(
        self,
        request: PlanRequest,
        data: dict[str, Any],
        format_error: str | None,
        ids: plan_update.IdMap,
    ) -> tuple[UpdatePlan | None, str | None]:
        if format_error is not None:
            return None, format_error
        try:
            plan = self._checked_names(
                request, plan_update.to_update_plan(data, ids, planner=self.name)
            )
            self._guard_intents(request, plan)
            self._validate(request, plan)
        except PlanRejectedError as exc:
            return None, ids.to_short(str(exc))
        return plan, None

    def _checked_names(self, request: PlanRequest, plan: UpdatePlan) -> UpdatePlan:
        """The model's concept labels and intent titles pass the heuristic's checks (a label
        is a short noun phrase, a title an action and its object) or give way to the
        heuristic's name for the same evidence; a failing rename is dropped."""
        if self.namer is None:
            return plan
        ops = [self._checked_name(request, plan, op) for op in plan.ops]
        return plan.model_copy(update={"ops": ops})

    def _checked_name(self, request: PlanRequest, plan: UpdatePlan, op: PlanOp) -> PlanOp:
        assert self.namer is not None
        memory, graph = request.memory, request.memory.graph
        if isinstance(op, AddNode) and op.kind in (NodeKind.CONCEPT, NodeKind.INTENT):
            kind, proposed = op.kind, op.title
        elif isinstance(op, UpdateNode) and op.title is not None:
            node = graph.get(graph.resolve(op.id))
            if node is None or node.kind not in (NodeKind.CONCEPT, NodeKind.INTENT):
                return op
            kind, proposed = node.kind, op.title
        else:
            return op
        if kind == NodeKind.CONCEPT:
            problem = self.namer.label_problem(proposed, self.namer.names_of([request.event_node]))
        else:
            problem = self.namer.title_problem(proposed)
        if problem is None:
            return op
        name: str | None = None
        if isinstance(op, AddNode):
            name = self._heuristic_name(request, plan, op)
        log.info(
            "llm_name_replaced",
            tenant=memory.tenant,
            event_id=request.event.id,
            kind=kind.value,
            proposed=proposed[:120],
            problem=problem,
            name=name or "(kept the current name)",
        )
        return op.model_copy(update={"title": name})

    def _heuristic_name(self, request: PlanRequest, plan: UpdatePlan, op: AddNode) -> str:
        """The heuristic's name for a node the plan adds, from the plan's own evidence."""
        assert self.namer is not None
        memory, graph = request.memory, request.memory.graph
        event = request.event_node.id

        def sources(*kinds: EdgeKind) -> list[str]:
            return [
                graph.resolve(o.src)
                for o in plan.ops
                if isinstance(o, AddEdge) and o.kind in kinds and o.dst == op.ref
            ]

        if op.kind == NodeKind.CONCEPT:
            return self.namer.label_concept(memory, [event, *sources(*_EVIDENCE)])
        supporting = [s for s in sources(EdgeKind.TRIGGERS) if s in graph]
        evidence = [event, *(e for s in supporting for e in self.namer.concept_members(memory, s))]
        return self.namer.title_intent(memory, evidence, op.deadline, supporting)

    def _guard_intents(self, request: PlanRequest, plan: UpdatePlan) -> None:
        """Event text is untrusted: a new INTENT must rest on concepts that existed before this
        event, with evidence from other events; concepts the same plan invents do not count."""
        need = self.config.intent_prior_support
        if need <= 0:
            return
        graph, own = request.memory.graph, request.event_node.id
        for index, op in enumerate(plan.ops):
            if not (isinstance(op, AddNode) and op.kind == NodeKind.INTENT):
                continue
            supporters = {
                graph.resolve(o.src)
                for o in plan.ops
                if isinstance(o, AddEdge) and o.kind == EdgeKind.TRIGGERS and o.dst == op.ref
            }
            prior = [
                s
                for s in supporters
                if (n := graph.get(s)) is not None
                and n.kind == NodeKind.CONCEPT
                and any(e.src != own for k in _EVIDENCE for e in graph.in_edges(s, k))
            ]
            if len(prior) < need:
                raise PlanRejectedError(
                    f"intent {op.ref!r} needs TRIGGERS from at least {need} existing concepts "
                    f"with evidence from earlier events, has {len(prior)}; one event alone "
                    "cannot create an intent",
                    index,
                )

    def _validate(self, request: PlanRequest, plan: UpdatePlan) -> None:
        if self.validator is None:
            return
        scope = FoldScope(
            request.event.tenant, request.event.id, request.event_node.id, request.now
        )
        self.validator(request.memory, plan, scope, PlanBounds.for_request(request))

    # ------------------------------------------------------- no-call branches
    def _duplicate_plan(self, request: PlanRequest) -> tuple[UpdatePlan | None, str | None]:
        """Reinforce what an already folded near-duplicate event grounds, without a call.

        Returns (plan, duplicate id); (None, id) when the duplicate grounds no concept (the
        heuristic planner handles it, still without a call); (None, None): not a duplicate.
        """
        memory, node = request.memory, request.event_node
        bare_duplicate: str | None = None
        graph = memory.graph
        text = normalise_text(request.event.text)
        for other_id, score in memory.index(NodeKind.EVENT).search(
            request.vector, 3, exclude={node.id}
        ):
            other = graph.get(other_id)
            if other is None or other.kind != NodeKind.EVENT:
                continue
            if other.source_event_id and memory.event_state(other.source_event_id) != "folded":
                continue
            same_text = normalise_text(other.embed_text) == text
            if score < self.config.near_duplicate and not same_text:
                continue
            request.consulted.add(other_id)
            targets = sorted(
                {
                    graph.resolve(e.dst)
                    for kind in _EVIDENCE
                    for e in graph.out_edges(other_id, kind)
                    if (n := graph.get(graph.resolve(e.dst))) is not None
                    and n.kind == NodeKind.CONCEPT
                }
            )
            if not targets:
                bare_duplicate = bare_duplicate or other_id
                continue
            request.consulted.update(targets)
            reason = f"near-duplicate (cosine {score:.3f}) of folded event {other_id}"
            plan = UpdatePlan(
                planner="llm-dedup",
                notes=reason,
                ops=[
                    AddEdge(
                        src=node.id,
                        dst=target,
                        kind=EdgeKind.REINFORCES,
                        reasoning=reason,
                        grounded_in=[node.id, other_id],
                    )
                    for target in targets[:16]
                ],
            )
            try:
                self._validate(request, plan)
            except PlanRejectedError:
                continue
            log.info(
                "llm_skipped_duplicate",
                tenant=request.event.tenant,
                event_id=request.event.id,
                duplicate_of=other_id,
                score=round(score, 4),
                concepts=len(plan.ops),
            )
            return plan, other_id
        return None, bare_duplicate

    async def _duplicate_fallback(self, request: PlanRequest, duplicate_of: str) -> UpdatePlan:
        reason = f"near-duplicate of folded event {duplicate_of} (no concept to reinforce)"
        if self.heuristic is not None:
            return await self._fallback(request, reason)
        node_id = request.event_node.id
        return UpdatePlan(
            planner="llm-dedup",
            notes=reason,
            ops=[
                AddEdge(
                    src=node_id,
                    dst=duplicate_of,
                    kind=EdgeKind.RELATED_TO,
                    reasoning=reason,
                    grounded_in=[node_id, duplicate_of],
                )
            ],
        )

    async def _fallback(self, request: PlanRequest, reason: str) -> UpdatePlan:
        if self.heuristic is None:
            raise LLMError(reason)
        plan = await self.heuristic.plan(request)
        notes = f"llm fallback: {reason}"[:300]
        return plan.model_copy(update={"notes": f"{plan.notes}; {notes}" if plan.notes else notes})

    # ----------------------------------------------------------------- status
    def status(self) -> dict[str, Any]:
        """For `foldmem status` and the API (never contains the key)."""
        return {
            "enabled": True,
            "planner": self.name,
            "model": self.config.model,
            "endpoint": self.config.endpoint,
            "structured_output": self.client.capabilities.get(self.config.endpoint)
            or f"{self.config.structured_output} (not probed yet)",
            "breaker": self.breaker.status(),
            "requests": self.client.requests,
            "usage": self.ledger.summary(),
        }

    async def aclose(self) -> None:
        await self.client.aclose()
