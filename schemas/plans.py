"""UpdatePlan: an ordered list of atomic ops proposed by a planner for one event.

New nodes are named by a plan-local `ref` (for example "n1"); other ops may point at a ref
or at an existing node id. The executor turns refs into stable ids derived from the event id,
so replaying the same event yields the same ids.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from schemas.events import utf8_len
from schemas.graph import EdgeKind, NodeKind
from schemas.intents import IntentStatus
from schemas.limits import (
    MAX_GROUNDED_IN,
    MAX_LABEL_BYTES,
    MAX_PLAN_OPS,
    MAX_REASONING_BYTES,
    MAX_TEXT_BYTES,
    SCHEMA_VERSION,
)

_REF = r"^[A-Za-z0-9_\-:.]{1,128}$"


class _Op(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reasoning: str = ""
    grounded_in: list[str] = Field(default_factory=list, max_length=MAX_GROUNDED_IN)

    @field_validator("reasoning")
    @classmethod
    def _reasoning_bounded(cls, value: str) -> str:
        if utf8_len(value) > MAX_REASONING_BYTES:
            raise ValueError(f"reasoning is longer than {MAX_REASONING_BYTES} bytes")
        return value


def _bounded_label(value: str | None) -> str | None:
    if value is not None and utf8_len(value) > MAX_LABEL_BYTES:
        raise ValueError(f"title is longer than {MAX_LABEL_BYTES} bytes")
    return value


def _bounded_text(value: str | None) -> str | None:
    if value is not None and utf8_len(value) > MAX_TEXT_BYTES:
        raise ValueError(f"text is longer than {MAX_TEXT_BYTES} bytes")
    return value


class AddNode(_Op):
    op: Literal["ADD_NODE"] = "ADD_NODE"
    ref: str = Field(pattern=_REF)
    kind: NodeKind
    title: str = Field(min_length=1)
    text: str = ""
    ts: datetime | None = None
    category: str | None = Field(default=None, max_length=64)
    deadline: datetime | None = None
    attrs: dict[str, Any] = Field(default_factory=dict)

    _t = field_validator("title")(classmethod(lambda cls, v: _bounded_label(v)))
    _x = field_validator("text")(classmethod(lambda cls, v: _bounded_text(v)))


class AddEdge(_Op):
    op: Literal["ADD_EDGE"] = "ADD_EDGE"
    src: str = Field(pattern=_REF)
    dst: str = Field(pattern=_REF)
    kind: EdgeKind
    weight: float | None = Field(default=None, gt=0.0, le=5.0)


class UpdateNode(_Op):
    op: Literal["UPDATE_NODE"] = "UPDATE_NODE"
    id: str = Field(pattern=_REF)
    title: str | None = None
    text: str | None = None
    category: str | None = Field(default=None, max_length=64)
    status: IntentStatus | None = None
    deadline: datetime | None = None
    attrs: dict[str, Any] = Field(default_factory=dict)

    _t = field_validator("title")(classmethod(lambda cls, v: _bounded_label(v)))
    _x = field_validator("text")(classmethod(lambda cls, v: _bounded_text(v)))


class MergeNodes(_Op):
    op: Literal["MERGE_NODES"] = "MERGE_NODES"
    keep: str = Field(pattern=_REF)
    absorb: list[str] = Field(min_length=1, max_length=16)


class RemoveNode(_Op):
    op: Literal["REMOVE_NODE"] = "REMOVE_NODE"
    id: str = Field(pattern=_REF)


PlanOp = Annotated[
    AddNode | AddEdge | UpdateNode | MergeNodes | RemoveNode, Field(discriminator="op")
]


class UpdatePlan(BaseModel):
    """What a planner proposes for one event. Applied atomically or not at all."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    ops: list[PlanOp] = Field(default_factory=list, max_length=MAX_PLAN_OPS)
    planner: str = "unknown"
    notes: str = ""
