"""The user's control over what foldmem holds (docs/DESIGN.md section 9; DCPM section 6).

- **Layers**: per-tenant opt-in for the inferred layers ``facts``, ``concepts``, ``intents``,
  ``core_schemas`` (stored in ``memory.meta["privacy.layers"]``; core schemas OFF by default).
- **Export**: everything held about a tenant as one JSON-ready dict; inferred nodes are
  marked ``inferred: true`` with their layer.
- **Hard delete of an event**: the EVENT node, its vectors, and every FACT / CONCEPT / INTENT
  whose evidence was only the deleted nodes (to a fixpoint); supersedes chains around deleted
  facts are relinked; orphaned TIME anchors go too. A tombstone (a salted hash of the event
  id, never content) makes ``FoldEngine.ingest`` refuse a re-sent copy.
- **Forget a tenant**: every node, edge, vector, alias, event state and meta row is deleted
  (the returned ChangeSet carries the deletions); only hashed tombstones and the audit log stay.
- **Audit log**: one ``privacy.audit.<seq>`` meta entry per deletion: who, when, what ids
  (node ids and hashed event ids), counts; never content.

Every function that writes opens and commits its own transaction and returns the ChangeSet
to persist (store, lexical index and Kafka changelogs all apply ChangeSets). The time an
audit entry, a tombstone or an export carries (``now``) is the caller's: the runtime passes the
wall clock of the request.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import structlog

from schemas.errors import FoldmemError, InvalidEventError, NotFoundError
from schemas.graph import EdgeKind, Node, NodeKind
from topologies.boundaries import member_texts, relabelled
from topologies.embedding import Embedder
from topologies.memory import POOL, TOPIC, ChangeSet, TenantMemory, event_node_id
from topologies.naming import Namer
from topologies.naming.titles import event_name
from topologies.summaries import legacy_line, member_line
from topologies.text import is_content_word, tokens
from topologies.topics import MEMBER_EDGES

log = structlog.get_logger(__name__)

LAYERS = ("facts", "concepts", "intents", "core_schemas")
DEFAULT_LAYERS: dict[str, bool] = {
    "facts": True,
    "concepts": True,
    "intents": True,
    "core_schemas": False,  # infers what the user never linked: explicit consent only
}
LAYERS_KEY = "privacy.layers"
TOMBSTONE_PREFIX = "privacy.tombstone."
AUDIT_PREFIX = "privacy.audit."
AUDIT_SEQ_KEY = "privacy.audit_seq"
REVISION_PREFIX = "revision:"  # topologies.engine.REVISION_KEY (not imported: no cycle)
_KEEP_ON_FORGET = (TOMBSTONE_PREFIX, AUDIT_PREFIX, AUDIT_SEQ_KEY)
_EVIDENCE_IN = (EdgeKind.GROUNDS, EdgeKind.REINFORCES, EdgeKind.USER_FEEDBACK)
_SUPPORT_IN = (EdgeKind.TRIGGERS, EdgeKind.PART_OF)
_EVIDENCE_OUT = (EdgeKind.DERIVED_FROM,)
_CASCADE_KINDS = frozenset({NodeKind.FACT, NodeKind.CONCEPT, NodeKind.INTENT})


class PrivacyError(FoldmemError):
    """A privacy operation was asked something it cannot do (unknown layer, ...)."""


class ForgottenEventError(InvalidEventError):
    """The event id was hard-deleted: a re-sent copy is refused."""


# ---------------------------------------------------------------------- layers
def layers(memory: TenantMemory) -> dict[str, bool]:
    stored = memory.meta.get(LAYERS_KEY) or {}
    return {name: bool(stored.get(name, DEFAULT_LAYERS[name])) for name in LAYERS}


def layer_enabled(memory: TenantMemory, layer: str) -> bool:
    if layer not in DEFAULT_LAYERS:
        raise PrivacyError(f"unknown layer {layer!r}; known: {', '.join(LAYERS)}")
    return layers(memory)[layer]


def layer_of(node: Node) -> str:
    """The export / opt-in layer a node belongs to."""
    if node.kind == NodeKind.EVENT:
        return "events"
    if node.kind == NodeKind.TIME:
        return "time"
    if node.kind == NodeKind.FACT:
        return "identity" if node.attrs.get("item_kind") == "identity" else "facts"
    if node.kind == NodeKind.CONCEPT:
        return "core_schemas" if node.core else "concepts"
    return "intents"


def set_layers(
    memory: TenantMemory,
    changes: dict[str, bool],
    *,
    purge: bool = False,
    actor: str = "user",
    now: datetime,
    embedder: Embedder | None = None,
) -> ChangeSet:
    """Opt layers in or out. ``purge`` also deletes what a disabled layer already holds."""
    for name in changes:
        if name not in DEFAULT_LAYERS:
            raise PrivacyError(f"unknown layer {name!r}; known: {', '.join(LAYERS)}")
    current = layers(memory)
    wanted = {**current, **{k: bool(v) for k, v in changes.items()}}
    with memory.transaction() as committed:
        if wanted != current or LAYERS_KEY not in memory.meta:
            memory.set_meta(LAYERS_KEY, wanted)
        if purge:
            disabled = {name for name, on in wanted.items() if not on}
            doomed = {
                n.id
                for n in memory.graph.nodes()
                if layer_of(n) in disabled or (layer_of(n) == "identity" and "facts" in disabled)
            }
            if doomed:
                report = DeletionReport(tenant=memory.tenant, action="purge_layers")
                _delete_nodes(memory, doomed, report, now, embedder=embedder)
                _audit(memory, actor, report, now)
    return committed


# ------------------------------------------------------------------ tombstones
def event_hash(tenant: str, event_id: str) -> str:
    """Salted by tenant; the tombstone and audit log keep only this."""
    return hashlib.blake2b(f"{tenant}\x1f{event_id}".encode(), digest_size=16).hexdigest()


def is_forgotten(memory: TenantMemory, event_id: str) -> bool:
    return f"{TOMBSTONE_PREFIX}{event_hash(memory.tenant, event_id)}" in memory.meta


def check_not_forgotten(memory: TenantMemory, event_id: str) -> None:
    """Called by ``FoldEngine.ingest``: refuse a hard-deleted event id."""
    if is_forgotten(memory, event_id):
        raise ForgottenEventError(
            f"event was deleted at the user's request and is refused (tenant {memory.tenant!r})"
        )


# ---------------------------------------------------------------------- export
def export_tenant(memory: TenantMemory, now: datetime) -> dict[str, Any]:
    """Everything held about the tenant at ``now``, JSON-ready. Inferred layers are marked
    inferred."""
    nodes = []
    for node in sorted(memory.graph.nodes(), key=lambda n: (n.kind.value, n.id)):
        data = node.model_dump(mode="json")
        layer = layer_of(node)
        data["layer"] = layer
        data["inferred"] = bool(node.inferred or layer not in ("events", "time"))
        nodes.append(data)
    edges = [e.model_dump(mode="json") for e in memory.graph.edges()]
    edges.sort(key=lambda e: (e["src"], e["dst"], e["kind"]))
    meta = {k: v for k, v in memory.meta.items() if not k.startswith(TOMBSTONE_PREFIX)}
    return {
        "tenant": memory.tenant,
        "exported_at": now.isoformat(),
        "layers": layers(memory),
        "counts": {
            layer: sum(1 for n in nodes if n["layer"] == layer)
            for layer in (
                "events",
                "facts",
                "identity",
                "concepts",
                "core_schemas",
                "intents",
                "time",
            )
        },
        "nodes": nodes,
        "edges": edges,
        "aliases": dict(memory.graph.aliases),
        "event_states": dict(memory.event_states),
        "meta": meta,
        "tombstones": sum(1 for k in memory.meta if k.startswith(TOMBSTONE_PREFIX)),
        "audit": audit_log(memory),
    }


# ---------------------------------------------------------------------- delete
@dataclass
class DeletionReport:
    tenant: str
    action: str
    event_hashes: list[str] = field(default_factory=list)
    deleted: dict[str, list[str]] = field(default_factory=dict)  # kind -> node ids
    relinked: int = 0
    found: bool = True
    changes: ChangeSet | None = None
    # content of the deleted events, for scrubbing copies outside the graph (local output
    # files); never in summary() or the audit: the RawEvent ids and the titles quoted elsewhere
    event_ids: list[str] = field(default_factory=list)
    quotes: list[str] = field(default_factory=list)

    @property
    def deleted_ids(self) -> list[str]:
        return [i for ids in self.deleted.values() for i in ids]

    def summary(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "action": self.action,
            "found": self.found,
            "event_hashes": self.event_hashes,
            "relinked": self.relinked,
            "deleted": {k: len(v) for k, v in self.deleted.items()},
            "deleted_ids": self.deleted_ids,
        }


def evidence_of(memory: TenantMemory, node_id: str) -> set[str]:
    """What a node stands on. Direct evidence (GROUNDS / REINFORCES / USER_FEEDBACK in,
    DERIVED_FROM out) when it has any; otherwise its supporters (TRIGGERS / PART_OF in)."""
    graph = memory.graph
    direct = {e.src for e in graph.in_edges(node_id) if e.kind in _EVIDENCE_IN}
    direct |= {e.dst for e in graph.out_edges(node_id) if e.kind in _EVIDENCE_OUT}
    if direct:
        return direct
    return {e.src for e in graph.in_edges(node_id) if e.kind in _SUPPORT_IN}


def cascade(memory: TenantMemory, seeds: set[str]) -> set[str]:
    """Seeds plus every inferred node whose evidence lies entirely inside the set (fixpoint)."""
    graph = memory.graph
    doomed = set(seeds)
    frontier = list(seeds)
    while frontier:
        current = frontier.pop()
        for other in graph.neighbors(current):
            if other in doomed:
                continue
            node = graph.get(other)
            if node is None:
                continue
            if node.kind in _CASCADE_KINDS:
                evidence = evidence_of(memory, other)
                if evidence and evidence <= doomed:
                    doomed.add(other)
                    frontier.append(other)
            elif node.kind == NodeKind.TIME and graph.neighbors(other) <= doomed:
                doomed.add(other)
    return doomed


def delete_event(
    memory: TenantMemory,
    event_id: str,
    *,
    actor: str = "user",
    now: datetime,
    embedder: Embedder | None = None,
) -> DeletionReport:
    """Hard delete of one RawEvent id with its cascade; the id is tombstoned either way."""
    when = now
    report = DeletionReport(
        tenant=memory.tenant,
        action="forget_event",
        event_hashes=[event_hash(memory.tenant, event_id)],
    )
    with memory.transaction() as changes:
        revisions = _revisions(memory, event_id)  # the event and its edited versions
        seeds = {node_id for node_id, _ in revisions}
        report.found = bool(seeds) or memory.event_state(event_id) is not None
        report.event_ids = sorted({event_id, *(rid for _, rid in revisions)})
        report.quotes = quotes_of(memory, seeds)
        if seeds:
            _delete_nodes(memory, cascade(memory, seeds), report, when, embedder=embedder)
        report.quotes = _no_longer_written(memory, report.quotes)
        _scrub_quotes(memory, report.quotes, when, embedder)
        for raw_id in {event_id, *(rid for _, rid in revisions)}:
            if memory.event_state(raw_id) is not None:
                memory.set_event_state(raw_id, None)
            _scrub_event_refs(memory, raw_id)
        for key in [
            k
            for k in memory.meta
            if k.startswith(REVISION_PREFIX) and k[len(REVISION_PREFIX) :] == event_id
        ]:
            memory.set_meta(key, None)
        memory.set_meta(f"{TOMBSTONE_PREFIX}{report.event_hashes[0]}", {"at": when.isoformat()})
        _audit(memory, actor, report, when)
    report.changes = changes
    log.info(
        "event_forgotten",
        tenant=memory.tenant,
        found=report.found,
        deleted=len(report.deleted_ids),
        relinked=report.relinked,
        actor=actor,
    )
    return report


def _revisions(memory: TenantMemory, event_id: str) -> list[tuple[str, str]]:
    """(node id, RawEvent id) of the event's EVENT node and every revision of it (the fold
    stores an edited event as ``<id>#rev-<fingerprint>`` superseding the previous version)."""
    from topologies.facts.chains import chain_of

    original = memory.graph.get(event_node_id(memory.tenant, event_id))
    if original is None:
        return []
    return [(n.id, n.source_event_id or event_id) for n in chain_of(memory, original.id)]


