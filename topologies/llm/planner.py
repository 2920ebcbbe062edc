"""LLMPlanner: UpdatePlans from any OpenAI-compatible model, behind the Planner protocol.

Per event, in order:
1. near-duplicate of an already folded EVENT (cosine >= ``near_duplicate`` or identical
   normalised text): the reinforcement plan the duplicate's concepts got, no call;
2. the tenant's daily token budget is spent, or the circuit breaker is open: the heuristic
   planner's plan, no call;
3. one call (structured-output ladder, the server kind's timeout policy); the reply is mapped
   back from short ids and its slips fixed or dropped (:mod:`topologies.llm.reply_plan`),
   the names checked (:mod:`topologies.llm.names`), and what is left validated op by op
   (``PlanExecutor.validate``): an op the validator refuses is dropped, the rest kept;
4. no usable op (no JSON, nothing valid): ``repair_rounds`` (default 1) repair round(s)
   showing the model its error; still nothing: the heuristic planner's plan;
5. the model answered no ops: accepted only when its notes say why and the heuristic planner
   has nothing to do either, else the heuristic plan (an empty plan is no grounding);
6. the call failed (timeout, retries exhausted, 4xx): breaker failure, the heuristic plan.
With a fact sink attached (``facts="plan"``), the plan's new FACT nodes go to the facts layer
instead of the executor: the event's facts come from the same call.
Every event is booked in the usage ledger with its outcome, calls and tokens. Without a
heuristic planner, the fallbacks raise LLMError and the engine's fallback runs. Safe to call
concurrently for different tenants; it never mutates memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

from schemas.errors import LLMError, PlanRejectedError
from schemas.graph import EdgeKind, NodeKind
from schemas.plans import AddEdge, AddNode, MergeNodes, PlanOp, UpdateNode, UpdatePlan
from topologies.entities import ensure_entity_index
from topologies.llm import names
from topologies.llm.boundaries import (
    KindOf,
    concept_targets,
    rule_boundaries,
    rule_concept_refs,
    rule_labels,
)
from topologies.llm.breaker import CircuitBreaker
from topologies.llm.completer import LLMReply, ModelClient
from topologies.llm.config import LLMConfig
from topologies.llm.jsontext import complete_ops_prefix
from topologies.llm.prompts import plan_update, repair
from topologies.llm.reply_plan import (
    BOUND,
    Converted,
    convert,
    drop_op,
    fact_ops,
    rule_structure,
)
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


class FactSink(Protocol):
    """Where the plan's FACT statements go (the facts layer's plan-fed extractor)."""

    def put(self, tenant: str, event_id: str, statements: list[str]) -> None: ...


_EVIDENCE = (EdgeKind.GROUNDS, EdgeKind.REINFORCES)


class OneEventIntentError(PlanRejectedError):
    """A new intent resting on evidence the event itself supplies: refused with its plan."""


def normalise_text(text: str) -> str:
    return " ".join(text.casefold().split())


@dataclass
class Checked:
    """One reply, checked: the plan (None when nothing usable), the error for a repair round."""

    plan: UpdatePlan | None
    error: str | None = None
    converted: Converted | None = None
    dropped: list[str] = field(default_factory=list)

    @property
    def empty_reply(self) -> bool:
        return self.converted is not None and self.converted.empty_reply


class LLMPlanner:
    name = "llm"

    def __init__(
        self,
        config: LLMConfig,
        *,
        client: ModelClient,
        ledger: UsageLedger,
        heuristic: Planner | None = None,
        validator: Validator | None = None,
        breaker: CircuitBreaker | None = None,
        namer: Namer | None = None,
        fact_sink: FactSink | None = None,
    ) -> None:
        """``client`` reaches the model (``adapters.llm.client.LLMClient``, or a fake);
        ``ledger`` counts calls and tokens against the daily budget; ``fact_sink`` (with
        ``facts="plan"``): the plan's FACT nodes go there as the event's fact items, for the
        engine's fact step (``topologies.facts.llm_extract.PlanFacts``), instead of into the
        graph as nodes."""
        self.config = config
        self.namer = namer  # checks the model's names; None: names are taken as they come
        self.heuristic = heuristic
        self.validator = validator
        self.ledger = ledger
        self.breaker = breaker or CircuitBreaker(config.breaker_failures, config.breaker_reset_s)
        self.client = client
        self.fact_sink = fact_sink

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
    async def _call(
        self,
        messages: list[dict[str, str]],
        grammar: dict[str, Any],
        usage: EventUsage,
        ctx: dict[str, Any],
    ) -> LLMReply:
        reply = await self.client.complete_json(
            messages, plan_update.TASK, plan_update.strict_schema(), ctx, grammar_schema=grammar
        )
        self.breaker.record_success()
        self._charge(usage, reply)
        return reply

    async def _plan_with_model(self, request: PlanRequest, usage: EventUsage) -> UpdatePlan | None:
        ctx = {"tenant": usage.tenant, "event_id": usage.event_id}
        messages, ids = plan_update.build_messages(request, self.config)
        request.consulted.update(ids.short_to_node.values())  # what the model was shown
        close = ids.close_concepts(self.config.concept_similarity)
        grammar = plan_update.grammar_schema(ids, self.config.max_plan_ops, close)
        reply = await self._call(messages, grammar, usage, ctx)
        checked = self._check(request, reply, ids, close)
        rounds = 0
        while (
            checked.plan is None
            and not checked.empty_reply
            and rounds < self.config.repair_rounds
            and not self.ledger.over_budget(usage.tenant)
        ):
            rounds += 1
            assert checked.error is not None
            log.info("llm_repair", error=checked.error[:300], round=rounds, **ctx)
            repair_messages = repair.build_repair_messages(messages, reply.text, checked.error)
            reply = await self._call(repair_messages, grammar, usage, ctx)
            checked = self._check(request, reply, ids, close)
        usage.extra["mode"] = reply.mode
        if checked.dropped:
            usage.extra["ops_dropped"] = len(checked.dropped)
            usage.extra["dropped"] = checked.dropped[:6]
        if checked.converted is not None and checked.converted.fixes:
            usage.extra["fixes"] = checked.converted.fixes[:6]
        if checked.empty_reply and checked.plan is not None:
            return await self._empty(request, usage, checked)
        if checked.plan is None:
            usage.outcome = "fallback_invalid"
            usage.extra["error"] = checked.error or "invalid plan"
            log.warning("llm_plan_invalid", error=(checked.error or "")[:300], rounds=rounds,
                        **ctx)  # fmt: skip
            return None
        usage.outcome = "llm" if rounds == 0 else "repaired"
        plan = self._send_facts(request, checked.plan, usage)
        plan = await self._with_rule_structure(request, plan, usage)
        log.info(
            "llm_planned",
            ops=len(plan.ops),
            dropped=len(checked.dropped),
            rounds=rounds,
            mode=reply.mode,
            tokens_in=usage.tokens_in,
            tokens_out=usage.tokens_out,
            **ctx,
        )
        return plan

    async def _empty(
        self, request: PlanRequest, usage: EventUsage, checked: Checked
    ) -> UpdatePlan | None:
        """The model answered no ops: kept when it said why and the heuristic planner finds
        nothing to do either; otherwise the heuristic plan (outcome ``fallback_empty``)."""
        assert checked.plan is not None
        notes = checked.converted.notes if checked.converted is not None else ""
        if self.heuristic is None:
            if notes:
                usage.outcome = "llm_empty"
                return checked.plan
            usage.outcome = "fallback_empty"
            usage.extra["error"] = "the model planned nothing and gave no reason"
            return None
        heuristic = await self.heuristic.plan(request)
        if notes and not heuristic.ops:
            usage.outcome = "llm_empty"
            log.info("llm_planned_nothing", notes=notes[:200], tenant=usage.tenant,
                     event_id=usage.event_id)  # fmt: skip
            return checked.plan
        usage.outcome = "fallback_empty"
        reason = (
            "the model planned nothing and gave no reason"
            if not notes
            else f"the model planned nothing ({notes[:120]}) but the heuristic planner has "
            f"{len(heuristic.ops)} op(s)"
        )
        usage.extra["error"] = reason
        log.info("llm_plan_empty", reason=reason, tenant=usage.tenant, event_id=usage.event_id)
        return self._noted(heuristic, reason)

    def _charge(self, usage: EventUsage, reply: LLMReply) -> None:
        usage.calls += 1
        usage.tokens_in += reply.tokens_in
        usage.tokens_out += reply.tokens_out
        usage.extra["seconds"] = round(float(usage.extra.get("seconds", 0.0)) + reply.seconds, 3)
        if reply.estimated:
            usage.extra["estimated_calls"] = int(usage.extra.get("estimated_calls", 0)) + 1
        if reply.truncated:
            usage.extra["truncated"] = int(usage.extra.get("truncated", 0)) + 1

    def _check(
        self, request: PlanRequest, reply: LLMReply, ids: plan_update.IdMap, close: list[str]
    ) -> Checked:
        """Map, fix and validate one reply; ops the validator refuses are dropped."""
        data, error = reply.data, reply.error
        if error is not None:
            salvaged = complete_ops_prefix(reply.text)  # a reply cut at the token limit
            if salvaged is None:
                return Checked(None, error)
            data = salvaged
        try:
            event = request.event
            converted = convert(
                data,
                ids,
                self.name,
                self.config.max_plan_ops,
                request.now.tzinfo,
                f"{event.title}\n{event.body}",
                close,
            )
        except PlanRejectedError as exc:
            return Checked(None, str(exc))
        if converted.refused:
            return Checked(None, "; ".join(converted.refused[:4]), converted)
        dropped = list(converted.dropped)
        plan = self._checked_names(request, converted.plan, dropped, ids)
        plan, refusal = self._validated(request, plan, dropped, ids)
        if refusal is not None:
            return Checked(None, refusal, converted, dropped)
        if dropped:
            log.info("llm_ops_dropped", dropped=dropped[:8], kept=len(plan.ops),
                     tenant=request.event.tenant, event_id=request.event.id)  # fmt: skip
        if not plan.ops and not converted.empty_reply:
            reasons = "; ".join(dropped[:6]) or "no valid op"
            return Checked(None, f"no op of the reply could be used: {reasons}", converted, dropped)
        return Checked(plan, None, converted, dropped)

    def _validated(
        self,
        request: PlanRequest,
        plan: UpdatePlan,
        dropped: list[str],
        ids: plan_update.IdMap,
    ) -> tuple[UpdatePlan, str | None]:
        """Validate; drop each op the validator refuses as a slip (and the ops naming its new
        node). Returns the plan left and, when an op breaks a bound of one event's plan (or
        makes an intent of one event's evidence), the refusal: then none of it is used. A
        rename or merge of concepts beyond the bounds (titles too far apart) is a slip of a
        small model, not an attack on what the user acts upon: that op is dropped."""
        for _ in range(len(plan.ops) + 1):
            try:
                self._guard_intents(request, plan)
                self._validate(request, plan)
                return plan, None
            except PlanRejectedError as exc:
                reason = ids.to_short(str(exc))
                index = exc.op_index
                if index is None or not 0 <= index < len(plan.ops):
                    return plan, reason
                if isinstance(exc, OneEventIntentError) or (
                    BOUND in reason and not _concept_edit(request, plan.ops[index])
                ):
                    return plan, reason
                dropped.append(reason)
                plan = drop_op(plan, index)
        return plan.model_copy(update={"ops": []}), None

    def _send_facts(self, request: PlanRequest, plan: UpdatePlan, usage: EventUsage) -> UpdatePlan:
        """With a fact sink, the plan's FACT nodes become the event's fact items."""
        if self.fact_sink is None or self.config.facts != "plan":
            return plan
        rest, facts = fact_ops(plan)
        if not facts:
            return plan
        try:
            self._validate(request, rest)
        except PlanRejectedError:
            return plan  # the plan needs its facts (an intent's evidence): keep them as nodes
        statements = [op.title if not op.text else f"{op.title}. {op.text}" for op in facts]
        self.fact_sink.put(request.event.tenant, request.event.id, statements)
        usage.extra["facts"] = len(statements)
        return rest

    async def _with_rule_structure(
        self, request: PlanRequest, plan: UpdatePlan, usage: EventUsage
    ) -> UpdatePlan:
        """The model's plan plus the heuristic planner's dates and event links (no call); when
        the model's plan gives the event no concept, the heuristic's concept too."""
        if not self.config.rule_structure or self.heuristic is None:
            return plan
        graph = request.memory.graph

        def kind_of(node_id: str) -> NodeKind | None:
            node = graph.get(graph.resolve(node_id))
            return None if node is None else node.kind

        heuristic = await self.heuristic.plan(request)
        if self.config.concept_boundaries == "rules":
            plan = self._bounded(request, plan, heuristic, kind_of, usage)
        concept = _grounds_a_concept(request, plan)
        rules_decide = self.config.concept_boundaries == "rules"
        in_plan = {op.ref for op in plan.ops if isinstance(op, AddNode)}
        concept_refs = (
            {h: m for h, m in rule_concept_refs(heuristic).items() if m in in_plan}
            if rules_decide
            else None
        )
        extra = rule_structure(
            heuristic, kind_of, concepts=not concept and not rules_decide, concept_refs=concept_refs
        )
        have = {(op.src, op.dst, op.kind) for op in plan.ops if isinstance(op, AddEdge)}
        extra = [op for op in extra if not isinstance(op, AddEdge) or (op.src, op.dst, op.kind)
                 not in have]  # fmt: skip
        if not extra:
            return plan
        merged = plan.model_copy(update={"ops": [*plan.ops, *extra]})
        try:
            self._validate(request, merged)
        except PlanRejectedError as exc:
            log.info("llm_rule_structure_skipped", error=str(exc)[:200],
                     tenant=request.event.tenant, event_id=request.event.id)  # fmt: skip
            return plan
        usage.extra["rule_ops"] = len(extra)
        if not concept and _grounds_a_concept(request, merged):
            usage.extra["concept_from_rules"] = 1
        return merged

    def _bounded(
        self,
        request: PlanRequest,
        plan: UpdatePlan,
        heuristic: UpdatePlan,
        kind_of: KindOf,
        usage: EventUsage,
    ) -> UpdatePlan:
        """The model's plan with the heuristic plan's concept membership
        (:mod:`topologies.llm.boundaries`); the model's own plan when the two do not fit
        together (the validator refuses the merged plan)."""
        bounded = rule_boundaries(plan, heuristic, request.event_node.id, kind_of)
        try:
            self._validate(request, bounded.plan)
        except PlanRejectedError as exc:
            log.info("llm_rule_boundaries_skipped", error=str(exc)[:200],
                     tenant=request.event.tenant, event_id=request.event.id)  # fmt: skip
            usage.extra["boundaries_skipped"] = 1
            return plan
        if bounded.overridden:
            usage.extra["concept_overridden"] = 1
        plan = self._fitting_labels(request, bounded.plan, heuristic, usage)
        return self._grown_labels(request, plan, kind_of, usage)

    def _fitting_labels(
        self, request: PlanRequest, plan: UpdatePlan, heuristic: UpdatePlan, usage: EventUsage
    ) -> UpdatePlan:
        """With the rules' boundaries, the model names a concept only with a label that
        describes the concept's members at least as well as the rules' label does (its
        vector as near their centroid, ``Namer.label_fit``) and does not narrow it to a detail
        some member lacks (``names.adds_a_detail``): the model sees one event, the rules'
        label comes from all the members. A new concept then takes the rules' label; a
        rename of an existing concept takes the rules' relabel or keeps the current name."""
        if self.namer is None or self.namer.embedder is None:
            return plan
        graph, event = request.memory.graph, request.event_node.id
        rule_new = rule_labels(heuristic)
        relabels = {
            graph.resolve(op.id): op.title
            for op in heuristic.ops
            if isinstance(op, UpdateNode) and op.title is not None
        }
        out = plan
        for op in plan.ops:
            if isinstance(op, AddNode) and op.ref in rule_new:
                members = [event, *_sources(plan, op.ref, graph.resolve)]
                rival: str | None = rule_new[op.ref]
            elif isinstance(op, UpdateNode) and op.title is not None:
                concept = graph.get(graph.resolve(op.id))
                if concept is None or concept.kind != NodeKind.CONCEPT:
                    continue
                members = [event, *self.namer.concept_members(request.memory, concept.id)]
                rival = relabels.get(concept.id) or concept.title
            else:
                continue
            if not rival or op.title is None or op.title == rival:
                continue
            fit, rival_fit = self.namer.label_fit(request.memory, members, [op.title, rival])
            texts = [request.event_node.embed_text]
            texts += [n.embed_text for m in members[1:] if (n := graph.get(m)) is not None]
            detail = names.adds_a_detail(op.title, rival, texts)
            if fit >= rival_fit and not detail:
                continue
            log.info("llm_label_less_fitting", tenant=request.event.tenant,
                     event_id=request.event.id, proposed=op.title, fit=round(fit, 3),
                     kept=rival, kept_fit=round(rival_fit, 3),
                     one_members_detail=detail)  # fmt: skip
            usage.extra["labels_from_rules"] = int(usage.extra.get("labels_from_rules", 0)) + 1
            out = _replace(out, op, op.model_copy(update={"title": rival}))
        return out

    def _grown_labels(
        self, request: PlanRequest, plan: UpdatePlan, kind_of: KindOf, usage: EventUsage
    ) -> UpdatePlan:
        """A concept the event joins keeps its name only while the name holds for every
        member: a model's label with a detail its members shared ("System design interview"
        for two system-design interviews) gives way to the rules' label when a member
        without the detail joins (the debrief), since no rename comes with a join."""
        if self.namer is None or self.namer.embedder is None:
            return plan
        graph, event = request.memory.graph, request.event_node
        renamed = {graph.resolve(op.id) for op in plan.ops
                   if isinstance(op, UpdateNode) and op.title is not None}  # fmt: skip
        out = plan
        for target in sorted(concept_targets(plan, event.id, kind_of)):
            concept = graph.get(graph.resolve(target))
            if concept is None or concept.id in renamed or not concept.title:
                continue
            members = [event.id, *self.namer.concept_members(request.memory, concept.id)]
            rules = self.namer.label_concept(request.memory, members, concept.id)
            texts = [n.embed_text for m in members if (n := graph.get(m)) is not None]
            if rules == concept.title or not names.adds_a_detail(concept.title, rules, texts):
                continue
            log.info("llm_label_outgrown", tenant=request.event.tenant, event_id=event.id,
                     label=concept.title, kept=rules)  # fmt: skip
            usage.extra["labels_from_rules"] = int(usage.extra.get("labels_from_rules", 0)) + 1
            relabel = UpdateNode(id=concept.id, title=rules, reasoning="the name holds for "
                                 "every member", grounded_in=[event.id])  # fmt: skip
            out = out.model_copy(update={"ops": [*out.ops, relabel]})
        return out

    # ------------------------------------------------------------------ names
    def _checked_names(
        self, request: PlanRequest, plan: UpdatePlan, dropped: list[str], ids: plan_update.IdMap
    ) -> UpdatePlan:
        """The model's concept labels and intent titles pass the engine's naming checks (a
        label is a short noun phrase, a title an action and its object; ``self.namer``, or the
        small checks of :mod:`topologies.llm.names` without one) and are not copies (of an
        event's title, of the example; a new label uses a word of its event), or give way to
        the heuristic's name for the same evidence; a failing rename keeps the current name."""
        event = request.event_node
        titles = [event.title, *(ids.titles[s] for s in ids.shown(NodeKind.EVENT))]
        out = plan
        for op in plan.ops:
            checked = self._checked_name(request, out, op, titles)
            if checked is None:
                dropped.append(f"{op.op} {getattr(op, 'title', '')!r}: not a name")
                out = drop_op(out, out.ops.index(op))
            elif checked is not op:
                out = _replace(out, op, checked)
        return out

    def _checked_name(
        self, request: PlanRequest, plan: UpdatePlan, op: PlanOp, titles: list[str]
    ) -> PlanOp | None:
        graph = request.memory.graph
        if isinstance(op, AddNode) and op.kind in (NodeKind.CONCEPT, NodeKind.INTENT):
            kind, proposed, new = op.kind, op.title, True
        elif isinstance(op, UpdateNode) and op.title is not None:
            node = graph.get(graph.resolve(op.id))
            if node is None or node.kind not in (NodeKind.CONCEPT, NodeKind.INTENT):
                return op
            kind, proposed, new = node.kind, op.title, False
        else:
            return op
        problem = self._name_problem(request, kind, proposed, titles, new)
        if problem is None:  # a small model writes "release check": a name starts upper case
            shown = proposed.strip()
            shown = shown[:1].upper() + shown[1:]
            return op if shown == proposed else op.model_copy(update={"title": shown})
        name = self._heuristic_name(request, plan, op) if isinstance(op, AddNode) else None
        if name and kind == NodeKind.CONCEPT and _a_person(request, name):
            name = None  # the namer's stand-in names someone: no concept of this reply
        log.info("llm_name_replaced", tenant=request.memory.tenant, event_id=request.event.id,
                 kind=kind.value, proposed=proposed[:120], problem=problem,
                 name=name or "(kept the current name)")  # fmt: skip
        if isinstance(op, AddNode) and not name:
            return None
        return op.model_copy(update={"title": name})

    def _name_problem(
        self, request: PlanRequest, kind: NodeKind, proposed: str, titles: list[str], new: bool
    ) -> str | None:
        event = request.event_node
        if kind == NodeKind.INTENT:
            if self.namer is not None:
                return self.namer.title_problem(proposed)
            return names.title_problem(proposed)
        source = f"{event.title}\n{event.text}" if new else ""
        copied = names.copy_problem(proposed, titles, source)
        if copied is None and _a_person(request, proposed):
            copied = "a person's name, not a theme"
        if copied is not None or self.namer is None:
            people = names.name_words([*event.participants, request.memory.tenant])
            return copied or names.label_problem(proposed, titles, people, source)
        return self.namer.label_problem(proposed, self.namer.names_of([event]))

    def _heuristic_name(self, request: PlanRequest, plan: UpdatePlan, op: AddNode) -> str | None:
        """The heuristic's name for a node the plan adds, from the plan's own evidence (None:
        an intent without the engine's namer)."""
        memory, graph = request.memory, request.memory.graph
        event = request.event_node.id

        if self.namer is None:
            if op.kind != NodeKind.CONCEPT:
                return None
            node = request.event_node
            return names.heuristic_label([f"{node.title}\n{node.text}"], exclude=[memory.tenant])
        if op.kind == NodeKind.CONCEPT:
            return self.namer.label_concept(memory, [event, *_sources(plan, op.ref, graph.resolve)])
        supporting = [
            s for s in _sources(plan, op.ref, graph.resolve, (EdgeKind.TRIGGERS,)) if s in graph
        ]
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
                raise OneEventIntentError(
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
        return self._noted(await self.heuristic.plan(request), reason)

    @staticmethod
    def _noted(plan: UpdatePlan, reason: str) -> UpdatePlan:
        notes = f"llm fallback: {reason}"[:300]
        return plan.model_copy(update={"notes": f"{plan.notes}; {notes}" if plan.notes else notes})

    # ----------------------------------------------------------------- status
    def status(self) -> dict[str, Any]:
        """For `foldmem status` and the API (never contains the key)."""
        policy = self.client.policy
        return {
            "enabled": True,
            "planner": self.name,
            "model": self.config.model,
            "endpoint": self.config.endpoint,
            "server": {
                "kind": policy.kind,
                "timeout_s": policy.timeout_s,
                "max_retries": policy.max_retries,
                "retry_timeouts": policy.retry_timeouts,
                "concurrency": policy.concurrency,
                "stream": policy.stream,
            },
            "max_output_tokens": self.config.max_output_tokens,
            "repair_rounds": self.config.repair_rounds,
            "facts": self.config.facts,
            "structured_output": self.client.capabilities.get(self.config.endpoint)
            or f"{self.config.structured_output} (not probed yet)",
            "breaker": self.breaker.status(),
            "requests": self.client.requests,
            "cancelled": self.client.cancelled,
            "usage": self.ledger.summary(),
        }

    async def aclose(self) -> None:
        await self.client.aclose()


def _replace(plan: UpdatePlan, old: PlanOp, new: PlanOp) -> UpdatePlan:
    return plan.model_copy(update={"ops": [new if op is old else op for op in plan.ops]})


def _concept_edit(request: PlanRequest, op: PlanOp) -> bool:
    """A rename or merge among existing concepts (no intent, no status)."""
    graph = request.memory.graph
    if isinstance(op, UpdateNode):
        node = graph.get(graph.resolve(op.id))
        return op.status is None and node is not None and node.kind == NodeKind.CONCEPT
    if isinstance(op, MergeNodes):
        nodes = [graph.get(graph.resolve(i)) for i in (op.keep, *op.absorb)]
        return all(n is not None and n.kind == NodeKind.CONCEPT for n in nodes)
    return False


def _a_person(request: PlanRequest, label: str) -> bool:
    """Is the label the name of someone in the user's events ("Dani", "Marcus Bell")?"""
    name = " ".join(label.casefold().split())
    return name in ensure_entity_index(request.memory, request.event_node).people()


def _sources(
    plan: UpdatePlan,
    ref: str,
    resolve: Callable[[str], str],
    kinds: tuple[EdgeKind, ...] = _EVIDENCE,
) -> list[str]:
    """The nodes the plan links to its new node ``ref`` by edges of ``kinds`` (default: the
    nodes it makes evidence of it)."""
    return [
        resolve(op.src)
        for op in plan.ops
        if isinstance(op, AddEdge) and op.dst == ref and op.kind in kinds
    ]


def _grounds_a_concept(request: PlanRequest, plan: UpdatePlan) -> bool:
    """Does the plan make the event evidence of a concept (existing or new)?"""
    graph, event = request.memory.graph, request.event_node.id
    new = {op.ref for op in plan.ops if isinstance(op, AddNode) and op.kind == NodeKind.CONCEPT}
    for op in plan.ops:
        if isinstance(op, AddEdge) and op.src == event and op.kind in _EVIDENCE:
            node = graph.get(graph.resolve(op.dst))
            if op.dst in new or (node is not None and node.kind == NodeKind.CONCEPT):
                return True
    return False
