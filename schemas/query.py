"""Read-path contracts (docs/DESIGN.md section 8): query and cued recall requests and their
results."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from schemas.events import require_aware
from schemas.graph import NodeKind

RetrievalMode = Literal["hybrid", "bm25", "dense"]


class TimeRange(BaseModel):
    """A closed interval [start, end] of event time (or belief validity)."""

    model_config = ConfigDict(extra="forbid")

    start: datetime
    end: datetime

    @model_validator(mode="after")
    def _ordered(self) -> TimeRange:
        require_aware(self.start, "between.start")
        require_aware(self.end, "between.end")
        if self.end < self.start:
            raise ValueError("between.end is before between.start")
        return self


class QueryRequest(BaseModel):
    """A read-path query. Nothing here calls an LLM and a query never writes."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=4000)
    k: int = Field(default=10, ge=1, le=200)
    kinds: list[NodeKind] | None = None  # None: EVENT, FACT, CONCEPT, INTENT
    as_of: datetime | None = None  # only what had happened / was believed at this instant
    between: TimeRange | None = None  # event time (or validity) overlapping this interval
    mode: RetrievalMode = "hybrid"  # bm25 / dense alone are the benchmark baselines
    expand: bool = True  # graph expansion (BFS + personalized PageRank)
    surface: bool = True  # concepts / intents whose evidence matched
    chains: bool = True  # attach whole supersedes chains
    max_event_ids: int = Field(default=20, ge=0, le=200)

    @model_validator(mode="after")
    def _aware(self) -> QueryRequest:
        if self.as_of is not None:
            require_aware(self.as_of, "as_of")
        return self


class Explanation(BaseModel):
    """The signals that ranked one result. Ranks are 1-based; None: signal did not fire."""

    model_config = ConfigDict(extra="forbid")

    bm25_rank: int | None = None
    bm25_score: float | None = None
    dense_rank: int | None = None
    dense_cosine: float | None = None
    rrf: float = 0.0
    expansion: float = 0.0  # BFS score: seed score * decay^hops * edge weight
    hops: int | None = None  # hops from the nearest seed (0 = direct hit)
    via: str | None = None  # the seed the expansion came from
    pagerank: float = 0.0  # personalized PageRank (normalised to the best node = 1)
    surfaced_by: int = 0  # matched nodes among this concept's / intent's evidence
    surface: float = 0.0
    recall_p: float | None = None  # Hou et al. recall probability at query time
    anchors: list[str] = Field(default_factory=list)  # names of the query this node involves
    shared_name: str | None = None  # the rare name it shares with the query or a first hit
    in_period: bool = False  # its event time is in a period the query names ("last week")
    collapsed: list[str] = Field(default_factory=list)  # nodes merged into this item (the
    # facts of the same event, the other revisions of a chain): they cite the same evidence


class ChainLink(BaseModel):
    """One revision of a supersedes chain (oldest first in QueryHit.chain)."""

    model_config = ConfigDict(extra="forbid")

    node_id: str
    kind: NodeKind
    text: str
    ts: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    current: bool = False  # the newest revision (superseded by nothing)


class QueryHit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    node_id: str
    kind: NodeKind
    title: str
    text: str
    score: float
    ts: datetime | None = None
    explanation: Explanation
    event_ids: list[str] = Field(default_factory=list)  # RawEvent ids grounding this node
    chain: list[ChainLink] | None = None


class QueryResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tenant: str
    text: str
    items: list[QueryHit]
    took_ms: float = 0.0


class RecallRequest(BaseModel):
    """Cued recall (Hou et al.): memories whose recall probability reaches the threshold."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=4000)
    threshold: float = Field(default=0.86, ge=0.0, le=1.0)
    limit: int = Field(default=10, ge=1, le=200)
    kinds: list[NodeKind] | None = None
    now: datetime | None = None  # default: the tenant's stream clock
    candidates: int = Field(default=50, ge=1, le=1000)

    @model_validator(mode="after")
    def _aware(self) -> RecallRequest:
        if self.now is not None:
            require_aware(self.now, "now")
        return self


class RecallHit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    node_id: str
    kind: NodeKind
    title: str
    text: str
    p: float  # recall probability before this recall
    relevance: float  # cosine to the cue
    elapsed_days: float  # since the last recall (or encoding)
    consolidation: float  # g_n after this recall
    recalls: int  # recalls including this one
    event_ids: list[str] = Field(default_factory=list)


class RecallResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tenant: str
    text: str
    threshold: float
    now: datetime
    items: list[RecallHit]