def delete_node(
    memory: TenantMemory,
    node_id: str,
    *,
    actor: str = "user",
    now: datetime,
    embedder: Embedder | None = None,
) -> DeletionReport:
    """Remove one inferred node (a schema, intent or fact the user rejects) and its cascade."""
    node = memory.graph.get(node_id)
    if node is None:
        raise NotFoundError(f"node {node_id!r} not found in tenant {memory.tenant!r}")
    if node.kind == NodeKind.EVENT:
        if node.source_event_id is None:
            raise PrivacyError("an EVENT node without its RawEvent id cannot be deleted here")
        return delete_event(memory, node.source_event_id, actor=actor, now=now, embedder=embedder)
    when = now
    report = DeletionReport(tenant=memory.tenant, action="forget_node")
    with memory.transaction() as changes:
        _delete_nodes(memory, cascade(memory, {node.id}), report, when, embedder=embedder)
        _audit(memory, actor, report, when)
    report.changes = changes
    return report


def forget_tenant(memory: TenantMemory, *, now: datetime, actor: str = "user") -> DeletionReport:
    """Delete everything held about the tenant. Hashed tombstones of its event ids and the
    audit log are kept, so a replayed stream cannot bring the content back."""
    when = now
    report = DeletionReport(tenant=memory.tenant, action="forget_tenant")
    event_ids = set(memory.event_states)
    event_ids |= {
        n.source_event_id for n in memory.graph.nodes(NodeKind.EVENT) if n.source_event_id
    }
    report.event_hashes = sorted(event_hash(memory.tenant, e) for e in event_ids)
    report.event_ids = sorted(event_ids)
    with memory.transaction() as changes:
        _delete_nodes(memory, {n.id for n in memory.graph.nodes()}, report, when, relink=False)
        for absorbed in list(memory.graph.aliases):
            memory.graph.remove_alias(absorbed)
        for index in memory.indexes.values():
            for vec_id in index.ids():
                index.remove(vec_id)
            index.drop_layout()
        for event_id in list(memory.event_states):
            memory.set_event_state(event_id, None)
        for key in list(memory.meta):
            if not key.startswith(_KEEP_ON_FORGET):
                memory.set_meta(key, None)
        for digest in report.event_hashes:
            memory.set_meta(f"{TOMBSTONE_PREFIX}{digest}", {"at": when.isoformat()})
        _audit(memory, actor, report, when, ids=False)
    report.changes = changes
    log.info(
        "tenant_forgotten",
        tenant=memory.tenant,
        deleted=len(report.deleted_ids),
        events=len(event_ids),
        actor=actor,
    )
    return report


