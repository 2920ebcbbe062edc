"""The contract of a hub: a deployment's tenant memories as the API, the CLI and the MCP
server see them. :class:`stream_app.embedded.hub.MemoryHub` (one SQLite store) and
:class:`stream_app.kafka.hub.KafkaHub` (a Faust worker's changelogged state) implement it.

Writes run under the tenant's lock and are durable when they return: the embedded hub commits
to its store (intent messages through its outbox), the Kafka hub writes the tenant's
changelog partition (intent messages to the intents topic first). Reads see committed state.
A tenant that does not exist is :class:`schemas.errors.NotFoundError`; a Kafka worker that
cannot serve a tenant now raises ``StateUnavailableError`` (the API answers 503).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from schemas.errors import FoldmemError
from schemas.events import RawEvent
from schemas.graph import NodeKind
from schemas.intents import Intent, IntentMessage, IntentStatus
from schemas.query import QueryRequest, QueryResponse, RecallRequest, RecallResponse
from topologies.engine import FoldEngine, FoldResult
from topologies.memory import TenantMemory
from topologies.nightly.run import NightlyReport
from topologies.privacy import DeletionReport

NIGHTLY_BUDGET_S = 60.0  # seconds of work a nightly pass may take unless told otherwise


class TransientError(FoldmemError):
    """The tenant cannot be written here now (another process holds it, a Kafka worker is
    recovering or moving it): try again later; never a reason to drop an event."""


class FoldFailedError(FoldmemError):
    """The engine failed on an event (a bug; the event stays stored): it is dead-lettered
    with this reason, and the stream goes on."""


@dataclass(frozen=True)
class Checkpoint:
    """A source's position, committed in the same transaction as the fold that passed it."""

    source: str
    offset: int
    inode: int | None = None


# the source positions to commit in the same transaction as the fold of this event
CheckpointFn = Callable[[RawEvent], Sequence[Checkpoint]]
# one entry per event of a batch, in order: the fold's result, or why the event was not folded
FoldOutcome = FoldResult | FoldmemError


@runtime_checkable
class Hub(Protocol):
    """Fold, read, intent status, upkeep and privacy over every tenant of a deployment."""

    @property
    def engine(self) -> FoldEngine:
        """The engine folding here: its embedder, configuration and planner (``GET /llm``)."""
        ...

    @property
    def planner_name(self) -> str: ...

    # ---------------------------------------------------------------- tenants
    def tenants(self) -> list[str]:
        """Every tenant this hub holds now (a Kafka worker: those of its partitions)."""
        ...

    def view(self, tenant: str) -> TenantMemory:
        """The tenant's committed memory, to read only. NotFoundError if it has none."""
        ...

    def now(self, tenant: str) -> datetime:
        """The tenant's stream clock."""
        ...

    # ------------------------------------------------------------------- fold
    async def fold(self, event: RawEvent, checkpoints: CheckpointFn | None = None) -> FoldResult:
        """Admit, ingest (durable before any planner runs) and fold one event.

        ``checkpoints(event)`` gives the source positions to commit with the fold (a hub whose
        positions are its consumer offsets refuses them). Raises InvalidEventError when the
        event is refused (a time too far ahead, a forgotten id), TransientError when the
        tenant cannot be written now (fold it again later: never a reason to drop it)."""
        ...

    async def fold_batch(
        self,
        events: Sequence[RawEvent],
        checkpoints: CheckpointFn | None = None,
        ahead: Sequence[RawEvent] = (),
    ) -> list[FoldOutcome]:
        """Fold events in order (each tenant's in the order given): one outcome per event.
        A refused event (InvalidEventError) or a failed fold (FoldFailedError for a bug) does
        not stop the others; a TransientError does stop its tenant: that event and the
        tenant's later ones in the batch carry it, unfolded, to be folded again later.
        ``checkpoints(event)`` is asked at each event's commit, as for :meth:`fold`.

        The ingest driver delivers every source through this (one tenant's events per
        batch); a hub may fold a batch in fewer transactions than events. ``ahead``: the
        events the driver will deliver next, which a hub may start embedding while this
        batch folds (they are not folded here)."""
        ...

    # ------------------------------------------------------------------- read
    def graph(
        self,
        tenant: str,
        kind: NodeKind | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        """Nodes (by kind, time) and the edges among them, with decayed weights."""
        ...

    def node(self, tenant: str, node_id: str) -> dict[str, Any]:
        """A node with its edges and neighbours (ids of merged nodes resolve)."""
        ...

    def intents(self, tenant: str, status: IntentStatus | None = None) -> list[Intent]: ...

    def search(self, tenant: str, text: str, k: int = 10) -> list[dict[str, Any]]:
        """Basic search: dense kNN over node vectors plus substring match."""
        ...

    def query(self, tenant: str, request: QueryRequest) -> QueryResponse:
        """The read path: cited, explained hits (never an LLM)."""
        ...

    async def recall(self, tenant: str, request: RecallRequest) -> RecallResponse:
        """Cued recall; records the recall (a write)."""
        ...

    # ------------------------------------------------------------ intent status
    async def set_intent_status(
        self, tenant: str, intent_id: str, status: IntentStatus, note: str = ""
    ) -> list[IntentMessage]:
        """Change an intent's status; the messages are emitted like a fold's."""
        ...

    # ------------------------------------------------------------------ upkeep
    async def sweep(self, tenant: str | None = None) -> dict[str, int]:
        """The decay sweep for one or every tenant: changed items per tenant."""
        ...

    async def nightly_if_due(self) -> dict[str, NightlyReport]:
        """A nightly pass for each tenant that is idle and due one."""
        ...

    def folded_by(self, tenant: str) -> dict[str, Any]:
        """Which planner folded the tenant's events (``planners``, ``llm_fallbacks``,
        ``uncounted``), as the folds recorded it: not the planner these settings would use."""
        ...

    # ---------------------------------------------------------------- privacy
    def layers(self, tenant: str) -> dict[str, bool]: ...

    async def change_layers(
        self, tenant: str, changes: dict[str, bool], purge: bool, actor: str
    ) -> dict[str, bool]:
        """Opt layers in or out (``purge``: delete what a disabled layer holds)."""
        ...

    def export(self, tenant: str) -> dict[str, Any]:
        """Everything held about the tenant, inferred layers marked."""
        ...

    def audit(self, tenant: str) -> list[dict[str, Any]]:
        """The deletion audit log (ids and hashes, never content)."""
        ...

    async def forget_event(self, tenant: str, event_id: str, actor: str) -> DeletionReport:
        """Hard delete of an event and what was grounded only in it (tombstoned; the intents
        it removes are retracted)."""
        ...

    async def forget_tenant(self, tenant: str, actor: str) -> DeletionReport:
        """Forget everything of a tenant (tombstones and the audit stay)."""
        ...

    async def consolidate(self, tenant: str, budget_s: float = NIGHTLY_BUDGET_S) -> NightlyReport:
        """One nightly pass for the tenant now."""
        ...
