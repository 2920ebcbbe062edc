"""Read-path parameters (SPEC section 4). Defaults are the values the benchmarks settled on
(tuned on the first five LoCoMo conversations; docs/read_path.md)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ReadConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # retrieval
    candidates: int = 60  # hits fetched per retriever before fusion
    rrf_k: int = 60
    bm25_weight: float = 1.0
    dense_weight: float = 0.1  # MiniLM trails BM25 on LoCoMo; 1:1 fusion hurt (docs/read_path.md)
    dense_min_cosine: float = 0.1  # dense hits below this are noise, not evidence
    feedback_weight: float = 0.3  # RRF weight of the pseudo-relevance-feedback dense search
    feedback_hits: int = 3  # first fused hits whose centroid moves the query vector (was 5)
    rank_decay: float = 1.0  # strength of the fused hit at rank r: 1 / (1 + (r - 1) * decay)
    # names: a name in more events than this is "common" (a speaker of every turn): it is
    # dropped from the BM25 query and links nothing; rarer names link events (the second hop)
    entity_max_postings: int = 16
    # an EVENT / FACT involving the query's names: x (1 + boost x share); a person named in the
    # query is asked about, so their own events come first (2 and 5 ranked worse on LoCoMo)
    entity_boost: float = 10.0
    mention_weight: float = 0.2  # a name only mentioned in the text counts this much (vs 1)
    entity_hop_weight: float = 0.3  # events sharing a rare name with the query / first hits
    entity_hits: int = 5  # first hits whose names are followed
    # periods the query names ("last week", "in May 2023"), against the stream clock
    time_weight: float = 1.0  # RRF weight of the sub-query over the events of those periods
    time_boost: float = 1.0  # an EVENT / FACT in such a period: x (1 + boost)
    time_slack: float = 1.0  # ... or told within this share of the period after it (>= 1 day)
    # graph expansion
    seeds: int = 20  # top fused hits that seed the expansion
    max_hops: int = 2
    hop_decay: float = 0.5  # per-hop multiplier of the BFS score
    max_fanout: int = 16  # edges followed per node (strongest first)
    max_subgraph: int = 250  # nodes in the expansion subgraph (400 ranked the same, slower)
    expansion_weight: float = 0.5
    pagerank_weight: float = 0.8  # was 0.4; issue 16's second round (docs/read_path.md)
    pagerank_alpha: float = 0.85
    decay_per_day: float = 0.02  # edge weight decay, same lambda as consolidation
    # temporal contiguity: implicit links between events adjacent in the stream
    contiguity: bool = True
    contiguity_gap_minutes: float = 30.0
    contiguity_weight: float = 0.5  # edge weight of an implicit contiguity link
    # surfaced concepts / intents
    surface_weight: float = 0.6
    # citations
    evidence_depth: int = 2
    surfaced_cites: int = 2  # events a concept / intent item cites (its most relevant evidence)
    # items (select.py): candidates looked at; MMR penalty above a cosine floor (near-duplicates)
    select_factor: int = 3  # the best select_factor * k + select_extra candidates
    select_extra: int = 20
    mmr_weight: float = 1.0
    mmr_floor: float = 0.9
    # recall model (Hou et al.)
    recall_g0: float = Field(default=1.0, gt=0.0)  # initial consolidation, days
    recall_history: int = 8  # recall times kept per node
