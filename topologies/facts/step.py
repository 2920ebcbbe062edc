"""FactStep: the fold step that writes facts and identity items for one event.

``FoldEngine`` calls ``await prepare(memory, event)`` before its transaction (the optional LLM
extraction, never inside a transaction) and ``apply(memory, scope, event)`` inside the fold
transaction, after the plan executor. ``apply`` extracts (or takes the prepared items),
reconciles each item against the k nearest FACT items and writes:

- ADD: a FACT node (``inferred=True``, ``attrs.key/value/item_kind``), its vector in the FACT
  index and ``FACT -DERIVED_FROM-> EVENT`` (provenance);
- SUPERSEDE: the same plus the chain pointers (see :mod:`topologies.facts.chains`);
- UPDATE: ``EVENT -GROUNDS-> FACT`` (corroboration), reinforcement, the longer wording kept;
- DUPLICATE: nothing.

Skipped entirely when the tenant opted out of the ``facts`` layer.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Protocol

import structlog

from schemas.events import RawEvent
from schemas.graph import Edge, EdgeKind, Node, NodeKind
from topologies.embedding import Embedder
from topologies.embedding_memo import embed_statements
from topologies.facts.chains import link
from topologies.facts.extract import ExtractedItem, ExtractorConfig, extract_items
from topologies.facts.reconcile import (
    Candidate,
    Decision,
    ReconcileConfig,
    candidates,
    decide,
    restates,
)
from topologies.facts.slot_index import remember
from topologies.facts.slots import Slots, author_of, slots_of
from topologies.memory import TenantMemory, event_node_id, stable_id
from topologies.privacy import layer_enabled
from topologies.scope import FoldScope
from topologies.vector_index import Vector

log = structlog.get_logger(__name__)


class ItemExtractor(Protocol):
    """An optional (LLM) extractor; returning None means 'use the deterministic rules'."""

    async def extract(self, event: RawEvent) -> list[ExtractedItem] | None: ...


class ItemJudge(Protocol):
    """An optional (LLM) reconciler; returning None means 'use the heuristic rules'."""

    async def decide(
        self,
        item: ExtractedItem,
        author: str,
        when: datetime,
        found: list[Candidate],
        log_ctx: dict[str, str],
        same_belief: Callable[[Candidate], bool] | None = None,
    ) -> Decision | None: ...


@dataclass
class FactReport:
    added: list[str] = field(default_factory=list)
    superseded: list[tuple[str, str]] = field(default_factory=list)  # (new, old)
    updated: list[str] = field(default_factory=list)
    duplicates: int = 0


def fact_id(tenant: str, event_id: str, index: int) -> str:
    return stable_id("f", tenant, event_id, "fact", str(index))


def event_text(event: RawEvent) -> str:
    """What facts are read from: the body, else the title."""
    return event.body.strip() or event.title.strip()


def read_text(event: RawEvent) -> str:
    """The event's text as the engine embeds it (its statements are read in it)."""
    return event.text or event.id


def event_author(event: RawEvent) -> str:
    return author_of(event.source, event.participants, event.attrs)


class TopicVectors:
    """Embeds topic phrases, remembering the most recent ``size`` (a candidate's phrase is
    compared again with every later item of its holder)."""

    def __init__(self, embedder: Embedder, size: int = 8192) -> None:
        self.embedder = embedder
        self.size = size
        self._cache: OrderedDict[str, Vector] = OrderedDict()

    def __call__(self, phrases: list[str]) -> list[Vector]:
        missing = [p for p in dict.fromkeys(phrases) if p not in self._cache]
        if missing:
            for phrase, row in zip(missing, self.embedder.embed(missing), strict=True):
                self._cache[phrase] = row
        out = []
        for phrase in phrases:
            self._cache.move_to_end(phrase)
            out.append(self._cache[phrase])
        while len(self._cache) > self.size:
            self._cache.popitem(last=False)
        return out


