"""Engine parameters, one tree (docs/DESIGN.md sections 3 to 8), built by stream_app.settings
or by tests."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

DECAY_PER_DAY = 0.02  # default of ConsolidationConfig.decay_per_day


class ContextConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    knn: int = 8  # kNN per embedded kind
    max_candidates: int = 120  # cap on the neighbourhood expanded around kNN hits
    max_fanout: int = 12  # edges followed per node when expanding (strongest first)
    immediate: int = 5
    working: int = 12
    background: int = 8
    recency_tau_days: float = 7.0  # Ebbinghaus kernel exp(-dt/tau)
    urgency_horizon_days: float = 14.0
    pagerank_alpha: float = 0.85


class ConsolidationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    merge_similarity: float = 0.86  # concepts above this cosine merge (compression)
    near_duplicate_title: float = 0.88  # ADD_NODE concept this close to one -> reinforcement
    # lambda of w(t) = w0 * exp(-lambda * dt): the one decay rate of the memory's edges, used by
    # consolidation, the fold's context, emergence and the read path
    decay_per_day: float = DECAY_PER_DAY
    prune_floor: float = 0.05  # edges below this weight are pruned by the periodic sweep
    completion_k: int = 3
    completion_similarity: float = 0.45
    reinforce_boost: float = 0.2  # w0 increment on reinforcement (capped at max_weight)
    max_weight: float = 3.0


class IntentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    initial_threshold: float = 3.0
    ema_beta: float = 0.3
    min_supporting_concepts: int = 2
    window_days: float = 21.0  # evidence older than this counts little
    min_threshold: float = 1.5
    max_threshold: float = 12.0
    # topologies/intent_boundaries.py: goals only, one intent per goal, stale ones expire
    goal_min_score: float = 1.0  # GoalEvidence.score a cluster needs to become an intent
    duplicate_overlap: float = 0.5  # share of evidence on an intent's concepts: same goal
    # a concept supports a goal only when its members are about the same thing as the goal's
    # own concepts: topic-centroid cosine (topologies/topics.py; for MiniLM one theme's events
    # score 0.35-0.6, two themes of one person 0.0-0.25): an association alone is not enough
    support_similarity: float = 0.2
    stale_after_days: float = 30.0  # pending with no new goal evidence this long: expired
    deadline_grace_days: float = 7.0  # pending this long past its deadline: expired


class TopicConfig(BaseModel):
    """Topic space and concept boundaries (topologies/topics.py, topologies/boundaries.py).

    Similarities here are between topic vectors (event embeddings with part of the tenant's
    background removed), not raw embeddings: for MiniLM, two events of one theme score about
    0.35-0.6 there and two events of different themes of one person about 0.0-0.25.
    """

    model_config = ConfigDict(extra="forbid")

    background_weight: float = Field(default=0.5, ge=0.0, le=1.0)  # share of the mean removed
    background_horizon: int = Field(default=500, ge=1)  # events the running mean spans
    merge_similarity: float = 0.6  # concepts whose centroids reach this merge (converged)
    merge_min_members: int = 3  # ... when both have this many members (one shared event
    # makes two concepts' centroids equal without their themes being one)
    # ... or reach this one when most members of the smaller one (more than code_merge_share)
    # name a ticket or a mail thread that members of the other name: one matter written in two
    # registers (a channel's chat, the mails and notes about the same tickets;
    # boundaries.code_share)
    code_merge_similarity: float = 0.45
    code_merge_share: float = Field(default=0.5, ge=0.0, lt=1.0)
    bridge_similarity: float = 0.3  # an event this close to another concept links the two
    split_min_members: int = 8  # a concept is examined for a split from this many members
    split_min_group: int = 3  # each side of a split keeps at least this many members
    split_similarity: float = 0.35  # split when the two sides' centroids fall below this
    split_every: int = 4  # examine again after this many new members
    # a message headed by its correspondent's name (topologies/correspondents.py): the name
    # counts 1 / (concepts the person's earlier events span) once this many of those events
    # sit in concepts (a younger record: fully) ...
    name_record_min: int = Field(default=8, ge=1)
    # ... unless the person takes part in more than this share of the stream since then.
    # 1.0: never. At 1/3 each speaker of a LoCoMo conversation (half of it) kept the name's
    # whole pull, and its short turns gathered by speaker into folders of moods ("Congrats",
    # 136 of its 138 turns Joanna's); with reactions unfiled (topologies/reactions.py) the
    # name is weighed as anyone's (docs/boundaries.md, round four)
    name_share_max: float = Field(default=1.0, gt=0.0, le=1.0)


class PlanBoundsConfig(BaseModel):
    """What one event's plan may do when a planner wrote it (topologies/plan_bounds.py).

    Cosines between the embedder's unit vectors. Measured on the sample stream folded by the
    heuristic planner with MiniLM (hashing in brackets): pairs of distinct concepts p50 0.20,
    p99 0.50 (0.15, 0.67); a title and its paraphrase 0.74-0.93 (0.52-0.81); "Wire money to
    account ..." against every concept at most 0.21 (0.14); an emerged intent's title against
    its supporting concepts median 0.43 (0.29).
    """

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    merge_similarity: float = 0.55  # MERGE_NODES: each absorbed node this close to the keeper
    rename_similarity: float = 0.45  # UPDATE_NODE title/text: the new text this close to the old
    intent_support_similarity: float = 0.25  # TRIGGERS concept -> intent: close to its title


class AnnConfig(BaseModel):
    """When a vector index leaves the exact scan, and how its inverted file is shaped.

    The number of buckets is ``2 * 2**floor(log2(sqrt(n)))`` (128 at 10k vectors, 256 from
    16,384, 512 from 65,536, 1,024 from 262,144), so a bucket holds between sqrt(n)/2 and
    2*sqrt(n) vectors (78 at 10k, 195 at 100k) and a search, which scans ``nprobe`` buckets,
    grows as sqrt(n), not n. The layout is retrained when the bucket count doubles
    (benchmarks/bench_fold and bench_ann measure what a retrain costs).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_vectors: int = Field(default=10_000, ge=2)  # below this an index is an exact scan
    nprobe: int = Field(default=32, ge=1)  # buckets scanned per search (MiniLM recall@10 0.989)
    train_iterations: int = Field(default=10, ge=1)  # spherical k-means iterations
    train_points_per_list: int = Field(default=64, ge=8)  # k-means sample per bucket
    seed: int = 1234

    def lists_for(self, count: int) -> int:
        if count < self.min_vectors:
            return 0
        return 2 ** math.isqrt(count).bit_length()  # 2 * 2**floor(log2(sqrt(count)))


