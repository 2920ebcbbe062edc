"""Topic space: where the heuristic planner and consolidation decide which events belong together.

One person's events share a register and a background (their job, their city, the people they
write to), so raw sentence embeddings of two unrelated events of the same stream are already
similar (MiniLM: about 0.2-0.3 on the CogEval scenarios, against 0.35-0.48 for two events of one
theme). Sentence embeddings are also anisotropic: they share a common direction whatever the
text. Removing the common component (Mu and Viswanath, "All-but-the-top", 2018; Su et al.,
"Whitening sentence representations", 2021) makes the differences between themes count.

- **Background**: a running mean of the tenant's event vectors, ``mu <- mu + (v - mu) / n``
  with ``n`` capped at ``background_horizon`` (a plain mean at first, then an exponential
  moving average over about that many events, so it follows a person whose life changes).
  Stored in ``memory.meta`` (base64 float32), updated once per ingested event: O(dim).
- **Topic vector** of an event: ``normalize(v - background_weight * mu)``, computed at ingest
  with the background of that moment (the events before it); it is what the POOL index holds.
- **Centroid** of a concept: the normalised mean of its member events' topic vectors, in the
  TOPIC index under the concept id, with its member count in ``attrs["topic_members"]``.
  Updated when an EVENT gets a GROUNDS/REINFORCES edge to the concept (``add_member``, called
  by the executor for every planner), combined on merge, recomputed on split. A concept that
  has no centroid yet (one written by an LLM plan, or by a version before this module) gets
  one from its most recent members when it is first needed (``centroid``).

Every read here is bounded: members are read newest first, at most ``MAX_MEMBERS``.
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Iterator

import numpy as np

from schemas.graph import EdgeKind, NodeKind
from topologies.config import TopicConfig
from topologies.memory import POOL, TOPIC, TenantMemory
from topologies.vector_index import Vector, normalize

BACKGROUND_KEY = "topic_background"
MEMBERS_ATTR = "topic_members"
NORM_ATTR = "topic_norm"
MAX_MEMBERS = 48  # member events read when a centroid is (re)computed or a concept split
MEMBER_EDGES = (EdgeKind.GROUNDS, EdgeKind.REINFORCES)


# ------------------------------------------------------------------ background
def background(memory: TenantMemory) -> tuple[Vector | None, int]:
    """The tenant's background mean (unnormalised) and the number of events behind it."""
    stored = memory.meta.get(BACKGROUND_KEY)
    if not stored:
        return None, 0
    vec = np.frombuffer(base64.b64decode(stored["v"]), dtype=np.float32)
    if vec.shape[0] != memory.dim:
        return None, 0
    return vec.copy(), int(stored["n"])


def observe(
    memory: TenantMemory, vector: Vector, config: TopicConfig, source: Vector | None = None
) -> Vector:
    """Fold one event vector into the background; return the event's topic vector (computed
    against the background before this event, so a stream's first event is not centred on
    itself) from ``source``, the vector its topic is formed from when that is not its
    embedding (a direct message whose correspondent's name counts less:
    ``topologies/correspondents.py``)."""
    mean, count = background(memory)
    topic = center(vector if source is None else source, mean, count, config)
    count = min(count + 1, config.background_horizon)
    raw = np.asarray(vector, dtype=np.float32).reshape(-1)
    mean = raw.copy() if mean is None else mean + (raw - mean) / float(count)
    encoded = base64.b64encode(mean.astype(np.float32).tobytes()).decode("ascii")
    memory.set_meta(BACKGROUND_KEY, {"n": count, "v": encoded})
    return topic


def center(vector: Vector, mean: Vector | None, count: int, config: TopicConfig) -> Vector:
    """The topic vector ``normalize(v - background_weight * mean)``; the raw direction while
    the background rests on fewer than two events (one event is no background)."""
    raw = np.asarray(vector, dtype=np.float32).reshape(-1)
    if mean is None or count < 2:
        return normalize(raw)
    shifted = raw - config.background_weight * mean
    return normalize(shifted if float(np.linalg.norm(shifted)) > 1e-6 else raw)


def event_topic(memory: TenantMemory, event_id: str, config: TopicConfig) -> Vector | None:
    """An event's topic vector: the one computed at ingest while it is in the POOL, else its
    embedding centred on the current background."""
    return event_topics(memory, [event_id], config)[0]


def event_topics(
    memory: TenantMemory, event_ids: list[str], config: TopicConfig
) -> list[Vector | None]:
    """``event_topic`` of several events, the background decoded once: a split reads the
    topic vectors of a concept's latest members, most of which have left the POOL."""
    pool, embedded = memory.index(POOL), memory.index(NodeKind.EVENT)
    behind: tuple[Vector | None, int] | None = None  # the background, once one is needed
    out: list[Vector | None] = []
    for event_id in event_ids:
        vector = pool.get(event_id)
        raw = embedded.get(event_id) if vector is None else None
        if raw is not None:
            if behind is None:
                behind = background(memory)
            vector = center(raw, *behind, config)
        out.append(vector)
    return out


