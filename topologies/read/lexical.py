"""Incremental BM25 over node texts: SQLite FTS5 in memory, one index per tenant.

FTS5 (stdlib ``sqlite3``) gives real deletes and updates, so the index follows every committed
:class:`~topologies.memory.ChangeSet` without a rebuild; ``build`` fills it from a loaded
:class:`~topologies.memory.TenantMemory`. Ranking is FTS5's ``bm25()`` (k1 = 1.2, b = 0.75)
with the Porter stemmer; the query is the OR of its content words.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from datetime import datetime

import structlog

from schemas.graph import Node, NodeKind
from topologies.lexicon import BM25_STOPWORDS
from topologies.memory import EMBEDDED_KINDS, ChangeSet, TenantMemory

log = structlog.get_logger(__name__)

INDEXED_KINDS = frozenset(EMBEDDED_KINDS)
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def terms(text: str) -> list[str]:
    """Lower-cased content words of a query, in order, without duplicates."""
    seen: dict[str, None] = {}
    for token in _TOKEN.findall(text.lower()):
        if token not in BM25_STOPWORDS and token not in seen:
            seen[token] = None
    return list(seen)


class LexicalIndex:
    """BM25 over the embedded kinds (EVENT, FACT, CONCEPT, INTENT) of one tenant."""

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute(
            "CREATE VIRTUAL TABLE docs USING fts5("
            "body, kind UNINDEXED, ts UNINDEXED, "
            "tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        self._rowid: dict[str, int] = {}
        self._text: dict[str, str] = {}
        self._node_at: dict[int, str] = {}
        self._next = 1
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rowid)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._rowid

    # ---------------------------------------------------------------- writing
    def build(self, memory: TenantMemory) -> None:
        """(Re)build from the whole memory, e.g. after a load from the store."""
        with self._lock:
            self._db.execute("DELETE FROM docs")
            self._rowid.clear()
            self._text.clear()
            self._node_at.clear()
            rows = []
            # in id order: equal BM25 scores then rank the same in every process
            nodes = (n for kind in INDEXED_KINDS for n in memory.graph.nodes(kind))
            for node in sorted(nodes, key=lambda n: n.id):
                rows.append(self._stage(node))
            self._db.executemany(
                "INSERT INTO docs(rowid, body, kind, ts) VALUES (?, ?, ?, ?)", rows
            )
        log.debug("lexical_built", tenant=self.tenant, docs=len(self._rowid))

    def apply(self, changes: ChangeSet) -> int:
        """Follow one committed transaction; returns the number of documents touched."""
        touched = 0
        with self._lock:
            for node_id, node in changes.nodes.items():
                if node is None or node.kind not in INDEXED_KINDS:
                    touched += self._delete(node_id)
                else:
                    touched += self._upsert(node)
        return touched

    def sync(self, memory: TenantMemory) -> int:
        """Add / drop documents of nodes created / removed without :meth:`apply` (by id)."""
        present: set[str] = set()
        for kind in INDEXED_KINDS:
            present |= memory.graph.ids(kind)
        with self._lock:
            stale = set(self._rowid) - present
            fresh = present - set(self._rowid)
            for node_id in stale:
                self._delete(node_id)
            for node_id in sorted(fresh):
                self._upsert(memory.graph.node(node_id))
        return len(stale) + len(fresh)

    def add(self, nodes: Iterable[Node]) -> None:
        with self._lock:
            for node in nodes:
                if node.kind in INDEXED_KINDS:
                    self._upsert(node)

    def _stage(self, node: Node) -> tuple[int, str, str, float | None]:
        rowid = self._next
        self._next += 1
        text = node.embed_text
        self._rowid[node.id] = rowid
        self._node_at[rowid] = node.id
        self._text[node.id] = text
        return rowid, text, node.kind.value, node.ts.timestamp() if node.ts else None

    def _upsert(self, node: Node) -> int:
        text = node.embed_text
        if self._text.get(node.id) == text:
            return 0
        self._delete(node.id)
        self._db.execute(
            "INSERT INTO docs(rowid, body, kind, ts) VALUES (?, ?, ?, ?)", self._stage(node)
        )
        return 1

    def _delete(self, node_id: str) -> int:
        rowid = self._rowid.pop(node_id, None)
        if rowid is None:
            return 0
        self._text.pop(node_id, None)
        self._node_at.pop(rowid, None)
        self._db.execute("DELETE FROM docs WHERE rowid = ?", (rowid,))
        return 1

    # ---------------------------------------------------------------- reading
    def search(
        self,
        text: str,
        k: int,
        kinds: Iterable[NodeKind] | None = None,
        spans: Sequence[tuple[datetime, datetime]] = (),
    ) -> list[tuple[str, float]]:
        """The k best node ids with their BM25 score (higher is better), best first; with
        ``spans``, only nodes whose time is in one of the [start, end) intervals."""
        words = terms(text)
        if not words or k <= 0 or not self._rowid:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        sql = "SELECT rowid, -bm25(docs) FROM docs WHERE docs MATCH ?"
        params: list[object] = [match]
        wanted = sorted({NodeKind(k_).value for k_ in kinds}) if kinds is not None else None
        if wanted is not None and len(wanted) < len(INDEXED_KINDS):
            sql += f" AND kind IN ({', '.join('?' for _ in wanted)})"
            params.extend(wanted)
        if spans:
            sql += " AND (" + " OR ".join("(ts >= ? AND ts < ?)" for _ in spans) + ")"
            for start, end in spans:
                params += [start.timestamp(), end.timestamp()]
        sql += " ORDER BY rank LIMIT ?"
        params.append(k)
        with self._lock:
            rows = self._db.execute(sql, params).fetchall()
        return [
            (self._node_at[int(rowid)], float(score))
            for rowid, score in rows
            if int(rowid) in self._node_at
        ]

    def close(self) -> None:
        self._db.close()