class FactStep:
    def __init__(
        self,
        embedder: Embedder,
        extractor: ItemExtractor | None = None,
        extractor_config: ExtractorConfig | None = None,
        reconcile_config: ReconcileConfig | None = None,
        max_prepared: int = 1024,
        judge: ItemJudge | None = None,
    ) -> None:
        self.embedder = embedder
        self.extractor = extractor
        self.judge = judge
        self.extractor_config = extractor_config or ExtractorConfig()
        self.reconcile_config = reconcile_config or ReconcileConfig()
        self.topics = TopicVectors(embedder)
        self._prepared: OrderedDict[tuple[str, str, str], list[ExtractedItem]] = OrderedDict()
        self._judged: OrderedDict[tuple[str, str], dict[int, Decision]] = OrderedDict()
        self._max_prepared = max_prepared

    async def prepare(self, memory: TenantMemory, event: RawEvent) -> None:
        """The LLM steps, outside the fold transaction: extraction (if an extractor is set),
        then the model's reconcile decisions (if a judge is set); failures fall back."""
        await self._prepare_items(memory, event)
        await self._prepare_decisions(memory, event)

    async def _prepare_items(self, memory: TenantMemory, event: RawEvent) -> None:
        """Run the LLM extractor (if any) outside the transaction; failures fall back."""
        if self.extractor is None or not layer_enabled(memory, "facts"):
            return
        try:
            items = await self.extractor.extract(event)
        except Exception as exc:  # the deterministic rules take over
            log.warning(
                "fact_extraction_failed", tenant=memory.tenant, event_id=event.id, error=str(exc)
            )
            return
        if items is not None:
            self._remember(self._key(memory, event), items)

    async def _prepare_decisions(self, memory: TenantMemory, event: RawEvent) -> None:
        """Ask the judge about each item that has candidates; keep its valid decisions."""
        if self.judge is None or not layer_enabled(memory, "facts"):
            return
        key = (memory.tenant, event.id)
        items = self._prepared.get(self._key(memory, event))
        if items is None:
            items = extract_items(event_text(event), self.extractor_config)
        asked = [i for i, item in enumerate(items) if self._judged_item(item)]
        if not asked or memory.event_state(event.id) == "folded":
            return
        vectors = embed_statements(self.embedder, read_text(event), [items[i].text for i in asked])
        author = event_author(event)
        decisions: dict[int, Decision] = {}
        for row, index in enumerate(asked):
            item = items[index]
            slots = slots_of(item.text, author)
            found = candidates(memory, vectors[row], slots, self.reconcile_config, set(), event.ts)
            if not found:
                continue
            ctx = {"tenant": memory.tenant, "event_id": event.id}
            same = partial(restates, item, slots, self.topics, self.reconcile_config)
            try:
                decision = await self.judge.decide(item, author, event.ts, found, ctx, same)
            except Exception as exc:  # the heuristic rules take over for this event
                log.warning("fact_reconcile_failed", error=str(exc)[:200], **ctx)
                break
            if decision is not None:
                decisions[index] = decision
        if decisions:
            self._judged[key] = decisions
            while len(self._judged) > self._max_prepared:
                self._judged.popitem(last=False)

    def _judged_item(self, item: ExtractedItem) -> bool:
        """Is the judge asked about this item? With a model extractor, only about what the
        model stated: a statement the rules read (the fallback for what the model left out)
        is reconciled by the rules too."""
        return self.extractor is None or bool(item.attrs.get("extractor"))

    def texts(self, memory: TenantMemory, events: Sequence[RawEvent]) -> list[str]:
        """What ``apply`` will embed for these events with the deterministic extractor (the
        statements; their topic phrases only when a candidate is compared, see
        ``reconcile.topic_similarity``), for a batch to embed them in one call."""
        return [text for event in events for text in self.statements(memory, event)]

    def statements(self, memory: TenantMemory, event: RawEvent) -> list[str]:
        """The statements ``apply`` will embed for the event (read from ``read_text``)."""
        if self.extractor is not None or not layer_enabled(memory, "facts"):
            return []
        items = extract_items(event_text(event), self.extractor_config)
        self._remember(self._key(memory, event), items)  # apply() reads them, not again
        return [item.text for item in items]

    @staticmethod
    def _key(memory: TenantMemory, event: RawEvent) -> tuple[str, str, str]:
        """Whose items these are: the tenant's event, as it reads now. Its text is part of
        the key: the next batch's items may be read while this one folds, and an event's
        revision may be in it under the same id (each keeps the items of its own text)."""
        return memory.tenant, event.id, event_text(event)

    def _remember(self, key: tuple[str, str, str], items: list[ExtractedItem]) -> None:
        self._prepared[key] = items
        while len(self._prepared) > self._max_prepared:
            self._prepared.popitem(last=False)

    def extract(self, memory: TenantMemory, event: RawEvent) -> list[ExtractedItem]:
        prepared = self._prepared.pop(self._key(memory, event), None)
        if prepared is not None:
            return prepared
        return extract_items(event_text(event), self.extractor_config)

    @staticmethod
    def _still_valid(memory: TenantMemory, decision: Decision, written: set[str]) -> bool:
        """A prepared decision still applies: its target is a current belief not written by
        this event (the graph may have changed between prepare and apply)."""
        if decision.target is None:
            return decision.op in ("ADD", "DUPLICATE")
        target = memory.graph.get(decision.target)
        return target is not None and not target.superseded_by and target.id not in written

    def apply(self, memory: TenantMemory, scope: FoldScope, event: RawEvent) -> FactReport:
        """Extract, reconcile and write; call inside the fold transaction."""
        report = FactReport()
        if not layer_enabled(memory, "facts"):
            return report
        if not memory.in_transaction:
            raise RuntimeError("FactStep.apply() needs an open transaction")
        items = self.extract(memory, event)
        judged = self._judged.pop((memory.tenant, event.id), {})
        if not items:
            return report
        vectors = embed_statements(self.embedder, read_text(event), [item.text for item in items])
        author = event_author(event)
        all_slots = [slots_of(item.text, author) for item in items]
        topics = [s.topic or i.text for s, i in zip(all_slots, items, strict=True)]
        ev_node = event_node_id(memory.tenant, event.id)
        when = event.ts
        written: set[str] = set()
        for index, item in enumerate(items):
            slots = all_slots[index]
            cfg = self.reconcile_config
            model = judged.get(index)
            if model is not None and self._still_valid(memory, model, written):
                decision = model
            else:
                found = candidates(memory, vectors[index], slots, cfg, written, when)
                decision = decide(
                    memory, item, vectors[index], slots, topics[index], self.topics, found, cfg
                )
            if decision.op == "DUPLICATE":
                report.duplicates += 1
                continue
            if decision.op == "UPDATE" and decision.target is not None:
                self._update(memory, scope, decision.target, item, vectors[index], ev_node)
                report.updated.append(decision.target)
                continue
            new_id = fact_id(memory.tenant, event.id, index)
            if new_id in memory.graph:
                continue  # replay of an already folded event
            self._add(memory, scope, new_id, item, slots, vectors[index], ev_node, when, decision)
            written.add(new_id)
            replaces = decision.target if decision.op == "SUPERSEDE" else None
            remember(memory, slots, new_id, replaces)
            if replaces is not None:
                link(memory, new_id, replaces, when)
                report.superseded.append((new_id, replaces))
            else:
                report.added.append(new_id)
        log.debug(
            "facts_reconciled",
            tenant=memory.tenant,
            event_id=event.id,
            added=len(report.added),
            superseded=len(report.superseded),
            updated=len(report.updated),
            duplicates=report.duplicates,
        )
        return report

    # ---------------------------------------------------------------- writes
    def _add(
        self,
        memory: TenantMemory,
        scope: FoldScope,
        node_id: str,
        item: ExtractedItem,
        slots: Slots,
        vector: Vector,
        ev_node: str,
        when: datetime,
        decision: Decision,
    ) -> None:
        attrs: dict[str, object] = {
            "item_kind": item.kind,
            "salience": round(item.salience, 3),
            "reconcile": decision.rule,
            **slots.to_attrs(),
        }
        if item.key:
            attrs.update(key=item.key, value=item.value, polarity=item.polarity)
        if item.topic:
            attrs["topic"] = item.topic
        attrs.update(item.attrs)
        node = Node(
            id=node_id,
            kind=NodeKind.FACT,
            tenant=memory.tenant,
            title=item.text[:120],
            text=item.text,
            ts=when,
            created_at=scope.now,
            updated_at=scope.now,
            source_event_id=scope.event_id or None,
            category="identity" if item.kind == "identity" else None,
            inferred=True,
            valid_from=when,
            attrs=attrs,
        )
        memory.graph.add_node(node)
        memory.indexes["FACT"].upsert(node_id, vector)
        if ev_node in memory.graph:
            memory.graph.put_edge(_edge(node_id, ev_node, EdgeKind.DERIVED_FROM, 0.9, scope.now))
        scope.touch(node_id)
        scope.created.add(node_id)

    def _update(
        self,
        memory: TenantMemory,
        scope: FoldScope,
        target: str,
        item: ExtractedItem,
        vector: Vector,
        ev_node: str,
    ) -> None:
        node = memory.graph.node(target)
        changes: dict[str, object] = {
            "reinforcement": node.reinforcement + 1,
            "updated_at": scope.now,
        }
        if len(item.text) > len(node.text):
            changes.update(text=item.text, title=item.text[:120])
            memory.indexes["FACT"].upsert(target, vector)  # already embedded in apply()
        memory.graph.replace_node(node.model_copy(update=changes))
        if ev_node in memory.graph and memory.graph.edge(ev_node, target, EdgeKind.GROUNDS) is None:
            memory.graph.put_edge(_edge(ev_node, target, EdgeKind.GROUNDS, 1.0, scope.now))
        scope.touch(target)


def _edge(src: str, dst: str, kind: EdgeKind, w0: float, now: datetime) -> Edge:
    return Edge(src=src, dst=dst, kind=kind, w0=w0, t_last=now, created_at=now)
