"""Task ``nightly_actions``: one cluster of facts -> the nightly inductor's tool calls.

The model sees one cluster of related FACT nodes (ids, text, date) and the nearest existing
schemas and intentions, and answers :class:`ActionList`: ``create_schema``,
``create_intention``, ``add_evidence`` and ``add_edge`` calls (the same four tools the
deterministic inductor emits). ``topologies.nightly.tools.actions_to_plan`` turns them into one
UpdatePlan that the executor validates as a whole.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

TASK = "nightly_actions"

SYSTEM_PROMPT = """You maintain a user's long-term memory graph. You receive one cluster of \
related facts about the user and the nearest existing schemas and intentions. Use the tools:
- create_schema: a within-domain behavioural regularity (work habits, food preferences ...), \
with its evidence (fact ids);
- create_intention: a latent concern about an event the user is likely to face, supported by at \
least two schemas (refs you create or existing ids), with evidence and an optional ISO deadline;
- add_evidence: attach fact ids to an existing schema or intention (prefer this when one fits);
- add_edge: PART_OF, CAUSES, TRIGGERS or RELATED_TO between graph nodes.
Answer with JSON {"actions": [...]}; each action has "tool" and its fields.
Use only the ids given."""


_TOOL_EDGES = Literal["PART_OF", "CAUSES", "TRIGGERS", "RELATED_TO"]


class _Action(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reasoning: str = Field(default="", max_length=500)


class _Create(_Action):
    """What a new schema and a new intention both carry."""

    ref: str = Field(pattern=r"^[A-Za-z0-9_\-]{1,32}$")
    title: str = Field(min_length=1, max_length=120)
    description: str = Field(default="", max_length=1000)
    category: str = Field(default="general", max_length=64)
    evidence: list[str] = Field(default_factory=list, max_length=200)


class CreateSchema(_Create):
    tool: Literal["create_schema"] = "create_schema"


class CreateIntention(_Create):
    tool: Literal["create_intention"] = "create_intention"
    supporting: list[str] = Field(default_factory=list, max_length=8)  # schema refs or ids
    deadline: datetime | None = None


class AddEvidence(_Action):
    tool: Literal["add_evidence"] = "add_evidence"
    target: str = Field(min_length=1, max_length=128)
    evidence: list[str] = Field(default_factory=list, max_length=200)


class AddGraphEdge(_Action):
    tool: Literal["add_edge"] = "add_edge"
    src: str = Field(min_length=1, max_length=128)
    dst: str = Field(min_length=1, max_length=128)
    kind: _TOOL_EDGES = "RELATED_TO"


Action = Annotated[
    CreateSchema | CreateIntention | AddEvidence | AddGraphEdge, Field(discriminator="tool")
]


class ActionList(BaseModel):
    """What the LLM inductor must answer: the tool calls, in emission order."""

    model_config = ConfigDict(extra="ignore")

    actions: list[Action] = Field(default_factory=list, max_length=16)
