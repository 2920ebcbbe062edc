"""What the graph may lift: a node no better matched than the hit that led to it never
outranks that hit.

Expansion, PageRank, the second hop and surfacing all say one thing of a node: it is near a
hit. None says it answers the query better than that hit. A node with weaker evidence of its
own (its retrieval strength, or the share of a hit a second hop gave it) than its *leader*
(the seed its expansion came from, the hit whose name it shares, the seeds that surfaced it)
is therefore held to its leader:

- its PageRank is at most the PageRank of the seed its expansion came from. Mass that piles
  up in a tight cluster beside a hit (a friend's chats, all linked to each other) is the
  cluster's shape, not evidence;
- its score is just below its best leader's at most. Leaders are settled first (strongest
  evidence first), so a chain (hit -> hopped event -> its neighbour) stays in order.

A node already stronger on its own evidence than what led to it keeps what it has.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from topologies.read.entities import Hop
from topologies.read.expansion import Expansion

Leaders = dict[str, set[str]]


def leaders(
    expansion: Expansion,
    hopped: Mapping[str, Hop],
    surfaced: Mapping[str, Iterable[tuple[str, float]]],
    evidence: Mapping[str, float],
) -> Leaders:
    """node id -> the nodes that led to it with stronger evidence than its own."""
    found: Leaders = {}

    def add(node_id: str, leader: str) -> None:
        if leader != node_id and evidence.get(leader, 0.0) > evidence.get(node_id, 0.0):
            found.setdefault(node_id, set()).add(leader)

    for node_id, origin in expansion.via.items():
        add(node_id, origin)
    for node_id, hop in hopped.items():
        if hop.origin is not None:
            add(node_id, hop.origin)
    for node_id, support in surfaced.items():
        for seed, _ in support:
            add(node_id, seed)
    return found


def held(
    values: Mapping[str, float],
    led: Leaders,
    evidence: Mapping[str, float],
    chained: bool = True,
) -> dict[str, float]:
    """``values`` (a score, a PageRank) with each led node held just below its best leader's
    value: the leader's value as held itself (``chained``; leaders first, strongest evidence
    first) or as it came. A node the signal did not reach stays unreached."""
    out = dict(values)
    limits = out if chained else values
    for node_id in sorted(led, key=lambda n: (-evidence.get(n, 0.0), n)):
        value = out.get(node_id)
        if value is None:
            continue
        limit = max((limits.get(leader, 0.0) for leader in led[node_id]), default=0.0)
        if value >= limit:
            out[node_id] = math.nextafter(limit, 0.0)
    return out
