"""FoldScope: what one fold touched, handed from the executor to consolidation and emergence.

Consolidation and intent emergence look only at the nodes named here (and their bounded
neighbourhoods), which keeps the cost of a fold independent of the size of the graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from schemas.intents import IntentStatus

# an INTENT node's attribute: how many folds changed its title or deadline (its updates'
# message ids count with it)
INTENT_REVISION_ATTR = "revision"


@dataclass
class FoldScope:
    tenant: str
    event_id: str  # RawEvent id ("" for folds not driven by an event, e.g. API status changes)
    event_node_id: str | None
    now: datetime
    touched: set[str] = field(default_factory=set)  # node ids created or changed
    created: set[str] = field(default_factory=set)
    reinforced: set[str] = field(default_factory=set)  # concepts corroborated by this fold
    ref_ids: dict[str, str] = field(default_factory=dict)  # plan ref -> node id
    intent_changes: dict[str, IntentStatus | None] = field(default_factory=dict)  # id -> before
    # id -> (title, deadline) before the first rename of this fold
    intent_renames: dict[str, tuple[str, datetime | None]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def touch(self, node_id: str) -> None:
        self.touched.add(node_id)

    def intent_changed(self, intent_id: str, previous: IntentStatus | None) -> None:
        """Remember the status before the first change of this fold."""
        self.intent_changes.setdefault(intent_id, previous)

    def intent_renamed(self, intent_id: str, title: str, deadline: datetime | None) -> bool:
        """Remember the title and deadline before the first rename of this fold; True the
        first time (the intent's revision counts it)."""
        if intent_id in self.intent_renames:
            return False
        self.intent_renames[intent_id] = (title, deadline)
        return True