# ------------------------------------------------------------------- centroids
def member_events(memory: TenantMemory, concept_id: str, limit: int = MAX_MEMBERS) -> list[str]:
    """EVENT ids grounding or reinforcing the concept, the latest by event time first (read
    among the ``limit`` most recently attached of each edge kind); read again only when the
    concept's edges or the events' times change (``EdgeCache.members``)."""
    return memory.edge_cache.members(
        memory.graph, concept_id, limit, lambda: _read_members(memory, concept_id, limit)
    )


def _read_members(memory: TenantMemory, concept_id: str, limit: int) -> tuple[list[str], bool]:
    """``member_events`` read from the graph, and whether the times stamp follows its order
    (every member has an event time: a member ordered by its creation time has none)."""
    graph = memory.graph
    events = graph.ids(NodeKind.EVENT)
    seen: dict[str, None] = {}
    for kind in MEMBER_EDGES:
        for src in graph.recent_sources(concept_id, kind, limit):
            if src in events:
                seen.setdefault(src, None)
    nodes = [graph.node(e) for e in seen]
    nodes.sort(key=lambda n: (n.ts or n.created_at, n.id), reverse=True)
    return [n.id for n in nodes[:limit]], all(n.ts is not None for n in nodes)


def centroid(memory: TenantMemory, concept_id: str, config: TopicConfig) -> Vector | None:
    """The stored centroid, or one computed from the most recent members (not stored)."""
    stored = memory.index(TOPIC).get(concept_id)
    if stored is not None:
        return stored
    vectors = list(_member_vectors(memory, member_events(memory, concept_id), config))
    return normalize(np.mean(vectors, axis=0)) if vectors else None


def add_member(memory: TenantMemory, concept_id: str, event_id: str, config: TopicConfig) -> None:
    """Move the concept's centroid towards a new member (a running mean of topic vectors)."""
    vector = event_topic(memory, event_id, config)
    if vector is None:
        return
    node = memory.graph.node(concept_id)
    current = memory.index(TOPIC).get(concept_id)
    count = int(node.attrs.get(MEMBERS_ATTR, 0))
    if current is None or count <= 0:
        others = [m for m in member_events(memory, concept_id) if m != event_id]
        vectors = [*_member_vectors(memory, others, config), vector]
        _store(memory, concept_id, np.sum(vectors, axis=0), len(vectors))
        return
    norm = float(node.attrs.get(NORM_ATTR, 1.0))
    _store(memory, concept_id, current * (norm * count) + vector, count + 1)


def recompute(memory: TenantMemory, concept_id: str, config: TopicConfig) -> None:
    """Rebuild a centroid from the members the concept has now (after a split or a deletion)."""
    if memory.graph.get(concept_id) is None:
        memory.index(TOPIC).remove(concept_id)
        return
    vectors = list(_member_vectors(memory, member_events(memory, concept_id), config))
    if vectors:
        _store(memory, concept_id, np.sum(vectors, axis=0), len(vectors))
    else:
        memory.index(TOPIC).remove(concept_id)


def merge_centroids(memory: TenantMemory, keep: str, absorbed: str) -> None:
    """The keeper's centroid becomes the member-weighted mean of both (before the absorbed
    node is removed)."""
    graph = memory.graph
    index = memory.index(TOPIC)
    total, count = np.zeros(memory.dim, dtype=np.float32), 0
    for node_id in (keep, absorbed):
        node, vec = graph.node(node_id), index.get(node_id)
        if vec is None:
            continue
        n = max(1, int(node.attrs.get(MEMBERS_ATTR, 0)))
        total += vec * (float(node.attrs.get(NORM_ATTR, 1.0)) * n)
        count += n
    index.remove(absorbed)
    if count:
        _store(memory, keep, total, count)


def _store(memory: TenantMemory, concept_id: str, total: Vector, count: int) -> None:
    """Centroid direction in the TOPIC index; member count and the mean's norm in attrs (the
    norm weighs the running mean right: the mean of unit vectors is shorter than one)."""
    mean = np.asarray(total, dtype=np.float32) / float(count)
    memory.index(TOPIC).upsert(concept_id, mean)
    node = memory.graph.node(concept_id)
    attrs = {**node.attrs, MEMBERS_ATTR: count, NORM_ATTR: round(float(np.linalg.norm(mean)), 6)}
    memory.graph.replace_node(node.model_copy(update={"attrs": attrs}))


def _member_vectors(
    memory: TenantMemory, events: list[str], config: TopicConfig
) -> Iterator[Vector]:
    for event_id in itertools.islice(events, MAX_MEMBERS):
        vector = event_topic(memory, event_id, config)
        if vector is not None:
            yield vector
