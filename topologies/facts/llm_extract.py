"""LLM extraction of facts and identity items (DCPM System 1 step ii, when an LLM is configured).

Two ways, chosen by ``LLMConfig.facts`` (``FOLDMEM_LLM_FACTS``):

- ``plan`` (default): :class:`PlanFacts`, no call of its own. The LLM planner asks for the
  event's facts in the same call as its plan (new FACT nodes) and hands their statements
  here instead of to the executor; they are reconciled against the current beliefs like any
  item. An event whose plan had no facts (or came from the heuristic planner) gets the rules.
- ``call``: :class:`LLMExtractor`, one call per event of its own (richer items: subject,
  value, revision), described below.

:class:`LLMExtractor` makes one call per event through ``topologies.llm``'s client (its JSON
ladder and retries), behind the LLM planner's circuit breaker and usage ledger: with the
breaker open or the tenant's daily token budget spent no call is made; a failed call counts as
a breaker failure; every call's tokens are booked (``facts_*`` outcomes). The reply is
validated by :class:`ExtractionReply` and mapped to the same
:class:`~topologies.facts.extract.ExtractedItem` the deterministic rules produce, so the
reconciler treats both alike. A reply that is not a JSON object with an ``items`` list (no
JSON, ``<think>`` blocks only, another shape) is not an answer: like any failure it returns
None and the deterministic rules run instead. Only ``{"items": []}`` means "nothing worth
remembering".
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from typing import Any

import structlog
from pydantic import ValidationError

from schemas.events import RawEvent
from topologies.embedding import Embedder
from topologies.facts.extract import ExtractedItem, ExtractorConfig, extract_items, normalise
from topologies.facts.slots import cue_of
from topologies.facts.step import FactStep, ItemExtractor, event_text
from topologies.llm.breaker import CircuitBreaker
from topologies.llm.completer import JsonCompleter
from topologies.llm.guard import GuardedTask
from topologies.llm.names import content_stems
from topologies.llm.prompts import extract_facts
from topologies.llm.prompts.extract_facts import ExtractedItemModel, ExtractionReply
from topologies.llm.usage import UsageLedger
from topologies.planner import Planner

log = structlog.get_logger(__name__)

_PREFIX = {"identity": "identity", "stance": "stance", "attribute": "attr"}
RESTATED = 0.5  # share of a rules statement's words a plan statement uses to restate it


def to_item(model: ExtractedItemModel) -> ExtractedItem:
    key = None
    if model.kind != "fact" and model.subject:
        key = f"{_PREFIX[model.kind]}:{normalise(model.subject).replace(' ', '_')}"
    return ExtractedItem(
        text=model.text.strip(),
        kind=model.kind,
        key=key,
        value=normalise(model.value),
        revision=model.revision,
        salience=model.salience,
        topic=model.subject,
        attrs={"extractor": "llm"},
    )


class LLMExtractor:
    """``FactStep``'s optional extractor: ``FactStep(embedder, extractor=LLMExtractor(client))``;
    pass the planner's ``breaker`` and ``ledger`` so both LLM tasks share them."""

    def __init__(
        self,
        client: JsonCompleter,
        max_chars: int = 6000,
        *,
        breaker: CircuitBreaker | None = None,
        ledger: UsageLedger | None = None,
    ) -> None:
        self.client = client
        self.max_chars = max_chars
        self.guard = GuardedTask(client, "facts", breaker, ledger)

    def messages(self, event: RawEvent) -> list[dict[str, str]]:
        return extract_facts.build_messages(event, self.max_chars)

    async def extract(self, event: RawEvent) -> list[ExtractedItem] | None:
        """The model's items, or None (use the rules): breaker open, budget spent, call failed
        or reply unusable."""
        usage = self.guard.usage(event.tenant, event.id)
        reply = await self.guard.call(
            usage,
            self.messages(event),
            extract_facts.TASK,
            ExtractionReply.model_json_schema(),
            {"tenant": event.tenant, "event_id": event.id},
        )
        if reply is None:
            return None
        items = self._parse(event, reply)
        self.guard.book(usage, "invalid" if items is None else "llm")
        return items

    def _parse(self, event: RawEvent, reply: Any) -> list[ExtractedItem] | None:
        error = getattr(reply, "error", None)
        data = getattr(reply, "data", reply)
        if error is None:
            try:
                parsed = ExtractionReply.model_validate(data)
            except ValidationError as exc:
                error = str(exc).splitlines()[0]
            else:
                return _once([to_item(m) for m in parsed.items])
        log.info("fact_extraction_invalid", tenant=event.tenant, event_id=event.id,
                 error=str(error)[:200])  # fmt: skip
        return None


