"""The k items of a query: every slot spends the budget on evidence the other slots lack.

An agent asks for k memories and cites what comes back, so k is its context budget:

- **collapse**: an EVENT and the FACTs extracted from it cite the same event, so they are one
  item, the best-scoring node, with the others in its explanation (``collapsed``). A supersedes
  chain is one item too, citing its revisions, shown as the revision the query matched best.
- **diversity** (MMR): an item is penalised by its highest cosine to the items already chosen,
  above a floor, so near-duplicates give way to the next distinct piece of evidence.
- **new evidence**: an item whose citations are all cited already takes no slot; a CONCEPT or
  INTENT takes one only for the events it cites that neither the chosen items nor the event
  items still to come within the budget cite, and only when their worth (each event's best
  score as an item of its own) is more than that of the event item it pushes out of the k.

When the candidates run out before k distinct items, the skipped ones fill the rest, best first.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from schemas.graph import NodeKind
from topologies.read.evidence import SURFACED_KINDS
from topologies.vector_index import Vector


@dataclass
class Group:
    """One candidate item: a node, or an event with the facts it grounds, or a chain."""

    key: str  # what makes two candidates the same item (the cited event, the chain, the node)
    node_id: str  # the best-scoring member, shown as the item
    kind: NodeKind
    score: float
    cites: list[str]  # RawEvent ids, in order
    members: list[str] = field(default_factory=list)  # the other nodes collapsed into it
    chained: bool = False
    direct: float = 0.0  # the shown member's own match of the query


@dataclass(frozen=True)
class Candidate:
    node_id: str
    kind: NodeKind
    score: float
    cites: list[str]
    chain_key: str | None = None  # the chain's oldest node, when the node has one
    direct: float = 0.0  # how well the node itself matched the query (fused retrieval score)


def collapse(candidates: Sequence[Candidate]) -> list[Group]:
    """Candidates (best first) grouped by chain, or by their first cited event (EVENT, FACT);
    CONCEPT and INTENT nodes stay items of their own."""
    groups: dict[str, Group] = {}
    for cand in candidates:
        if cand.chain_key is not None:
            key = f"chain:{cand.chain_key}"
        elif cand.kind in SURFACED_KINDS or not cand.cites:
            key = f"node:{cand.node_id}"
        else:
            key = f"event:{cand.cites[0]}"
        group = groups.get(key)
        if group is None:
            groups[key] = Group(
                key,
                cand.node_id,
                cand.kind,
                cand.score,
                list(cand.cites),
                chained=cand.chain_key is not None,
                direct=cand.direct,
            )
        elif group.chained and cand.direct > group.direct:
            # a chain is shown as the revision the query itself matched best
            group.members.append(group.node_id)
            group.node_id, group.kind, group.direct = cand.node_id, cand.kind, cand.direct
            group.cites[:0] = [c for c in cand.cites if c not in group.cites]
        else:
            group.members.append(cand.node_id)
            group.cites.extend(c for c in cand.cites if c not in group.cites)
    return list(groups.values())


def choose(
    groups: Sequence[Group],
    k: int,
    vector: Callable[[str], Vector | None],
    mmr_weight: float,
    mmr_floor: float,
) -> list[Group]:
    """Greedy: the best MMR score among the groups left that brings new evidence.

    Lazy: a group's MMR penalty only grows as items are chosen, so its last computed score
    bounds its score now; vectors are looked up only for the groups that reach the top."""
    if not groups or k <= 0:
        return []
    top = max(g.score for g in groups) or 1.0
    worth: dict[str, float] = {}  # an event's best score as an item of its own
    for group in groups:
        if group.kind not in SURFACED_KINDS and group.cites:
            worth.setdefault(group.cites[0], group.score)
    diverse = _Diversity(groups, vector, mmr_weight, mmr_floor)
    heap = [(-g.score / top, i) for i, g in enumerate(groups)]  # already in heap order
    done: set[int] = set()
    chosen: list[int] = []
    skipped: list[int] = []
    covered: set[str] = set()
    while heap and len(chosen) < k:
        bound, pick = heapq.heappop(heap)
        group = groups[pick]
        new = [c for c in group.cites if c not in covered]
        if group.kind in SURFACED_KINDS and new:
            left = [i for i in range(len(groups)) if i not in done and i != pick]
            upcoming, pushed_out = _upcoming(groups, left, k - len(chosen))
            new = [c for c in new if c not in upcoming]
            if sum(worth.get(c, 0.0) for c in new) <= pushed_out:
                new = []
        if not new and group.cites:
            done.add(pick)
            skipped.append(pick)
            continue
        current = group.score / top - diverse.penalty(pick, chosen)
        if heap and current < -heap[0][0] and current < -bound:
            heapq.heappush(heap, (-current, pick))  # fell behind the next one: look again
            continue
        done.add(pick)
        chosen.append(pick)
        covered.update(group.cites)
    for pick in sorted(skipped, key=lambda i: -groups[i].score):
        if len(chosen) >= k:
            break
        chosen.append(pick)
    return [groups[i] for i in chosen]


class _Diversity:
    """MMR penalty: weight x how far the highest cosine to a chosen item exceeds the floor."""

    def __init__(
        self,
        groups: Sequence[Group],
        vector: Callable[[str], Vector | None],
        weight: float,
        floor: float,
    ) -> None:
        self.groups = groups
        self.vector = vector
        self.weight = weight
        self.floor = floor
        self._vecs: dict[int, Vector | None] = {}

    def _vec(self, i: int) -> Vector | None:
        if i not in self._vecs:
            self._vecs[i] = self.vector(self.groups[i].node_id)
        return self._vecs[i]

    def penalty(self, i: int, chosen: list[int]) -> float:
        if self.weight <= 0.0 or not chosen:
            return 0.0
        vec = self._vec(i)
        if vec is None:
            return 0.0
        best = 0.0
        for j in chosen:
            other = self._vec(j)
            if other is not None:
                # a plain dot product: tiny vectors, where BLAS threads only contend
                best = max(best, float(np.dot(vec, other)))
        return self.weight * max(0.0, best - self.floor) / (1.0 - self.floor)


def _upcoming(groups: Sequence[Group], left: list[int], slots: int) -> tuple[set[str], float]:
    """Events cited by the next ``slots - 1`` event items (not concepts) in score order, and
    the score of the event item after them: the one a concept in this slot pushes out."""
    found: set[str] = set()
    taken = 0
    for i in left:
        group = groups[i]
        if group.kind in SURFACED_KINDS:
            continue
        if taken >= slots - 1:
            return found, group.score
        found.update(group.cites)
        taken += 1
    return found, 0.0