def audit_log(memory: TenantMemory) -> list[dict[str, Any]]:
    entries = [(k, v) for k, v in memory.meta.items() if k.startswith(AUDIT_PREFIX)]
    entries.sort(key=lambda kv: int(kv[0][len(AUDIT_PREFIX) :]))
    return [v for _, v in entries]


# ------------------------------------------------------------------- internals
def _delete_nodes(
    memory: TenantMemory,
    doomed: Iterable[str],
    report: DeletionReport,
    when: datetime,
    relink: bool = True,
    embedder: Embedder | None = None,
) -> None:
    from topologies.facts.chains import unlink_for_removal  # no import cycle at load time

    graph = memory.graph
    doomed = {graph.resolve(i) for i in doomed if graph.get(i) is not None}
    affected = {n for d in doomed for n in graph.neighbors(d)} - doomed
    lost_members = _concepts_of(memory, doomed) - doomed
    if relink:
        report.relinked += unlink_for_removal(memory, doomed, when)
    for node_id in sorted(doomed):
        node = graph.get(node_id)
        if node is None:
            continue
        for name in (node.kind.value, POOL, TOPIC):
            if name in memory.indexes and node_id in memory.indexes[name]:
                memory.indexes[name].remove(node_id)
        graph.remove_node(node_id)
        report.deleted.setdefault(node.kind.value, []).append(node_id)
    for node_id in sorted(affected):
        # a concept that lost members: its centroid is rebuilt from the members left when it
        # is next needed (topologies.topics), so it encodes nothing of the deleted events
        if node_id in memory.index(TOPIC):
            memory.index(TOPIC).remove(node_id)
    for absorbed, keeper in list(graph.aliases.items()):
        if keeper in doomed or absorbed in doomed:
            graph.remove_alias(absorbed)
    if relink:
        namer = Namer(embedder)
        _rename(memory, lost_members, when, embedder, namer)
        _redescribe(memory, affected, report, when, embedder, namer)


