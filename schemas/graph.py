"""Node and edge contracts of the typed memory multigraph (docs/DESIGN.md section 2)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from schemas.intents import IntentStatus, title_without_deadline


class NodeKind(StrEnum):
    EVENT = "EVENT"
    FACT = "FACT"
    CONCEPT = "CONCEPT"
    INTENT = "INTENT"
    TIME = "TIME"


class EdgeKind(StrEnum):
    GROUNDS = "GROUNDS"
    REINFORCES = "REINFORCES"
    DERIVED_FROM = "DERIVED_FROM"
    PART_OF = "PART_OF"
    CAUSES = "CAUSES"
    TRIGGERS = "TRIGGERS"
    RELATED_TO = "RELATED_TO"
    DEADLINE_FOR = "DEADLINE_FOR"
    USER_FEEDBACK = "USER_FEEDBACK"
    SUPERSEDES = "SUPERSEDES"


EDGE_PRIOR_WEIGHT: dict[EdgeKind, float] = {
    EdgeKind.GROUNDS: 1.0,
    EdgeKind.REINFORCES: 0.8,
    EdgeKind.DERIVED_FROM: 0.9,
    EdgeKind.PART_OF: 0.9,
    EdgeKind.CAUSES: 0.7,
    EdgeKind.TRIGGERS: 0.8,
    EdgeKind.RELATED_TO: 0.4,
    EdgeKind.DEADLINE_FOR: 1.0,
    EdgeKind.USER_FEEDBACK: 1.0,
    EdgeKind.SUPERSEDES: 1.0,
}

_K = NodeKind
_ALL = frozenset(NodeKind)


def _pairs(
    sources: set[NodeKind] | frozenset[NodeKind], targets: set[NodeKind] | frozenset[NodeKind]
) -> frozenset[tuple[NodeKind, NodeKind]]:
    return frozenset((a, b) for a in sources for b in targets)


# Legal (source kind, target kind) pairs per edge kind. The executor rejects anything else.
EDGE_RULES: dict[EdgeKind, frozenset[tuple[NodeKind, NodeKind]]] = {
    EdgeKind.GROUNDS: _pairs({_K.EVENT, _K.FACT}, {_K.CONCEPT, _K.FACT, _K.INTENT}),
    EdgeKind.REINFORCES: _pairs({_K.EVENT, _K.FACT}, {_K.CONCEPT, _K.INTENT}),
    EdgeKind.DERIVED_FROM: _pairs(
        {_K.FACT, _K.CONCEPT, _K.INTENT}, {_K.EVENT, _K.CONCEPT, _K.FACT}
    ),
    EdgeKind.PART_OF: _pairs({_K.CONCEPT}, {_K.CONCEPT}),
    EdgeKind.CAUSES: _pairs({_K.EVENT, _K.CONCEPT, _K.FACT}, {_K.EVENT, _K.CONCEPT, _K.FACT}),
    EdgeKind.TRIGGERS: _pairs({_K.CONCEPT}, {_K.INTENT}) | _pairs({_K.EVENT}, {_K.EVENT}),
    EdgeKind.RELATED_TO: _pairs(_ALL, _ALL),
    EdgeKind.DEADLINE_FOR: _pairs({_K.TIME}, {_K.INTENT, _K.CONCEPT, _K.EVENT}),
    EdgeKind.USER_FEEDBACK: _pairs({_K.EVENT}, {_K.INTENT, _K.CONCEPT}),
    # FACT/CONCEPT: belief revision. EVENT: a newer version of the same source item (an edited
    # message, a moved or cancelled meeting), written by the engine, never by a plan.
    EdgeKind.SUPERSEDES: _pairs({_K.FACT}, {_K.FACT})
    | _pairs({_K.CONCEPT}, {_K.CONCEPT})
    | _pairs({_K.EVENT}, {_K.EVENT}),
}

# Layers a tenant can opt in or out of (the privacy controls use these names).
INFERRED_KINDS = frozenset({NodeKind.FACT, NodeKind.CONCEPT, NodeKind.INTENT})


class Node(BaseModel):
    """A node of a tenant's memory graph. EVENT nodes are immutable once stored."""

    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    id: str
    kind: NodeKind
    tenant: str
    title: str = ""
    text: str = ""
    ts: datetime | None = None  # event time (EVENT), anchor time (TIME), first evidence otherwise
    created_at: datetime
    updated_at: datetime
    access_count: int = 0
    last_access: datetime | None = None
    reinforcement: int = 0  # times corroborated (CONCEPT/INTENT) or reinforced (FACT)
    source: str | None = None  # EVENT: calendar, email, chat, note, ...
    source_event_id: str | None = None  # EVENT: RawEvent.id; FACT: the event it came from
    participants: list[str] = Field(default_factory=list)
    category: str | None = None  # CONCEPT / INTENT: domain category for thresholds
    status: IntentStatus | None = None  # INTENT lifecycle
    deadline: datetime | None = None  # INTENT / TIME
    core: bool = False  # CONCEPT: cross-domain core schema
    inferred: bool = False  # produced by the engine rather than said by the user
    valid_from: datetime | None = None  # FACT: belief validity (supersedes chains)
    valid_to: datetime | None = None
    supersedes: str | None = None  # FACT/CONCEPT: the older item (chain pointer)
    superseded_by: str | None = None  # FACT/CONCEPT: the newer item (reverse pointer)
    attrs: dict[str, Any] = Field(default_factory=dict)

    @property
    def embed_text(self) -> str:
        """Everything the node says: its title, then its text (what is read and quoted)."""
        return node_text(self.title, self.text)

    @property
    def vector_text(self) -> str:
        """What the node's vector encodes (``vector_text``)."""
        return vector_text(self.kind, self.title, self.text)


def node_text(title: str, text: str) -> str:
    """A node's title, then its text unless it only repeats the title."""
    if title and text and text != title:
        return f"{title}\n{text}"
    return title or text


def vector_text(kind: NodeKind, title: str, text: str) -> str:
    """What a node of this kind is searched for by, and so what its vector encodes.

    An intent is found by its goal: the events of its theme and a person's questions ask
    about what is to be done, not about the running account of its evidence. Its vector is
    its title without the "(by 18 Dec)" deadline, so it stays put while evidence arrives and
    its deadline moves, and changes only when the goal is renamed. Every other kind is
    found by all it says."""
    if kind == NodeKind.INTENT and title:
        return title_without_deadline(title)
    return node_text(title, text)


class Edge(BaseModel):
    """A typed, weighted edge. The weight decays lazily: w(t) = w0 * exp(-lambda * (t - t_last))."""

    model_config = ConfigDict(extra="forbid")

    src: str
    dst: str
    kind: EdgeKind
    w0: float
    t_last: datetime
    created_at: datetime
    count: int = 1  # reinforcements of this edge
    attrs: dict[str, Any] = Field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, EdgeKind]:
        return (self.src, self.dst, self.kind)
