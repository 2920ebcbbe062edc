"""The fold: one event into one tenant's memory (docs/DESIGN.md section 3).

1. ``ingest``: validate, dedup by event id, store the EVENT node verbatim (own transaction,
   committed before any planner runs: a planner failure never loses input).
2. ``fold_stored``: assemble context, plan, then in one transaction: count access, apply the
   plan, consolidate, let intents emerge, mark the event folded. Any failure rolls the whole
   transaction back; the fallback planner's plan is tried next, then an empty plan, so the
   event always ends folded.

3. ``fold_batch``: a batch of one tenant's events; the raw events are handed over (the
   tenant's inbox) before any is planned, then each is ingested and folded as above, in memory,
   and the caller commits the batch's changes once (see ``fold_batch``).

Time is the stream clock: the latest event time seen by the tenant (events may arrive out of
order), so replaying a stream reproduces the same graph. An event dated after it arrived (a
meeting planned for next month, stamped ``received_at`` by the runtime's edge) moves the clock
only to its arrival: "now" is never in the future.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

import orjson
import structlog

from schemas.errors import (
    FoldmemError,
    InvalidTransitionError,
    NotFoundError,
    PlanRejectedError,
)
from schemas.events import RawEvent
from schemas.graph import Edge, EdgeKind, Node, NodeKind
from schemas.intents import IntentMessage, IntentStatus, can_transition
from schemas.plans import UpdatePlan
from topologies import correspondents, goals, reactions, topics
from topologies.ahead import AheadSlots
from topologies.config import EngineConfig
from topologies.consolidation import Consolidator
from topologies.context import assemble_context, record_access
from topologies.embedding import Embedder
from topologies.embedding_memo import EmbeddingMemo, Passage
from topologies.executor import PlanExecutor
from topologies.facts.llm_extract import model_fact_step
from topologies.facts.step import FactStep
from topologies.fold_steps import StepTimes
from topologies.intents import IntentEmergence, intent_view
from topologies.llm.completer import JsonCompleter
from topologies.memory import POOL, ChangeSet, TenantMemory, event_node_id, merge_changes
from topologies.naming import Namer
from topologies.naming.activities import lexicon
from topologies.naming.phrases import BatchReader, Reading
from topologies.nightly.induce import LLMInductor
from topologies.plan_bounds import PlanBounds
from topologies.planner import PLANNED_BY_KEY, Planner, PlanRequest, plans_sync
from topologies.privacy import check_not_forgotten
from topologies.scope import INTENT_REVISION_ATTR, FoldScope
from topologies.text import extract_entities
from topologies.vector_index import Vector

log = structlog.get_logger(__name__)

# the fewest events of a next batch read ahead (``FoldEngine.reader``): a reading costs the
# other process about as much per call as per short text, and a batch of one is ``fold``,
# which parses its event itself (one event at a time: 5.1 ms of the reader's CPU per event,
# and the fold slower, for no parse saved; 2026-12-05)
READ_AHEAD_MIN = 8
T = TypeVar("T")

CLOCK_KEY = "clock"
REVISION_KEY = "revision:"  # + RawEvent id -> EVENT node id of its latest revision
EVENTS_FOLDED_KEY = "events_folded"
INBOX_KEY = "inbox"  # raw events of a batch stored and not folded yet (see fold_batch)


@dataclass
class IngestResult:
    event_id: str
    node_id: str
    duplicate: bool
    changes: ChangeSet | None = None
    event: RawEvent | None = None  # the event as stored (a revision gets its own id)


@dataclass
class FoldResult:
    tenant: str
    event_id: str
    node_id: str
    status: str  # folded | duplicate | fallback | empty | refused | failed
    planner: str = ""
    ops: int = 0
    changes: list[ChangeSet] = field(default_factory=list)  # the stored raw event first
    messages: list[IntentMessage] = field(default_factory=list)
    error: str | None = None
    fold_seconds: float = 0.0
    stored: ChangeSet | None = None  # the ingest commit (already handed to ``on_stored``)
    refusal: FoldmemError | None = None  # why ingest refused it (status "refused")
    steps: StepTimes = field(default_factory=StepTimes)  # where its time went (fold_steps.py)

    @property
    def plan_seconds(self) -> float:
        """The planners' time (every attempt's)."""
        return self.steps.seconds.get("plan", 0.0)

    @property
    def fold_changes(self) -> list[ChangeSet]:
        """What the fold itself changed, without the ingest commit."""
        return [c for c in self.changes if c is not self.stored]


@dataclass
class BatchResult:
    """A batch folded in event order: one FoldResult per event given, in that order, and
    ``recovered``: the events of an earlier batch that was stored and never folded (a crash
    between its two commits), folded first."""

    tenant: str
    results: list[FoldResult]
    recovered: list[FoldResult] = field(default_factory=list)
    stored: ChangeSet | None = None  # what was handed to ``on_stored``
    changes: list[ChangeSet] = field(default_factory=list)  # everything to commit, in order
    steps: StepTimes = field(default_factory=StepTimes)  # its folds' and its own (fold_steps.py)

    @property
    def fold_changes(self) -> list[ChangeSet]:
        """What to commit once the batch is folded (everything but ``stored``), merged."""
        return merge_changes(self.changes)

    @property
    def messages(self) -> list[IntentMessage]:
        return [m for r in [*self.recovered, *self.results] for m in r.messages]


def inbox_changes(tenant: str, events: Sequence[RawEvent]) -> ChangeSet:
    """The ChangeSet that stores a batch's raw events in the tenant's inbox."""
    raw = [event.model_dump(mode="json") for event in events]
    return ChangeSet(tenant=tenant, meta={INBOX_KEY: raw})


def count_planner(memory: TenantMemory, planner: str) -> None:
    """One more event folded with a plan by ``planner`` (the plan's author, so a heuristic plan
    the LLM planner fell back to counts as heuristic)."""
    counts = dict(memory.meta.get(PLANNED_BY_KEY) or {})
    counts[planner] = int(counts.get(planner, 0)) + 1
    memory.set_meta(PLANNED_BY_KEY, counts)


def event_fingerprint(event: RawEvent) -> str:
    """Hash of what the event says (not when it was received): tells revisions from copies."""
    payload = event.model_dump(mode="json", exclude={"received_at", "schema_version", "tenant"})
    return hashlib.blake2b(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS),
                           digest_size=16).hexdigest()  # fmt: skip


def event_to_node(event: RawEvent, node_id: str) -> Node:
    """The verbatim EVENT node: the hippocampal trace, immutable from here on."""
    received = event.received_at or event.ts
    return Node(
        id=node_id,
        kind=NodeKind.EVENT,
        tenant=event.tenant,
        title=event.title,
        text=event.body,
        ts=event.ts,
        created_at=received,
        updated_at=received,
        source=event.source,
        source_event_id=event.id,
        participants=list(event.participants),
        attrs={"raw_attrs": dict(event.attrs), "received_at": received.isoformat()},
    )


def node_to_event(node: Node) -> RawEvent:
    """Rebuild the RawEvent from its stored EVENT node (for re-planning after a crash)."""
    assert node.ts is not None and node.source_event_id is not None
    return RawEvent(
        id=node.source_event_id,
        tenant=node.tenant,
        source=node.source or "note",
        ts=node.ts,
        title=node.title,
        body=node.text,
        participants=list(node.participants),
        attrs=dict(node.attrs.get("raw_attrs", {})),
        received_at=node.created_at,
    )


async def run_inline(step: Callable[[], T]) -> T:
    """The default ``FoldEngine.offload``: a fold's steps run where the fold runs."""
    return step()