def _concepts_of(memory: TenantMemory, node_ids: Iterable[str]) -> set[str]:
    """The concepts these nodes are member events of (``topics.MEMBER_EDGES``)."""
    graph = memory.graph
    return {
        edge.dst
        for node_id in node_ids
        if graph.node(node_id).kind == NodeKind.EVENT
        for kind in MEMBER_EDGES
        for edge in graph.out_edges(node_id, kind)
    }


def _still_written(name: str, texts: list[str]) -> bool:
    """Every content word of the name (a plural as its singular) is in one of the texts."""
    written = {_singular(w.lower()) for text in texts for w in tokens(text)}
    return all(_singular(w.lower()) in written for w in tokens(name) if is_content_word(w))


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _from_nightly(node: Node) -> bool:
    """Written by the nightly engine (its schemas and intents), not by the fold."""
    return str(node.attrs.get("origin", "")).startswith("nightly")


def _rename(
    memory: TenantMemory,
    concepts: set[str],
    when: datetime,
    embedder: Embedder | None,
    namer: Namer,
) -> None:
    """Concepts of the fold that lost member events are summed up again from the members
    left, as a split does (``boundaries.relabelled``), and renamed from them when a word of
    their name is no longer written by any of them: the name said what a deleted event said
    ("Hausverwaltung number", from a deleted message "Send me the Hausverwaltung number"). A
    name the members left still write (an LLM's, say) stays. The nightly's concepts are
    re-worded by ``_redescribe``."""
    if embedder is None:  # names are ranked by vectors: the quotes are scrubbed instead
        return
    graph = memory.graph
    for node_id in sorted(concepts):
        node = graph.get(node_id)
        if node is None or node.core or _from_nightly(node):
            continue
        renamed = relabelled(memory, namer, node_id)
        if renamed is None:
            continue
        if _still_written(node.title, member_texts(memory, node_id)):
            renamed = renamed.model_copy(update={"title": node.title})
        graph.replace_node(renamed.model_copy(update={"updated_at": when}))
        _reembed(memory, node_id, embedder)