def _once(items: list[ExtractedItem]) -> list[ExtractedItem]:
    """Each statement once (a small model repeats one item up to the cap)."""
    seen: set[str] = set()
    out = []
    for item in items:
        key = normalise(item.text)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def plan_item(statement: str, config: ExtractorConfig | None = None) -> ExtractedItem:
    """A statement of the plan as an item: the rules' identity, stance or attribute reading of
    it when they have one, else a plain fact."""
    text = " ".join(statement.split())
    for item in extract_items(text, config):
        if item.key is not None:
            return replace(item, text=text, attrs={"extractor": "plan"})
    return ExtractedItem(
        text=text,
        kind="fact",
        revision=cue_of(text) == 2,
        salience=0.6,
        attrs={"extractor": "plan"},
    )


class PlanFacts:
    """``FactStep``'s extractor fed by the LLM plan (``LLMPlanner.fact_sink``): the FACT
    statements of the event's plan are its items; no call of its own. None (the rules run)
    for an event whose plan had no facts."""

    def __init__(self, max_events: int = 1024, config: ExtractorConfig | None = None) -> None:
        self.max_events = max_events
        self.config = config or ExtractorConfig()
        self._statements: OrderedDict[tuple[str, str], list[str]] = OrderedDict()

    def put(self, tenant: str, event_id: str, statements: list[str]) -> None:
        self._statements[(tenant, event_id)] = list(statements)
        while len(self._statements) > self.max_events:
            self._statements.popitem(last=False)

    async def extract(self, event: RawEvent) -> list[ExtractedItem] | None:
        """The plan's statements, then the rules' statements of the event that none of them
        restates (a small model leaves some out; the rules' reading of the event is the
        fallback for what it missed), up to ``max_items``."""
        statements = self._statements.pop((event.tenant, event.id), None)
        if not statements:
            return None
        items = _once([plan_item(s, self.config) for s in statements])
        said = [content_stems(item.text) for item in items]
        for item in extract_items(event_text(event), self.config):
            if not _restated(content_stems(item.text), said):
                items.append(item)
        return items[: self.config.max_items]


def _restated(stems: frozenset[str], said: list[frozenset[str]]) -> bool:
    """Does one of the model's statements use at least half of this statement's words?"""
    return not stems or any(len(stems & other) >= RESTATED * len(stems) for other in said)


def model_fact_step(
    embedder: Embedder, planner: Planner, completer: JsonCompleter | None
) -> FactStep:
    """The engine's fact step with its model tasks, when there is a ``completer``: the plan's
    facts (``facts="plan"``: the LLM planner's ``fact_sink``) or an extraction call of their own
    (``facts="call"``) become the event's items, and the model decides how an item that may
    revise a belief does so. ``facts="rules"`` or no completer: no model. The tasks share the
    LLM planner's breaker and usage ledger when the planner has them."""
    from topologies.facts.llm_reconcile import LLMReconciler

    if completer is None:
        return FactStep(embedder)
    config = getattr(planner, "config", None)
    source = getattr(config, "facts", "call")
    breaker, ledger = getattr(planner, "breaker", None), getattr(planner, "ledger", None)
    extractor: ItemExtractor | None = None
    if source == "plan":
        extractor = getattr(planner, "fact_sink", None)
    elif source == "call":
        extractor = LLMExtractor(completer, breaker=breaker, ledger=ledger)
    judge = None
    if source != "rules":
        judge = LLMReconciler(
            completer,
            breaker=breaker,
            ledger=ledger,
            calls_per_event=int(getattr(config, "reconcile_calls", 1)),
        )
    return FactStep(embedder, extractor=extractor, judge=judge)
