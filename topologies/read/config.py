"""Read-path parameters (SPEC section 4). Defaults are the values the benchmarks settled on."""

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
    rank_decay: float = 1.0  # strength of the fused hit at rank r: 1 / (1 + (r - 1) * decay)
    # graph expansion
    seeds: int = 20  # top fused hits that seed the expansion
    max_hops: int = 2
    hop_decay: float = 0.5  # per-hop multiplier of the BFS score
    max_fanout: int = 16  # edges followed per node (strongest first)
    max_subgraph: int = 400  # nodes in the expansion subgraph
    expansion_weight: float = 0.5
    pagerank_weight: float = 0.4
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
    # recall model (Hou et al.)
    recall_g0: float = Field(default=1.0, gt=0.0)  # initial consolidation, days
    recall_history: int = 8  # recall times kept per node