def _redescribe(
    memory: TenantMemory,
    affected: set[str],
    report: DeletionReport,
    when: datetime,
    embedder: Embedder | None,
    namer: Namer,
) -> None:
    """Nightly-written nodes that lost evidence are re-worded from what is left, so no quote
    of deleted content survives in them; a core schema left with one member is removed.
    They are named as the nightly named them (``Namer.label_texts`` / ``title_texts``)."""
    graph = memory.graph
    for node_id in sorted(affected):
        node = graph.get(node_id)
        if node is None or not _from_nightly(node):
            continue
        if node.core:
            members = [graph.node(e.src) for e in graph.in_edges(node_id, EdgeKind.PART_OF)]
            if len(members) < 2:
                _delete_nodes(memory, {node_id}, report, when, relink=False)
                continue
            domains = sorted({str(m.attrs.get("domain", m.category or "")) for m in members})
            text = (
                f"Across {', '.join(domains)}: {node.attrs.get('behaviour', '')} Member "
                f"schemas: " + "; ".join(m.title for m in members)
            )
            graph.replace_node(node.model_copy(update={"text": text, "updated_at": when}))
            _reembed(memory, node_id, embedder)
            continue
        texts = [
            graph.node(e.src).text
            for e in graph.in_edges(node_id, EdgeKind.GROUNDS)
            if graph.node(e.src).kind == NodeKind.FACT
        ]
        if not texts:
            continue
        if node.kind == NodeKind.INTENT:
            title = namer.title_texts(texts)
        else:
            title = namer.label_texts(texts)
        graph.replace_node(
            node.model_copy(
                update={
                    "title": title,
                    "text": " | ".join(t[:160] for t in texts[:3]),
                    "updated_at": when,
                }
            )
        )
        _reembed(memory, node_id, embedder)