class ReadConfig(BaseModel):
    """Read-path parameters (topologies/read/). Defaults are the values the benchmarks settled on
    (tuned on the first five LoCoMo conversations; docs/read_path.md). The edges' decay rate is
    the memory's own (``ConsolidationConfig.decay_per_day``), not a read-path setting."""

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
    # a hit's name says nothing of the query: the events it reaches share the hit's strength,
    # and add nothing where the expansion reached them from that hit (False: each takes the
    # hit's whole strength; docs/read_path.md, third round)
    hop_spread: bool = True
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
    pagerank_weight: float = 0.8  # was 0.4; the second retrieval round (docs/read_path.md)
    pagerank_alpha: float = 0.85
    # True: a node the graph lifted with weaker evidence of its own than what led to it (its
    # expansion's seed, the hit whose name it shares, the seeds that surfaced it) ranks below
    # that, with at most its expansion seed's PageRank (topologies/read/lift.py). Off by
    # default: on, the sample showed a fact in place of its event ("leak", "deck") and "when
    # is the race" lost the registration to "Bought gels for the race" (docs/read_path.md,
    # third round)
    graph_cap: bool = False
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


class EngineConfig(BaseModel):
    """Everything the fold needs besides its collaborators (planner, embedder)."""

    model_config = ConfigDict(extra="forbid")

    context: ContextConfig = Field(default_factory=ContextConfig)
    consolidation: ConsolidationConfig = Field(default_factory=ConsolidationConfig)
    intents: IntentConfig = Field(default_factory=IntentConfig)
    topics: TopicConfig = Field(default_factory=TopicConfig)
    ann: AnnConfig = Field(default_factory=AnnConfig)
    bounds: PlanBoundsConfig = Field(default_factory=PlanBoundsConfig)
    read: ReadConfig = Field(default_factory=ReadConfig)  # the read path (topologies/read/)
    # heuristic planner
    # topic-space cosines (topologies/topics.py), tuned for MiniLM on the CogEval scenarios
    assign_similarity: float = 0.35  # event joins the concept whose centroid is this close
    pair_similarity: float = 0.35  # two unassigned events this close seed a new concept
    pool_size: int = 2000  # unassigned events kept for online clustering (most recent)
    # a batch's texts are embedded this many events at a time, the next slice in a worker
    # thread while this one folds (topologies/engine.py, FoldEngine.fold_batch). 64 (a whole
    # batch of the runner's): off. Slices of 16 measured no faster with MiniLM on a loaded
    # 2-core machine and cost 14% more CPU (smaller model calls): README, round two
    embed_slice: int = Field(default=64, ge=1)
    # the tenant's next batch, when its driver knows it, is embedded in a worker thread while
    # this batch folds (FoldEngine.fold_batch's ``ahead``); False: each batch embeds its own
    embed_ahead: bool = True
    # a statement the fact step reads from an event's text is embedded from the text's own
    # model pass where the embedder can (MiniLM: late chunking, the mean of its tokens'
    # states); False: each statement is embedded on its own, a second pass (see
    # topologies/embedding_memo.py)
    statements_in_context: bool = True
    link_window_days: float = 21.0  # entity-overlap links only to events this recent
