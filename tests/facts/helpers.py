"""A stance revised five times over seven months (DCPM's fitness example), plus noise."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from schemas.events import RawEvent
from schemas.plans import UpdatePlan
from topologies.config import EngineConfig
from topologies.embedding import Embedder
from topologies.engine import FoldEngine
from topologies.facts.step import FactStep
from topologies.heuristic_planner import HeuristicPlanner
from topologies.planner import PlanRequest

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

REVISIONS = [
    "I love group fitness classes because working out with others pushes me to new milestones.",
    "Lately I prefer working out alone, group classes feel too competitive for me now.",
    "I'm back to Zumba classes on Thursdays, the new instructor made them fun again.",
    "I now think Zumba is best as a birthday treat with friends rather than a weekly habit.",
    "I now prefer hiking over fitness classes, welcoming interactive settings suit me more "
    "than competitive ones.",
]
NOISE = [
    "The quarterly report for the Hamburg client went out on Monday morning.",
    "Picked up the parcel from the post office near the station after work.",
    "The heating engineer will replace the boiler valve in the flat next week.",
    "Our team retro moved the sprint review to the large meeting room upstairs.",
]


class NoopPlanner:
    name = "noop"

    async def plan(self, request: PlanRequest) -> UpdatePlan:
        return UpdatePlan(planner=self.name)


def stance_stream(tenant: str = "alice") -> list[RawEvent]:
    """Five revisions ~45 days apart, each followed by an unrelated note."""
    events = []
    for i, text in enumerate(REVISIONS):
        ts = T0 + timedelta(days=45 * i)
        events.append(
            RawEvent(
                id=f"stance-{i}",
                tenant=tenant,
                source="chat",
                ts=ts,
                title="chat with assistant",
                body=text,
            )
        )
        events.append(
            RawEvent(
                id=f"noise-{i}",
                tenant=tenant,
                source="note",
                ts=ts + timedelta(days=3),
                title="note",
                body=NOISE[i % len(NOISE)],
            )
        )
    return events


def engine(embedder: Embedder, heuristic: bool = True, facts: FactStep | None = None) -> FoldEngine:
    config = EngineConfig()
    planner = HeuristicPlanner(embedder, config) if heuristic else NoopPlanner()
    return FoldEngine(embedder, planner, config, facts=facts)