def _reembed(memory: TenantMemory, node_id: str, embedder: Embedder | None) -> None:
    """A vector of a re-worded node must not keep encoding the deleted words."""
    node = memory.graph.node(node_id)
    index = memory.indexes.get(node.kind.value)
    if index is None or node_id not in index:
        return
    if embedder is None:
        index.remove(node_id)
    else:
        index.upsert(node_id, embedder.embed([node.vector_text])[0])


MIN_QUOTE = 4  # shorter titles are not searched for: they would mask ordinary words
DELETED = "[deleted]"


def quotes_of(memory: TenantMemory, node_ids: Iterable[str]) -> list[str]:
    """What other nodes' texts quote of these EVENT nodes, longest first (a line goes whole
    before the title inside it): the line a concept's summary writes of each
    (``summaries.member_line``; ``legacy_line`` in texts written before it), the name an
    intent's description gives it (``titles.event_name``), and its title, but a chat
    message's title: that is its chat's name, which the chat's other messages share and which
    says nothing the message said."""
    found: set[str] = set()
    for node_id in node_ids:
        node = memory.graph.get(node_id)
        if node is None or node.kind != NodeKind.EVENT:
            continue
        title = " ".join(node.title.split())
        quotes = {member_line(node), event_name(node), title, legacy_line(node)}
        if node.source == "chat" and title:  # the chat's name, whole or cut
            quotes -= {title, legacy_line(node)}
        found.update(quote for quote in quotes if len(quote) >= MIN_QUOTE)
    return sorted(found, key=len, reverse=True)


def _no_longer_written(memory: TenantMemory, quotes: list[str]) -> list[str]:
    """The quotes no event left writes the same way: a subject the deleted mail shared with
    the mails kept of its thread ("Re: Water damage bathroom ceiling, ...") is theirs too,
    and their lines keep it (it was blanked in them: "[deleted] (×2)")."""
    if not quotes:
        return quotes
    kept = set(quotes_of(memory, memory.graph.ids(NodeKind.EVENT)))
    return [quote for quote in quotes if quote not in kept]


def scrub_quotes(text: str, quotes: Iterable[str]) -> str:
    """``text`` with every quoted title replaced by ``[deleted]``."""
    for quote in quotes:
        if quote in text:
            text = text.replace(quote, DELETED)
    return text


def _scrub_quotes(
    memory: TenantMemory, quotes: list[str], when: datetime, embedder: Embedder | None
) -> None:
    """Concepts and intents that survive a deletion but quote a deleted event's title in their
    text (an intent's "evidence DATE: TITLE" lines, a concept's "Recurring: ..." summary)
    lose the quote; their vector is recomputed."""
    if not quotes:
        return
    for kind in (NodeKind.CONCEPT, NodeKind.INTENT):
        for node in list(memory.graph.nodes(kind)):
            text = scrub_quotes(node.text, quotes)
            if text != node.text:
                memory.graph.replace_node(
                    node.model_copy(update={"text": text, "updated_at": when})
                )
                _reembed(memory, node.id, embedder)


def _scrub_event_refs(memory: TenantMemory, event_id: str) -> None:
    """Remove the deleted event's id from the bookkeeping attrs of surviving nodes."""
    for kind in (NodeKind.CONCEPT, NodeKind.INTENT):
        for node in list(memory.graph.nodes(kind)):
            if node.attrs.get("last_reinforced_by") == event_id:
                attrs = {k: v for k, v in node.attrs.items() if k != "last_reinforced_by"}
                memory.graph.replace_node(node.model_copy(update={"attrs": attrs}))


def _audit(
    memory: TenantMemory,
    actor: str,
    report: DeletionReport,
    when: datetime,
    ids: bool = True,
) -> None:
    seq = int(memory.meta.get(AUDIT_SEQ_KEY, 0)) + 1
    memory.set_meta(AUDIT_SEQ_KEY, seq)
    entry: dict[str, Any] = {
        "seq": seq,
        "at": when.isoformat(),
        "actor": actor,
        "action": report.action,
        "event_hashes": report.event_hashes[:1000],
        "counts": {k: len(v) for k, v in report.deleted.items()},
        "relinked": report.relinked,
    }
    if ids:
        entry["node_ids"] = report.deleted_ids[:5000]
    memory.set_meta(f"{AUDIT_PREFIX}{seq}", entry)
