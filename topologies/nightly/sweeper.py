"""Phase 3: the cross-domain sweeper (DCPM Eq. 1) and core-schema induction.

For every schema (non-core CONCEPT with a specific life domain): E_sem is its stored vector
(title + text), E_beh the embedding of its behavioural description (built from the texts of
its evidence, see :mod:`topologies.nightly.behaviour`). A pair from different domains collides
when ``cos(E_beh) >= theta_beh`` and ``cos(E_sem) <= theta_sem``. Collisions are grouped with
union-find; each group gets one core schema (``CONCEPT core=True``) with ``member -PART_OF->
core`` edges. A group that already contains members of a core schema extends that core schema
instead of making a new one, so core schemas evolve across nights.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from schemas.graph import EdgeKind, Node, NodeKind
from topologies.embedding import Embedder
from topologies.memory import TenantMemory
from topologies.nightly.behaviour import GENERIC_DOMAINS, behaviour_description, domain_of


@dataclass(frozen=True)
class SweepConfig:
    theta_beh: float = 0.72
    theta_sem: float = 0.40
    max_schemas: int = 600  # pairs grow quadratically: most reinforced schemas first
    evidence_texts: int = 24  # texts read per schema for its behavioural description


@dataclass
class SchemaView:
    node: Node
    domain: str
    behaviour: str
    e_sem: np.ndarray
    e_beh: np.ndarray


@dataclass
class Collision:
    a: str
    b: str
    cos_beh: float
    cos_sem: float


@dataclass
class CoreGroup:
    members: list[str]
    existing_core: str | None
    behaviour: str
    domains: list[str] = field(default_factory=list)


class UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        root = x
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[x] != root:  # path compression
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def groups(self) -> list[list[str]]:
        out: dict[str, list[str]] = {}
        for x in self.parent:
            out.setdefault(self.find(x), []).append(x)
        return [sorted(g) for g in out.values() if len(g) > 1]


def evidence_texts(memory: TenantMemory, node_id: str, limit: int) -> list[str]:
    texts = []
    for edge in memory.graph.in_edges(node_id):
        if edge.kind in (EdgeKind.GROUNDS, EdgeKind.REINFORCES):
            src = memory.graph.get(edge.src)
            if src is not None and src.kind in (NodeKind.FACT, NodeKind.EVENT):
                texts.append(src.embed_text)
        if len(texts) >= limit:
            break
    return texts


def schema_views(memory: TenantMemory, embedder: Embedder, config: SweepConfig) -> list[SchemaView]:
    candidates = [n for n in memory.graph.nodes(NodeKind.CONCEPT) if not n.core]
    candidates.sort(key=lambda n: (-n.reinforcement, n.id))
    pending: list[tuple[Node, str, str, np.ndarray]] = []
    for node in candidates[: config.max_schemas]:
        e_sem = memory.indexes["CONCEPT"].get(node.id)
        if e_sem is None:
            continue
        texts = evidence_texts(memory, node.id, config.evidence_texts) or [node.embed_text]
        domain = domain_of(node.category, [node.embed_text, *texts])
        if domain in GENERIC_DOMAINS:
            continue
        behaviour = behaviour_description(texts)
        if behaviour:
            pending.append((node, domain, behaviour, e_sem))
    if not pending:
        return []
    e_beh = embedder.embed([p[2] for p in pending])
    return [SchemaView(n, d, b, s, e_beh[i]) for i, (n, d, b, s) in enumerate(pending)]


def collisions(views: list[SchemaView], config: SweepConfig) -> list[Collision]:
    found = []
    for a, b in combinations(views, 2):
        if a.domain == b.domain:
            continue
        cos_beh = float(np.dot(a.e_beh, b.e_beh))
        if cos_beh < config.theta_beh:
            continue
        cos_sem = float(np.dot(a.e_sem, b.e_sem))
        if cos_sem <= config.theta_sem:
            found.append(Collision(a.node.id, b.node.id, round(cos_beh, 4), round(cos_sem, 4)))
    return found


def core_groups(
    memory: TenantMemory, views: list[SchemaView], found: list[Collision]
) -> list[CoreGroup]:
    uf = UnionFind()
    for c in found:
        uf.union(c.a, c.b)
    by_id = {v.node.id: v for v in views}
    groups = []
    for members in uf.groups():
        cores = sorted(
            {
                e.dst
                for m in members
                for e in memory.graph.out_edges(m, EdgeKind.PART_OF)
                if (target := memory.graph.get(e.dst)) is not None and target.core
            }
        )
        tags: dict[str, int] = {}
        for m in members:
            tags[by_id[m].behaviour] = tags.get(by_id[m].behaviour, 0) + 1
        behaviour = sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        domains = sorted({by_id[m].domain for m in members})
        groups.append(CoreGroup(members, cores[0] if cores else None, behaviour, domains))
    return groups
