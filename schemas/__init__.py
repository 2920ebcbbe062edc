"""Wire contracts of foldmem (pydantic v2). No I/O lives here."""

from schemas.errors import FoldmemError
from schemas.events import SCHEMA_VERSION, RawEvent
from schemas.graph import EDGE_PRIOR_WEIGHT, EDGE_RULES, Edge, EdgeKind, Node, NodeKind
from schemas.intents import Intent, IntentMessage, IntentStatus
from schemas.plans import (
    AddEdge,
    AddNode,
    MergeNodes,
    PlanOp,
    RemoveNode,
    UpdateNode,
    UpdatePlan,
)

__all__ = [
    "EDGE_PRIOR_WEIGHT",
    "EDGE_RULES",
    "SCHEMA_VERSION",
    "AddEdge",
    "AddNode",
    "Edge",
    "EdgeKind",
    "FoldmemError",
    "Intent",
    "IntentMessage",
    "IntentStatus",
    "MergeNodes",
    "Node",
    "NodeKind",
    "PlanOp",
    "RawEvent",
    "RemoveNode",
    "UpdateNode",
    "UpdatePlan",
]
