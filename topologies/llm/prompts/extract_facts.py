"""Task ``memory_items``: one event -> the long-term memory items it holds.

The model sees the event (source, time, title, text) and answers :class:`ExtractionReply`: at
most eight items, each a self-contained sentence with its kind (identity, stance, attribute,
fact), a snake_case subject and a normalised value for the belief it states, and whether it
revises an earlier one. ``topologies.facts.llm_extract.LLMExtractor`` asks it (with
``facts="call"``) and maps the items to the rules' ``ExtractedItem``; a reply that is not this
shape is no answer and the rules run instead; ``{"items": []}`` means nothing to remember.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from schemas.events import RawEvent

TASK = "memory_items"

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


def build_messages(event: RawEvent, max_chars: int) -> list[dict[str, str]]:
    """The system prompt and the event as JSON data (its text cut at ``max_chars``)."""
    body = {
        "source": event.source,
        "time": event.ts.isoformat(),
        "title": event.title[:300],
        "text": event.body[:max_chars],
    }
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": json.dumps(body, ensure_ascii=False)},
    ]