class FoldEngine:
    """Stateless over tenants: every call gets the TenantMemory it works on."""

    # runs a fold's CPU-bound steps (context assembly, a synchronous plan, the transaction);
    # a server sets one that runs them in a worker thread (stream_app/hub/gate.py)
    offload: Callable[[Callable[[], Any]], Awaitable[Any]] = staticmethod(run_inline)

    def __init__(
        self,
        embedder: Embedder,
        planner: Planner,
        config: EngineConfig | None = None,
        fallback: Planner | None = None,
        namer: Namer | None = None,
        completer: JsonCompleter | None = None,
        facts: FactStep | None = None,
        reader: BatchReader | None = None,
    ) -> None:
        """``completer``: the model the LLM tasks besides planning use (fact extraction and
        reconciliation, nightly induction); None: those steps run on rules only. ``facts``: a
        fact step of the caller's own instead of the one built for ``completer``.
        ``reader``: reads a tenant's next batch (parses its texts, analyses its events)
        elsewhere while this batch folds (the runtime's reader process); used where the
        namer's parser has the default pipeline, the one such a reader loads."""
        # one model call per batch for the texts known ahead (fold_batch prefetches them)
        self.embedder = embedder if isinstance(embedder, EmbeddingMemo) else EmbeddingMemo(embedder)
        embedder = self.embedder
        self.planner = planner
        self.fallback = fallback
        self.config = config or EngineConfig()
        embedder.in_context = self.config.statements_in_context
        self.executor = PlanExecutor(embedder, self.config)
        # names concepts and intents; the planner's namer when it has one (one cache of parses)
        self.namer = namer or getattr(planner, "namer", None) or Namer(embedder)
        self.consolidator = Consolidator(self.executor, self.config, self.namer)
        self.emergence = IntentEmergence(self.executor, embedder, self.config, self.namer)
        self.facts = facts or model_fact_step(embedder, planner, completer)  # layer off: skipped
        self.inductor = LLMInductor(completer) if completer is not None else None  # nightly
        self.reader = reader if self.namer.parser.default_pipeline else None
        self._readings: AheadSlots[Reading] = AheadSlots()  # per tenant: its next batch's

    def forget_texts(self) -> None:
        """Drop every text kept beyond its fold, after a deletion, so none quotes what was
        deleted: the embedding memo's, the parser's parses and analyses, the readings of next
        batches under way (the reader keeps nothing: stream_app/hub/reader.py). Called as a
        fold step (``offload``): the parser is not read by another fold step meanwhile."""
        self.embedder.clear()
        self.namer.parser.clear()
        self._readings.clear()

    def warm_up(self) -> None:
        """Load what a first fold would load on first use (the embedding model, word
        frequencies): a server calls this in a worker thread, so its event loop does not stop
        for it in the middle of a fold."""
        self.embedder.embed_transient(["Warm up: lunch with Alice Moreau in Berlin on 3 March"])
        self.embedder.forget()
        extract_entities("Warm up: lunch with Alice Moreau in Berlin on 3 March")
        lexicon()  # the namer's word forms
        self.namer.parser.analyse([("Warm up", "Lunch with Alice in Berlin.", frozenset())])

    def new_memory(self, tenant: str) -> TenantMemory:
        return TenantMemory(tenant, self.embedder.dim, self.config.ann)

    # ------------------------------------------------------------------ clock
    def stream_now(self, memory: TenantMemory, event: RawEvent | None = None) -> datetime:
        clock = memory.meta.get(CLOCK_KEY)
        current = datetime.fromisoformat(clock) if clock else None
        if event is None:
            if current is None:
                raise NotFoundError(f"tenant {memory.tenant!r} has no events yet")
            return current
        when = event.ts if event.received_at is None else min(event.ts, event.received_at)
        return when if current is None or when > current else current

    # ----------------------------------------------------------------- ingest
    def ingest(self, memory: TenantMemory, event: RawEvent) -> IngestResult:
        """Dedup and store the raw event as an EVENT node. Commits on its own."""
        self._admit(memory, event)
        found = self._resolve(memory, event)
        if isinstance(found, IngestResult):
            return found
        event, node_id, previous, fingerprint = found
        vector = self.embedder.embed_transient([event.text or event.id])[0]
        source = self._topic_source(memory, event, node_id, vector)
        with memory.transaction() as changes:
            self._store(memory, event, node_id, previous, fingerprint, vector, source)
        memory.entities.add_node(memory.graph.node(node_id))  # derived index, after commit
        return IngestResult(event.id, node_id, duplicate=False, changes=changes, event=event)

    def _topic_source(
        self, memory: TenantMemory, event: RawEvent, node_id: str, vector: Vector
    ) -> Vector | None:
        """What the event's topic vector is formed from when not its embedding: a direct
        message whose correspondent's earlier events span several concepts counts their name
        (its heading) less (``topologies/correspondents.py``); None for every other event.
        The body is embedded only then (not prefetched: in a stream of one conversation, as
        LoCoMo's, every message is headed by a name and none is weighed)."""
        weight = correspondents.heading_weight(memory, event, node_id, self.config.topics)
        if weight >= 1.0:
            return None
        body = self.embedder.embed_transient([event.body])[0]
        log.debug("heading_weighed", tenant=memory.tenant, event_id=event.id, weight=weight)
        return correspondents.blend(vector, body, weight)

    @staticmethod
    def _admit(memory: TenantMemory, event: RawEvent) -> None:
        if event.tenant != memory.tenant:
            raise PlanRejectedError(f"event for tenant {event.tenant!r} sent to {memory.tenant!r}")
        check_not_forgotten(memory, event.id)  # hard-deleted ids are refused (privacy.py)

    def _resolve(
        self, memory: TenantMemory, event: RawEvent
    ) -> IngestResult | tuple[RawEvent, str, Node | None, str]:
        """A duplicate's IngestResult, or what to store: the event (a revision gets its own
        id), its node id, the EVENT node it revises and its fingerprint."""
        fingerprint = event_fingerprint(event)
        node_id = event_node_id(memory.tenant, event.id)
        previous: Node | None = None
        if memory.event_state(event.id) is not None or node_id in memory.graph:
            revised = self._revision(memory, event, fingerprint)
            if revised is None:
                return IngestResult(event.id, node_id, duplicate=True, event=event)
            event, previous = revised
            fingerprint = event_fingerprint(event)  # of the event as stored (replays match it)
            node_id = event_node_id(memory.tenant, event.id)
            if memory.event_state(event.id) is not None:
                return IngestResult(event.id, node_id, duplicate=True, event=event)
        return event, node_id, previous, fingerprint

    def _store(
        self,
        memory: TenantMemory,
        event: RawEvent,
        node_id: str,
        previous: Node | None,
        fingerprint: str,
        vector: Vector,
        source: Vector | None = None,
    ) -> None:
        """The EVENT node, its vectors, its state and the clock; inside a transaction.
        ``source``: what its topic vector is formed from when not ``vector``."""
        node = event_to_node(event, node_id)
        cues = goals.signals_attr(goals.event_signals(node))
        memory.graph.add_node(
            node.model_copy(
                update={"attrs": {**node.attrs, "fingerprint": fingerprint, goals.CUES_ATTR: cues}}
            )
        )
        if previous is not None:
            self._link_revision(memory, previous, node_id, event)
        memory.index(NodeKind.EVENT).upsert(node_id, vector)
        topic = topics.observe(memory, vector, self.config.topics, source)
        memory.index(POOL).upsert(node_id, topic)
        self._trim_pool(memory)
        memory.set_event_state(event.id, "stored")
        now = self.stream_now(memory, event)
        memory.set_meta(CLOCK_KEY, now.isoformat())

    @staticmethod
    def _revision(
        memory: TenantMemory, event: RawEvent, fingerprint: str
    ) -> tuple[RawEvent, Node] | None:
        """A known id with new content (an edited message, a moved or cancelled meeting) is a
        revision: a new EVENT node under ``<id>#rev-<fingerprint>`` that SUPERSEDES the latest
        one. Content seen before (the original or any revision) is a duplicate: None."""
        original = memory.graph.get(event_node_id(memory.tenant, event.id))
        if original is None or original.attrs.get("fingerprint") in (None, fingerprint):
            return None
        latest = memory.graph.get(memory.meta.get(REVISION_KEY + event.id, original.id))
        if latest is None or latest.attrs.get("fingerprint") == fingerprint:
            return None
        revision_id = f"{event.id[:230]}#rev-{fingerprint[:12]}"
        attrs = {**event.attrs, "revision_of": event.id}
        return event.model_copy(update={"id": revision_id, "attrs": attrs}), latest

    def _link_revision(
        self, memory: TenantMemory, previous: Node, node_id: str, event: RawEvent
    ) -> None:
        """SUPERSEDES new -> old, both pointers kept; the old version leaves the clustering pool."""
        now = self.stream_now(memory, event)
        memory.graph.put_edge(
            Edge(
                src=node_id,
                dst=previous.id,
                kind=EdgeKind.SUPERSEDES,
                w0=1.0,
                t_last=now,
                created_at=now,
            )
        )
        memory.graph.update_node(previous.id, superseded_by=node_id, valid_to=event.ts)
        memory.graph.update_node(node_id, supersedes=previous.id, valid_from=event.ts)
        memory.index(POOL).remove(previous.id)
        memory.set_meta(REVISION_KEY + str(event.attrs["revision_of"]), node_id)

    def _trim_pool(self, memory: TenantMemory) -> None:
        pool = memory.index(POOL)
        limit = self.config.pool_size
        if len(pool) <= limit + max(1, limit // 10):
            return
        by_age = sorted(pool.ids(), key=lambda nid: memory.graph.node(nid).ts or datetime.min)
        for node_id in by_age[: len(pool) - limit]:
            pool.remove(node_id)

    # ------------------------------------------------------------------- fold
    async def fold(
        self,
        memory: TenantMemory,
        event: RawEvent,
        on_stored: Callable[[ChangeSet], None] | None = None,
        ahead: Sequence[RawEvent] = (),
    ) -> FoldResult:
        """Ingest then fold; a duplicate is a no-op, a revision folds as a new EVENT node.

        ``on_stored`` receives the ingest ChangeSet before any planner runs: a runtime persists
        it there, so a planner failure or a crash never loses the raw event.

        The event's texts (its text, its statements) are embedded in one call, as a batch's
        are, and forgotten when the fold ends. ``ahead``: as for ``fold_batch``.
        """
        steps = StepTimes()
        try:
            with steps.timing("embed"):  # the vectors embedded ahead, waited for, then its own
                await self._adopt_ahead(memory)
                if self._unseen(memory, event):
                    self.prefetch(memory, [event])
            if ahead:  # read from memory: where a fold's steps run
                await self.offload(lambda: self._start_ahead(memory, ahead))
            with steps.timing("ingest"):
                ingested = self.ingest(memory, event)
            revised = ingested.event is not None and ingested.event.id != event.id
            event = ingested.event or event
            if ingested.changes is not None and on_stored is not None:
                on_stored(ingested.changes)
            if memory.event_state(event.id) == "folded":
                return FoldResult(memory.tenant, event.id, ingested.node_id, status="duplicate")
            if revised:  # its statements are the fold's texts too
                with steps.timing("embed"):
                    self.prefetch(memory, [event])
            result = await self.fold_stored(memory, event)
        finally:
            self.embedder.forget()
        if ingested.changes is not None:
            result.changes.insert(0, ingested.changes)
            result.stored = ingested.changes
        result.steps.merge(steps)
        return result

    @staticmethod
    def _unseen(memory: TenantMemory, event: RawEvent) -> bool:
        """A new event of the tenant's (not a duplicate nor a revision, which ingest tells)."""
        return (
            event.tenant == memory.tenant
            and memory.event_state(event.id) is None
            and event_node_id(memory.tenant, event.id) not in memory.graph
        )

    async def fold_batch(
        self,
        memory: TenantMemory,
        events: Sequence[RawEvent],
        on_stored: Callable[[ChangeSet], None] | None = None,
        ahead: Sequence[RawEvent] = (),
    ) -> BatchResult:
        """Fold ``events`` (one tenant's, in order) as one batch.

        ``on_stored`` receives the batch's raw events before any is planned: the tenant's
        inbox (``INBOX_KEY`` in its meta, not in memory). Then their texts (and their facts'
        statements) are embedded in one call and each event is ingested and folded in order,
        in memory only; the caller commits ``BatchResult.fold_changes`` once, which empties
        the inbox. A crash before that commit leaves the inbox: the next batch (or
        ``recover_inbox``) folds its events first, from the memory they would have met, so
        the graph is the one an uninterrupted run folds. A batch of one is ``fold``. An event
        refused by ``ingest`` (another tenant's, a forgotten id) is returned with status
        "refused", one whose fold failed (a bug) "failed", stored and not folded; the others
        fold.

        ``ahead``: the events of the tenant's next batch, when the caller knows them: their
        texts are embedded in a worker thread while this batch folds, and the next call
        finds them (``EngineConfig.embed_ahead``; same vectors, same fold).
        """
        pending = self.inbox(memory)
        if len(events) == 1 and not pending:
            result = await self.fold(memory, events[0], on_stored, ahead)
            changes = result.fold_changes if on_stored is not None else result.changes
            return BatchResult(
                memory.tenant, [result], stored=result.stored, changes=changes, steps=result.steps
            )
        batch = BatchResult(memory.tenant, [])
        if on_stored is not None and events:
            batch.stored = inbox_changes(memory.tenant, [*pending, *events])
            on_stored(batch.stored)
        todo = [(batch.recovered, e) for e in pending] + [(batch.results, e) for e in events]
        size = self.config.embed_slice
        slices = [todo[start : start + size] for start in range(0, len(todo), size)]
        try:
            with batch.steps.timing("embed"):  # the vectors embedded ahead, then its own
                await self._adopt_ahead(memory)
                if slices:
                    self.prefetch(memory, [event for _, event in slices[0]])
            batch_events = [event for _, event in todo]  # parsed where a fold's steps run
            reading = self._take_reading(memory) if events else None  # not a recovery's
            with batch.steps.timing("read"):
                await self.offload(lambda: self.read_batch(memory, batch_events, reading))
            if ahead:  # read from memory: where a fold's steps run
                await self.offload(lambda: self._start_ahead(memory, ahead))
            for number, part in enumerate(slices):
                next_slice = self._embed_next_slice(memory, slices[number + 1 :])
                try:
                    for target, event in part:
                        target.append(await self._fold_or_refuse(memory, event))
                        batch.changes.extend(target[-1].changes)
                        batch.steps.merge(target[-1].steps)
                        await asyncio.sleep(0)  # a server's other tasks (its API) run between
                finally:
                    if next_slice is not None:
                        with batch.steps.timing("embed"):  # what the slices did not hide
                            await next_slice
        finally:
            self.embedder.forget()
        if batch.stored is not None or pending:
            batch.changes.append(self._empty_inbox(memory))
        return batch

    def _embed_next_slice(
        self, memory: TenantMemory, later: Sequence[Sequence[tuple[Any, RawEvent]]]
    ) -> asyncio.Future[None] | None:
        """Embed the next slice's texts in a worker thread while this slice folds: a model
        such as MiniLM (onnxruntime) releases the GIL, so on two cores a batch costs about
        the larger of embedding and folding, not their sum. The texts are listed here, on
        the fold's thread; the thread only runs the model (``EmbeddingMemo`` is shared
        safely). A fold step that asks for a text first embeds it itself: same vectors."""
        if not later:
            return None
        passages = self.batch_passages(memory, [event for _, event in later[0]])
        return asyncio.ensure_future(asyncio.to_thread(self.embedder.prefetch, passages))

    def _start_ahead(self, memory: TenantMemory, events: Sequence[RawEvent]) -> None:
        """Embed the texts of the tenant's next batch in the memo's worker thread while this
        one folds (once this one's own texts are embedded): a model such as MiniLM releases
        the GIL, so on two cores a stream of batches costs about the larger of embedding and
        folding, not their sum. The texts are listed here, on the fold's thread."""
        mine = [event for event in events if event.tenant == memory.tenant]
        if mine and self.config.embed_ahead:
            self.embedder.embed_ahead(memory.tenant, self.batch_passages(memory, mine))
        if len(mine) >= READ_AHEAD_MIN and self.reader is not None:
            self._read_ahead(memory, mine)

    def _read_ahead(self, memory: TenantMemory, events: Sequence[RawEvent]) -> None:
        """Parse the texts of the tenant's next batch and analyse its events in the reader
        (those the parser has not read yet) while this batch folds: spaCy holds the GIL, so
        the runtime's reader is a process on another core (stream_app/hub/reader.py). A
        newer call for the tenant replaces this one (one batch ahead)."""
        assert self.reader is not None
        parser = self.namer.parser
        nodes = self._event_nodes(memory, events)
        # the keys' own texts are parsed with them (``PhraseParser.reading``): only the chat
        # turns besides
        keys, texts = parser.unread(parser.event_keys(nodes), reactions.turn_texts(nodes))
        reading = self.reader.submit(keys, texts) if keys or texts else None
        self._readings.put(memory.tenant, reading)

    def _take_reading(self, memory: TenantMemory) -> Reading | None:
        """What the reader read of the batch starting now, if it is done: the batch does not
        wait for it (a reading not done yet, such as a reader process's first while it
        starts, is dropped and the batch parses its texts itself: the same parses). A
        reading that failed is logged and left to the batch likewise."""
        future = self._readings.take(memory.tenant)
        if future is None:
            return None
        if not future.done():
            future.cancel()
            log.debug("read_ahead_late", tenant=memory.tenant)
            return None
        if future.cancelled():  # replaced, or a reader that gave up
            return None
        try:
            return future.result()
        except Exception as exc:
            log.warning("read_ahead_failed", tenant=memory.tenant, error=str(exc))
            return None

    async def _adopt_ahead(self, memory: TenantMemory) -> None:
        """The vectors embedded ahead for the batch starting now, remembered as its texts. An
        embedding that failed ahead is logged and left to this batch, which embeds its texts
        itself: an error then fails this batch, the one it belongs to."""
        future = self.embedder.take_ahead(memory.tenant)
        if future is None or future.cancelled():
            return
        try:
            vectors = await asyncio.wrap_future(future)
        except Exception as exc:
            log.warning("embed_ahead_failed", tenant=memory.tenant, error=str(exc))
            return
        self.embedder.adopt(vectors)

    async def recover_inbox(self, memory: TenantMemory) -> BatchResult:
        """Fold the events of a batch that was stored and never folded (after a crash)."""
        return await self.fold_batch(memory, [])

    @staticmethod
    def inbox(memory: TenantMemory) -> list[RawEvent]:
        """The raw events of a batch stored and not folded yet (empty unless a crash)."""
        return [RawEvent.model_validate(raw) for raw in memory.meta.get(INBOX_KEY) or ()]

    async def _fold_or_refuse(self, memory: TenantMemory, event: RawEvent) -> FoldResult:
        """``fold`` for one event of a batch: an event ingest refuses (another tenant's, a
        forgotten id) comes back "refused", a fold that fails (a bug) "failed" with the event
        stored, not folded (as a crash would leave it); the batch goes on either way."""
        steps = StepTimes()
        try:
            with steps.timing("ingest"):
                ingested = self.ingest(memory, event)
        except FoldmemError as exc:
            node_id = event_node_id(memory.tenant, event.id)
            log.info("event_refused", tenant=memory.tenant, event_id=event.id, reason=str(exc))
            return FoldResult(
                memory.tenant, event.id, node_id, "refused", error=str(exc), refusal=exc
            )
        event = ingested.event or event
        if memory.event_state(event.id) == "folded":
            return FoldResult(memory.tenant, event.id, ingested.node_id, status="duplicate")
        try:
            result = await self.fold_stored(memory, event)
        except Exception as exc:  # a bug: the event stays stored, the batch goes on
            log.exception("fold_failed", tenant=memory.tenant, event_id=event.id)
            error = f"{type(exc).__name__}: {exc}"
            result = FoldResult(memory.tenant, event.id, ingested.node_id, "failed", error=error)
        if ingested.changes is not None:
            result.changes.insert(0, ingested.changes)
            result.stored = ingested.changes
        result.steps.merge(steps)
        return result

    @staticmethod
    def _empty_inbox(memory: TenantMemory) -> ChangeSet:
        with memory.transaction() as changes:
            memory.set_meta(INBOX_KEY, None)
        return changes

    def prefetch(self, memory: TenantMemory, events: Sequence[RawEvent]) -> None:
        """Embed the events' known texts in one call (see topologies/embedding_memo.py)."""
        self.embedder.prefetch(self.batch_passages(memory, events))

    def read_batch(
        self, memory: TenantMemory, events: Sequence[RawEvent], reading: Reading | None = None
    ) -> None:
        """Parse what folding the events will parse without the entity recogniser (their
        titles and bodies, their chat turns) in one spaCy call: the fold asks for one
        event's texts at a time, and spaCy costs about as much per call as per short text
        (``PhraseParser.read``: the same parses, found in the parser's cache). What the
        reader read of them ahead (``reading``) is adopted first, not parsed again."""
        if reading is not None:
            self.namer.parser.adopt(reading)
        self.namer.parser.read(self.batch_readings(memory, events))

    def batch_readings(self, memory: TenantMemory, events: Sequence[RawEvent]) -> list[str]:
        """The texts folding the events will parse that are known ahead (``read_batch``)."""
        return self._readings_of(self._event_nodes(memory, events))

    def _readings_of(self, nodes: Sequence[Node]) -> list[str]:
        return [*self.namer.parser.event_texts(nodes), *reactions.turn_texts(nodes)]

    @staticmethod
    def _event_nodes(memory: TenantMemory, events: Sequence[RawEvent]) -> list[Node]:
        """The EVENT nodes the tenant's events will be stored as (others' left out)."""
        return [
            event_to_node(event, event_node_id(memory.tenant, event.id))
            for event in events
            if event.tenant == memory.tenant
        ]

    def batch_passages(self, memory: TenantMemory, events: Sequence[RawEvent]) -> list[Passage]:
        """What folding the events will embed that is known ahead: each event's text with
        the statements its fact step reads from it (embedded from the text's own pass where
        the embedder can: ``EngineConfig.statements_in_context``)."""
        return [
            Passage(event.text or event.id, tuple(self.facts.statements(memory, event)))
            for event in events
        ]

    def batch_texts(self, memory: TenantMemory, events: Sequence[RawEvent]) -> list[str]:
        """The events' texts and their statements, as plain texts."""
        passages = self.batch_passages(memory, events)
        return [p.text for p in passages] + [s for p in passages for s in p.statements]

    async def fold_stored(self, memory: TenantMemory, event: RawEvent) -> FoldResult:
        """Plan and apply a stored (ingested, not yet folded) event."""
        node_id = event_node_id(memory.tenant, event.id)
        if memory.event_state(event.id) == "folded":
            return FoldResult(memory.tenant, event.id, node_id, status="duplicate")
        started = time.perf_counter()
        steps = StepTimes()
        now = self.stream_now(memory, event)
        vector = memory.index(NodeKind.EVENT).get(node_id)
        if vector is None:
            vector = self.embedder.embed_transient([event.text or event.id])[0]
        with steps.timing("context"):
            context = await self.offload(
                lambda: assemble_context(
                    memory,
                    vector,
                    node_id,
                    now,
                    self.config.context,
                    decay_per_day=self.config.consolidation.decay_per_day,
                )
            )
        await asyncio.sleep(0)  # between steps, outside any transaction: a server's API runs
        request = PlanRequest(event, memory.graph.node(node_id), vector, context, memory, now)
        result = FoldResult(memory.tenant, event.id, node_id, status="folded", steps=steps)
        planners: list[Planner] = [self.planner]
        if self.fallback is not None and self.fallback is not self.planner:
            planners.append(self.fallback)
        prepared = False
        for attempt, planner in enumerate(planners):
            try:
                with steps.timing("plan"):
                    plan = await self._plan(planner, request)
            except Exception as exc:  # a planner failure never loses the event
                log.warning(
                    "planner_failed",
                    tenant=memory.tenant,
                    event_id=event.id,
                    planner=planner.name,
                    error=str(exc),
                )
                result.error = str(exc)
                continue
            if not prepared:  # after the plan: an LLM plan may carry the event's facts
                prepared = True
                with steps.timing("facts"):
                    await self.facts.prepare(memory, event)  # LLM fact steps, outside the tx
            try:
                bounds = PlanBounds.for_request(request)
                changes, scope = await self.offload(
                    partial(
                        self._apply,
                        memory,
                        event,
                        node_id,
                        vector,
                        context,
                        plan,
                        now,
                        bounds,
                        steps,
                    )
                )
            except PlanRejectedError as exc:
                log.warning(
                    "plan_rejected",
                    tenant=memory.tenant,
                    event_id=event.id,
                    planner=planner.name,
                    reason=str(exc),
                )
                result.error = str(exc)
                continue
            result.status = "folded" if attempt == 0 else "fallback"
            result.planner = planner.name
            result.ops = len(plan.ops)
            result.changes.append(changes)
            result.messages = self.intent_messages(memory, scope)
            break
        else:
            result.status, result.planner = "empty", "empty"
            try:
                changes, scope = await self.offload(
                    lambda: self._apply(
                        memory,
                        event,
                        node_id,
                        vector,
                        context,
                        UpdatePlan(planner="empty"),
                        now,
                        steps=steps,
                    )
                )
                result.messages = self.intent_messages(memory, scope)
            except PlanRejectedError as exc:  # consolidation itself failed: keep the raw event
                log.error("fold_failed", tenant=memory.tenant, event_id=event.id, error=str(exc))
                result.error = str(exc)
                changes = self._mark_folded(memory, event)
            result.changes.append(changes)
        result.fold_seconds = time.perf_counter() - started
        return result

    async def _plan(self, planner: Planner, request: PlanRequest) -> UpdatePlan:
        """The planner's plan; a planner that plans synchronously (no model to wait for)
        does so through ``offload``."""
        if self.offload is not run_inline and plans_sync(planner):
            return await self.offload(lambda: planner.plan_sync(request))
        return await planner.plan(request)

    def _apply(
        self,
        memory: TenantMemory,
        event: RawEvent,
        node_id: str,
        vector: Vector,
        context: Any,
        plan: UpdatePlan,
        now: datetime,
        bounds: PlanBounds | None = None,
        steps: StepTimes | None = None,
    ) -> tuple[ChangeSet, FoldScope]:
        """Apply a planner's plan (within ``bounds``), then the engine's own steps, unbounded;
        each step's time is added to ``steps``."""
        scope = FoldScope(memory.tenant, event.id, node_id, now)
        scope.touch(node_id)
        lap = (steps or StepTimes()).laps()
        try:
            with memory.transaction() as changes:  # any exception rolls the whole fold back
                self.executor.current_intent_vectors(memory)
                record_access(memory, context, now)
                self.executor.apply(memory, plan, scope, bounds)
                lap("apply")
                self.facts.apply(memory, scope, event)
                lap("facts")
                self.consolidator.consolidate(memory, scope)
                lap("consolidate")
                self.emergence.emerge(memory, scope)
                lap("emerge")
                memory.set_event_state(event.id, "folded")
                memory.set_meta(EVENTS_FOLDED_KEY, int(memory.meta.get(EVENTS_FOLDED_KEY, 0)) + 1)
                count_planner(memory, plan.planner)
            lap("apply")  # the bookkeeping and the transaction's close
        except PlanRejectedError:
            raise
        except Exception as exc:
            raise PlanRejectedError(f"{type(exc).__name__}: {exc}") from exc
        return changes, scope

    def _mark_folded(self, memory: TenantMemory, event: RawEvent) -> ChangeSet:
        """Last resort: the stored EVENT node stays, the event counts as folded."""
        with memory.transaction() as changes:
            memory.set_event_state(event.id, "folded")
            memory.set_meta(EVENTS_FOLDED_KEY, int(memory.meta.get(EVENTS_FOLDED_KEY, 0)) + 1)
            count_planner(memory, "none")
        return changes

    def intent_messages(self, memory: TenantMemory, scope: FoldScope) -> list[IntentMessage]:
        """One message per intent the scope created, moved to another status, or gave another
        title or deadline (``intent.updated``: a status message already carries the new ones)."""
        messages = []
        announced: set[str] = set()
        for intent_id, previous in scope.intent_changes.items():
            node = memory.graph.get(intent_id)
            if node is None or node.kind != NodeKind.INTENT:
                continue
            if previous is not None and previous == node.status:
                continue
            announced.add(intent_id)
            messages.append(
                IntentMessage(
                    type="intent.created" if previous is None else "intent.status_changed",
                    tenant=memory.tenant,
                    intent=intent_view(memory, node),
                    previous_status=previous,
                    emitted_at=scope.now,
                )
            )
        for intent_id, (title, deadline) in scope.intent_renames.items():
            node = memory.graph.get(intent_id)
            if intent_id in announced or node is None or node.kind != NodeKind.INTENT:
                continue
            if (node.title, node.deadline) == (title, deadline):
                continue  # renamed and back within the fold
            revision = node.attrs.get(INTENT_REVISION_ATTR)
            messages.append(
                IntentMessage(
                    type="intent.updated",
                    tenant=memory.tenant,
                    intent=intent_view(memory, node),
                    previous_status=node.status,
                    previous_title=title,
                    previous_deadline=deadline,
                    revision=revision if isinstance(revision, int) else 1,
                    emitted_at=scope.now,
                )
            )
        return messages

    # --------------------------------------------------------- user feedback
    def set_intent_status(
        self,
        memory: TenantMemory,
        intent_id: str,
        status: IntentStatus,
        now: datetime,
        note: str = "",
    ) -> tuple[ChangeSet, list[IntentMessage]]:
        """resolve / reject / defer (or schedule) an intent; adapts the category threshold."""
        node = memory.graph.get(intent_id)
        if node is None or node.kind != NodeKind.INTENT:
            raise NotFoundError(f"intent {intent_id!r} not found for tenant {memory.tenant!r}")
        assert node.status is not None
        if node.status == status:
            return ChangeSet(tenant=memory.tenant), []
        if not can_transition(node.status, status):
            raise InvalidTransitionError(
                f"intent {intent_id} cannot go from {node.status.value} to {status.value}"
            )
        scope = FoldScope(memory.tenant, "", None, now)
        with memory.transaction() as changes:
            self.emergence.set_status(memory, scope, node.id, status, note)
        return changes, self.intent_messages(memory, scope)

    def sweep(self, memory: TenantMemory, now: datetime) -> ChangeSet:
        """The periodic decay sweep: prune edges whose decayed weight fell below the floor."""
        with memory.transaction() as changes:
            self.consolidator.sweep(memory, now)
        return changes
