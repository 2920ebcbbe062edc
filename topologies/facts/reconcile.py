"""Reconciliation (DCPM System 1, step iii): ADD, SUPERSEDE, UPDATE or exact duplicate.

Each extracted item is compared with its k = 5 nearest FACT items (``memory.indexes["FACT"]``).
A hit that is an old revision stands for its chain head (the current belief), found in
O(chain length). Rules, first match wins:

1. **Duplicate**: the item's normalised text equals a head's -> nothing is written.
2. **Same key** (``identity:home_city``, ``stance:fitness``, ``attr:x``): equal value ->
   UPDATE (reinforce, keep the longer wording); changed value -> SUPERSEDE.
3. **Keyed item, unkeyed match**: a head of the same item kind whose cosine is at least
   ``revision_similarity`` (when the sentence carries a revision marker) or
   ``same_subject_similarity`` -> SUPERSEDE.
4. **Near-identical** (cosine >= ``update_similarity``) -> UPDATE.
5. Otherwise ADD.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from schemas.graph import Node
from topologies.facts.chains import head_of
from topologies.facts.extract import ExtractedItem, normalise
from topologies.memory import TenantMemory
from topologies.vector_index import Vector

Op = Literal["ADD", "SUPERSEDE", "UPDATE", "DUPLICATE"]


@dataclass(frozen=True)
class ReconcileConfig:
    k: int = 5
    update_similarity: float = 0.93
    same_subject_similarity: float = 0.80
    revision_similarity: float = 0.55


@dataclass(frozen=True)
class Decision:
    op: Op
    target: str | None = None  # the head superseded / updated / duplicated
    similarity: float = 0.0
    rule: str = ""


def _candidates(
    memory: TenantMemory, vector: Vector, k: int, exclude: set[str]
) -> list[tuple[Node, float]]:
    index = memory.indexes["FACT"]
    heads: dict[str, tuple[Node, float]] = {}
    for node_id, _ in index.search(vector, k, exclude=exclude or None):
        if memory.graph.get(node_id) is None:
            continue
        head = head_of(memory, node_id)
        if head.id in heads or head.id in exclude:
            continue
        head_vec = index.get(head.id)
        sim = float(np.dot(head_vec, vector)) if head_vec is not None else 0.0
        heads[head.id] = (head, sim)
    return sorted(heads.values(), key=lambda pair: -pair[1])


def reconcile(
    memory: TenantMemory,
    item: ExtractedItem,
    vector: Vector,
    config: ReconcileConfig | None = None,
    exclude: set[str] | None = None,
) -> Decision:
    """Decide what to do with one item; reads memory, never writes."""
    cfg = config or ReconcileConfig()
    candidates = _candidates(memory, vector, cfg.k, exclude or set())
    norm = normalise(item.text)
    for head, sim in candidates:
        if normalise(head.text) == norm:
            return Decision("DUPLICATE", head.id, sim, "exact")
    if item.key:
        for head, sim in candidates:
            if head.attrs.get("key") == item.key:
                if head.attrs.get("value") == item.value:
                    return Decision("UPDATE", head.id, sim, "same key, same value")
                return Decision("SUPERSEDE", head.id, sim, "same key, new value")
        threshold = cfg.revision_similarity if item.revision else cfg.same_subject_similarity
        for head, sim in candidates:
            if head.attrs.get("item_kind") == item.kind and sim >= threshold:
                return Decision("SUPERSEDE", head.id, sim, "same kind, similar subject")
    for head, sim in candidates:
        if sim >= cfg.update_similarity and head.attrs.get("key") in (None, item.key):
            return Decision("UPDATE", head.id, sim, "near-identical")
    return Decision("ADD", None, candidates[0][1] if candidates else 0.0, "novel")
