"""Node kinds and time filters ("as of", "between") on event time and belief validity."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from schemas.graph import Node, NodeKind
from schemas.query import TimeRange
from topologies.read.chains import overlaps, valid_at

DEFAULT_KINDS = frozenset({NodeKind.EVENT, NodeKind.FACT, NodeKind.CONCEPT, NodeKind.INTENT})


def time_filter(as_of: datetime | None, between: TimeRange | None) -> Callable[[Node], bool]:
    """EVENT: event time; other kinds: first evidence time and validity interval."""

    def ok(node: Node) -> bool:
        when = node.ts or node.created_at
        if as_of is not None:
            if when > as_of:
                return False
            if node.kind != NodeKind.EVENT and not valid_at(node, as_of):
                return False
        if between is not None:
            if node.kind == NodeKind.EVENT or (node.valid_from is None and node.valid_to is None):
                if not between.start <= when <= between.end:
                    return False
            elif not overlaps(node, between.start, between.end):
                return False
        return True

    return ok


def kinds_filter(kinds: list[NodeKind] | None) -> frozenset[NodeKind]:
    return frozenset(kinds) if kinds else DEFAULT_KINDS
