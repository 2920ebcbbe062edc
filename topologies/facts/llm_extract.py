"""LLM extraction of facts and identity items (DCPM System 1 step ii, when an LLM is configured).

One call per event through ``topologies.llm``'s client (its JSON ladder, retries and breaker);
the reply is validated by :class:`ExtractionReply` and mapped to the same
:class:`~topologies.facts.extract.ExtractedItem` the deterministic rules produce, so the
reconciler treats both alike. Any failure returns None and the deterministic rules run instead.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from schemas.events import RawEvent
from topologies.facts.extract import ExtractedItem, normalise
from topologies.llm.completer import JsonCompleter

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

    items: list[ExtractedItemModel] = Field(default_factory=list, max_length=8)


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
    """``FactStep``'s optional extractor: ``FactStep(embedder, extractor=LLMExtractor(client))``."""

    def __init__(self, client: JsonCompleter, max_chars: int = 6000) -> None:
        self.client = client
        self.max_chars = max_chars

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
        reply = await self.client.complete_json(
            self.messages(event),
            "memory_items",
            ExtractionReply.model_json_schema(),
            log_ctx={"tenant": event.tenant, "event_id": event.id},
        )
        data = getattr(reply, "data", reply)
        try:
            parsed = ExtractionReply.model_validate(data)
        except ValidationError as exc:
            log.info("fact_extraction_invalid", event_id=event.id, error=str(exc)[:200])
            return None
        return [to_item(m) for m in parsed.items]


def attach_llm_steps(engine: Any) -> bool:
    """Give the engine's fact step the LLM planner's client, when the planner has one: the
    model extracts the items and decides how each revises the current beliefs."""
    from topologies.facts.llm_reconcile import LLMReconciler

    client = getattr(engine.planner, "client", None)
    if client is None or not hasattr(client, "complete_json"):
        return False
    engine.facts.extractor = LLMExtractor(client)
    engine.facts.judge = LLMReconciler(client)
    return True
