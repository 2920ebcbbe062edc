"""LLM extraction of facts and identity items (DCPM System 1 step ii, when an LLM is configured).

One call per event through ``topologies.llm``'s client (its JSON ladder and retries), behind
the LLM planner's circuit breaker and usage ledger: with the breaker open or the tenant's
daily token budget spent no call is made; a failed call counts as a breaker failure; every
call's tokens are booked (``facts_*`` outcomes). The reply is validated by
:class:`ExtractionReply` and mapped to the same :class:`~topologies.facts.extract.ExtractedItem`
the deterministic rules produce, so the reconciler treats both alike. A reply that is not a
JSON object with an ``items`` list (no JSON, ``<think>`` blocks only, another shape) is not an
answer: like any failure it returns None and the deterministic rules run instead. Only
``{"items": []}`` means "nothing worth remembering".
"""

from __future__ import annotations

import json
from typing import Any, Literal

import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from schemas.events import RawEvent
from topologies.facts.extract import ExtractedItem, normalise
from topologies.llm.breaker import CircuitBreaker
from topologies.llm.completer import JsonCompleter
from topologies.llm.guard import GuardedTask
from topologies.llm.usage import UsageLedger

log = structlog.get_logger(__name__)

SYSTEM_PROMPT = """You extract a user's long-term memory items from one message they wrote or \
received. Return JSON {"items": [...]} with at most 8 items, each:
- "text": one self-contained sentence, in the user's perspective;
- "kind": "identity" (a durable attribute: home city, employer, job, diet, family), "stance" \
(a preference, opinion or stance), "attribute" (another "my X is Y" fact) or "fact" (anything \
else worth remembering);
- "subject": for identity/stance/attribute, a short snake_case subject such as home_city, \
employer, diet, fitness, coffee, favourite_editor (the same subject for later revisions);
- "value": the normalised value for that subject (e.g. "lisbon", "prefers hiking");
- "revision": true when the message says an earlier belief or preference changed;
- "salience": 0..1.
Skip greetings, questions and boilerplate. Never invent facts."""


class ExtractedItemModel(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=3, max_length=400)
    kind: Literal["identity", "stance", "attribute", "fact"] = "fact"
    subject: str = Field(default="", max_length=64)
    value: str = Field(default="", max_length=160)
    revision: bool = False
    salience: float = Field(default=0.5, ge=0.0, le=1.0)


class ExtractionReply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    items: list[ExtractedItemModel] = Field(max_length=8)  # required: {} is not an answer


_PREFIX = {"identity": "identity", "stance": "stance", "attribute": "attr"}


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
        body = {
            "source": event.source,
            "time": event.ts.isoformat(),
            "title": event.title[:300],
            "text": event.body[: self.max_chars],
        }
        return [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": json.dumps(body, ensure_ascii=False)},
        ]

    async def extract(self, event: RawEvent) -> list[ExtractedItem] | None:
        """The model's items, or None (use the rules): breaker open, budget spent, call failed
        or reply unusable."""
        usage = self.guard.usage(event.tenant, event.id)
        reply = await self.guard.call(
            usage,
            self.messages(event),
            "memory_items",
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
                return [to_item(m) for m in parsed.items]
        log.info("fact_extraction_invalid", tenant=event.tenant, event_id=event.id,
                 error=str(error)[:200])  # fmt: skip
        return None


def attach_llm_steps(engine: Any) -> bool:
    """Give the engine's fact step the LLM planner's client, breaker and usage ledger, when the
    planner has a client: the model extracts the items and decides how each revises the
    current beliefs."""
    from topologies.facts.llm_reconcile import LLMReconciler

    planner = engine.planner
    client = getattr(planner, "client", None)
    if client is None or not hasattr(client, "complete_json"):
        return False
    engine.facts.extractor = LLMExtractor(
        client, breaker=getattr(planner, "breaker", None), ledger=getattr(planner, "ledger", None)
    )
    engine.facts.judge = LLMReconciler(
        client, breaker=getattr(planner, "breaker", None), ledger=getattr(planner, "ledger", None)
    )
    return True
