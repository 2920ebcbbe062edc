"""The durable local store of the embedded mode: one SQLite file per data dir.

Design:

- WAL journal. ``synchronous=FULL`` by default: every commit is fsynced, so a commit that
  returned survives a power loss too. ``NORMAL`` (FOLDMEM_STORE_SYNCHRONOUS) is durable
  against process crashes (``kill -9``) but may roll back the last commits on a power loss;
  that rollback is consistent (fold, outbox and source offset go together), so the source
  is simply re-read from the older offset.
- :meth:`Store.apply` writes one or several ChangeSets, intent messages (outbox) and source
  checkpoints in ONE transaction. The runner commits the ingest ChangeSet (raw event,
  state "stored") before planning, then the fold's ChangeSet with the event's state
  "folded", its intent messages and the source offset: a crash at any point loses no event
  and applies none twice.
- Every tenant row carries a version bumped by each write. A writer states the version it
  last saw; if another process wrote the tenant in between, :class:`StaleTenantError` is
  raised and nothing is written (the caller reloads and retries).
- Vectors are float32 blobs tagged with the embedder's model id; a store built with one
  embedder refuses to be opened with another.
- The intent outbox's delivery state (cursors per sink, ids delivered) lives in this file
  too; :mod:`stream_app.outbox.table` reads and writes it through :meth:`Store.transaction`.

Longer than most modules on purpose: it is one class over one SQLite file, and the schema,
the one transaction that writes a fold with its outbox rows and source offsets, and the reads
of every table share its connection; split by table, that transaction would be spread over
modules.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import structlog

from schemas.errors import StoreError
from schemas.graph import Edge, Node
from schemas.intents import IntentMessage
from stream_app.hub.protocol import Checkpoint, TransientError
from topologies.config import AnnConfig
from topologies.llm.usage import folded_by
from topologies.memory import ChangeSet, TenantMemory
from topologies.planner import PLANNED_BY_KEY
from topologies.vector_index import Vector

log = structlog.get_logger(__name__)

STORE_SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tenants (
  tenant TEXT PRIMARY KEY, version INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS nodes (
  tenant TEXT NOT NULL, id TEXT NOT NULL, kind TEXT NOT NULL, data BLOB NOT NULL,
  PRIMARY KEY (tenant, id));
CREATE TABLE IF NOT EXISTS edges (
  tenant TEXT NOT NULL, src TEXT NOT NULL, dst TEXT NOT NULL, kind TEXT NOT NULL,
  data BLOB NOT NULL, PRIMARY KEY (tenant, src, dst, kind));
CREATE TABLE IF NOT EXISTS aliases (
  tenant TEXT NOT NULL, absorbed TEXT NOT NULL, keeper TEXT NOT NULL,
  PRIMARY KEY (tenant, absorbed));
CREATE TABLE IF NOT EXISTS vectors (
  tenant TEXT NOT NULL, idx TEXT NOT NULL, id TEXT NOT NULL, model TEXT NOT NULL,
  dim INTEGER NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (tenant, idx, id));
CREATE TABLE IF NOT EXISTS tenant_meta (
  tenant TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL, PRIMARY KEY (tenant, key));
CREATE TABLE IF NOT EXISTS event_states (
  tenant TEXT NOT NULL, event_id TEXT NOT NULL, state TEXT NOT NULL,
  PRIMARY KEY (tenant, event_id));
CREATE TABLE IF NOT EXISTS intent_outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, tenant TEXT NOT NULL, message_id TEXT NOT NULL,
  type TEXT NOT NULL, intent_id TEXT NOT NULL, status TEXT NOT NULL, message BLOB NOT NULL,
  created_at TEXT NOT NULL, published INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS intent_outbox_unpublished ON intent_outbox (published, seq);
CREATE TABLE IF NOT EXISTS outbox_cursors (
  sink TEXT PRIMARY KEY, seq INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
  next_at REAL NOT NULL DEFAULT 0, last_error TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS outbox_delivered (
  sink TEXT NOT NULL, message_id TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (sink, message_id));
CREATE TABLE IF NOT EXISTS llm_usage (
  tenant TEXT NOT NULL, day TEXT NOT NULL, counters BLOB NOT NULL, PRIMARY KEY (tenant, day));
CREATE TABLE IF NOT EXISTS source_checkpoints (
  source TEXT PRIMARY KEY, offset INTEGER NOT NULL, inode INTEGER, updated_at TEXT NOT NULL);
"""


class TransientStoreError(StoreError, TransientError):
    """Another process holds or just changed the tenant: try again; never a reason to drop
    an event."""


class StaleTenantError(TransientStoreError):
    """Another process changed the tenant since this one loaded it: reload, then retry."""


class EmbedderMismatchError(StoreError):
    """The store holds vectors of a different embedder model."""


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _json(value: Any) -> bytes:
    return orjson.dumps(value, default=str)


class Store:
    """SQLite persistence of every tenant's memory. Use from one thread (the event loop)."""

    def __init__(self, path: Path, *, synchronous: str = "FULL", readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._model: str | None = None
        try:
            if readonly:
                if not self.path.exists():
                    raise StoreError(f"no foldmem store at {self.path} (run `foldmem run` first)")
                uri = f"file:{self.path}?mode=ro"
                self._db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=30.0)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute(f"PRAGMA synchronous={_synchronous(synchronous)}")
                self._db.executescript(_SCHEMA)
                self._add_column("intent_outbox", "sink", "TEXT NOT NULL DEFAULT ''")
                self._init_meta()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store at {self.path}: {exc}") from exc
        self._db.execute("PRAGMA busy_timeout=30000")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _add_column(self, table: str, column: str, spec: str) -> None:
        """A column a store written by an older foldmem lacks (``''``: the sink a replayed
        outbox row is for, every sink when empty)."""
        have = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
        if column not in have:
            self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {spec}")

    @property
    def connection(self) -> sqlite3.Connection:
        """The store's connection, for the tables other parts keep here (the outbox's)."""
        return self._db

    def transaction(self) -> contextlib.AbstractContextManager[None]:
        """One write transaction (BEGIN IMMEDIATE ... COMMIT, rolled back on error)."""
        return self._tx()

    # -------------------------------------------------------------- store meta
    def _init_meta(self) -> None:
        with self._tx():
            self._db.execute(
                "INSERT OR IGNORE INTO store_meta VALUES ('schema_version', ?)",
                (str(STORE_SCHEMA_VERSION),),
            )
        found = int(self.get_store_meta("schema_version") or STORE_SCHEMA_VERSION)
        if found > STORE_SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has store schema {found}; this foldmem reads up to "
                f"{STORE_SCHEMA_VERSION}: upgrade foldmem"
            )

    def get_store_meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM store_meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def bind_embedder(self, model_id: str, dim: int) -> None:
        """Record the embedder on first use; refuse a different one afterwards."""
        stored = self.get_store_meta("embedder_model")
        stored_dim = self.get_store_meta("embedder_dim")
        if stored is None:
            row = self._db.execute("SELECT model, dim FROM vectors LIMIT 1").fetchone()
            if row is not None:
                stored, stored_dim = str(row[0]), str(row[1])
        if stored is not None and (stored != model_id or int(stored_dim or dim) != dim):
            raise EmbedderMismatchError(
                f"the store {self.path} holds vectors of embedder {stored!r} (dim {stored_dim}); "
                f"the configured embedder is {model_id!r} (dim {dim}). Set FOLDMEM_EMBEDDER to "
                "the embedder the store was built with, or use another FOLDMEM_DATA_DIR."
            )
        if stored is None and not self.readonly:
            with self._tx():
                self._db.execute(
                    "INSERT OR REPLACE INTO store_meta VALUES ('embedder_model', ?)", (model_id,)
                )
                self._db.execute(
                    "INSERT OR REPLACE INTO store_meta VALUES ('embedder_dim', ?)", (str(dim),)
                )

    @property
    def embedder_model(self) -> str | None:
        if self._model is None:
            self._model = self.get_store_meta("embedder_model")
        return self._model

    def data_version(self) -> int:
        """Changes whenever another connection committed (cheap: no I/O)."""
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    # ------------------------------------------------------------ transactions
    @contextmanager
    def _tx(self) -> Iterator[None]:
        if self.readonly:
            raise StoreError("the store is open read-only")
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot start a write transaction: {exc}") from exc
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        try:
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._db.execute("ROLLBACK")
            raise StoreError(f"commit failed: {exc}") from exc

    # ----------------------------------------------------------------- writing
    def apply(
        self,
        changes: ChangeSet | Sequence[ChangeSet] = (),
        *,
        messages: Sequence[IntentMessage] = (),
        checkpoints: Iterable[Checkpoint] = (),
        expected_versions: dict[str, int] | None = None,
    ) -> dict[str, int]:
        """Write everything given in ONE transaction; returns the new version of each tenant.

        ``expected_versions`` (tenant -> version last seen) guards against another process
        having written the tenant meanwhile (:class:`StaleTenantError`, nothing written).
        """
        sets = [changes] if isinstance(changes, ChangeSet) else list(changes)
        tenants = sorted({c.tenant for c in sets} | {m.tenant for m in messages})
        try:
            with self._tx():
                versions = self._bump(tenants, expected_versions or {})
                for change in sets:
                    self._write_changes(change)
                for message in messages:
                    self._write_message(message)
                for cp in checkpoints:
                    self._db.execute(
                        "INSERT OR REPLACE INTO source_checkpoints VALUES (?, ?, ?, ?)",
                        (cp.source, cp.offset, cp.inode, _now()),
                    )
        except sqlite3.Error as exc:
            raise StoreError(f"writing to {self.path} failed: {exc}") from exc
        return versions

    def _bump(self, tenants: Sequence[str], expected: dict[str, int]) -> dict[str, int]:
        versions: dict[str, int] = {}
        for tenant in tenants:
            row = self._db.execute(
                "SELECT version FROM tenants WHERE tenant = ?", (tenant,)
            ).fetchone()
            current = 0 if row is None else int(row[0])
            if tenant in expected and expected[tenant] != current:
                raise StaleTenantError(
                    f"tenant {tenant!r} changed in the store (version {current}, "
                    f"expected {expected[tenant]})"
                )
            if row is None:
                self._db.execute("INSERT INTO tenants VALUES (?, 1, ?)", (tenant, _now()))
            else:
                self._db.execute(
                    "UPDATE tenants SET version = version + 1 WHERE tenant = ?", (tenant,)
                )
            versions[tenant] = current + 1
        return versions

    def _write_changes(self, change: ChangeSet) -> None:
        db, t = self._db, change.tenant
        for node_id, node in change.nodes.items():
            if node is None:
                db.execute("DELETE FROM nodes WHERE tenant = ? AND id = ?", (t, node_id))
            else:
                db.execute(
                    "INSERT OR REPLACE INTO nodes VALUES (?, ?, ?, ?)",
                    (t, node_id, node.kind.value, node.model_dump_json().encode()),
                )
        for (src, dst, kind), edge in change.edges.items():
            if edge is None:
                db.execute(
                    "DELETE FROM edges WHERE tenant = ? AND src = ? AND dst = ? AND kind = ?",
                    (t, src, dst, str(kind)),
                )
            else:
                db.execute(
                    "INSERT OR REPLACE INTO edges VALUES (?, ?, ?, ?, ?)",
                    (t, src, dst, str(kind), edge.model_dump_json().encode()),
                )
        for absorbed, keeper in change.aliases.items():
            if keeper is None:
                db.execute("DELETE FROM aliases WHERE tenant = ? AND absorbed = ?", (t, absorbed))
            else:
                db.execute("INSERT OR REPLACE INTO aliases VALUES (?, ?, ?)", (t, absorbed, keeper))
        if change.vectors:
            model = self.embedder_model
            if model is None:
                raise StoreError("bind_embedder() must be called before vectors are written")
            for (index, node_id), vec in change.vectors.items():
                if vec is None:
                    db.execute(
                        "DELETE FROM vectors WHERE tenant = ? AND idx = ? AND id = ?",
                        (t, index, node_id),
                    )
                else:
                    blob = np.asarray(vec, dtype="<f4").reshape(-1)
                    db.execute(
                        "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?, ?, ?)",
                        (t, index, node_id, model, int(blob.shape[0]), blob.tobytes()),
                    )
        for key, value in change.meta.items():
            if value is None:
                db.execute("DELETE FROM tenant_meta WHERE tenant = ? AND key = ?", (t, key))
            else:
                db.execute(
                    "INSERT OR REPLACE INTO tenant_meta VALUES (?, ?, ?)", (t, key, _json(value))
                )
        for event_id, state in change.events.items():
            if state is None:
                db.execute(
                    "DELETE FROM event_states WHERE tenant = ? AND event_id = ?", (t, event_id)
                )
            else:
                db.execute(
                    "INSERT OR REPLACE INTO event_states VALUES (?, ?, ?)", (t, event_id, state)
                )

    def _write_message(self, message: IntentMessage, sink: str = "") -> None:
        self._db.execute(
            "INSERT INTO intent_outbox "
            "(tenant, message_id, type, intent_id, status, message, created_at, sink) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                message.tenant,
                message.message_id,
                message.type,
                message.intent.id,
                message.intent.status.value,
                message.model_dump_json().encode(),
                _now(),
                sink,
            ),
        )

    def write_messages(self, messages: Sequence[IntentMessage], sink: str = "") -> None:
        """Append intent messages to the outbox outside a fold (messages read from the intents
        topic; dead letters replayed to one ``sink``)."""
        with self._tx():
            for message in messages:
                self._write_message(message, sink)

    # ------------------------------------------------------------ checkpoints
    def checkpoint(self, source: str) -> Checkpoint | None:
        row = self._db.execute(
            "SELECT offset, inode FROM source_checkpoints WHERE source = ?", (source,)
        ).fetchone()
        return None if row is None else Checkpoint(source, int(row[0]), row[1])

    def save_checkpoints(self, checkpoints: Iterable[Checkpoint]) -> None:
        self.apply(checkpoints=list(checkpoints))

    # ----------------------------------------------------------------- reading
    def purge_outbox(self, tenant: str, intent_ids: list[str] | None = None) -> int:
        """Delete a tenant's intent outbox rows (all, or those of ``intent_ids``)."""
        if self.readonly:
            return 0
        with self._tx():
            if intent_ids is None:
                cur = self._db.execute("DELETE FROM intent_outbox WHERE tenant = ?", (tenant,))
            else:
                cur = self._db.executemany(
                    "DELETE FROM intent_outbox WHERE tenant = ? AND intent_id = ?",
                    [(tenant, i) for i in intent_ids],
                )
        self.scrub()
        return int(cur.rowcount or 0)

    def secure_delete(self) -> None:
        """From now on, freed pages of this connection are zeroed (privacy deletes)."""
        if not self.readonly:
            self._db.execute("PRAGMA secure_delete=ON")

    def scrub(self) -> None:
        """Deleted rows must not linger in free pages or WAL frames: secure_delete zeroes
        freed content; a TRUNCATE checkpoint empties the WAL (best effort if readers hold it)."""
        if self.readonly:
            return
        self.secure_delete()
        row = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if row and int(row[0]) != 0:
            log.warning("wal_checkpoint_busy", path=str(self.path))

    def save_usage(self, tenant: str, day: str, counters: dict[str, int]) -> None:
        """Upsert one (tenant, day) row of LLM token accounting (UsageLedger.listener)."""
        with self._tx():
            self._db.execute(
                "INSERT INTO llm_usage (tenant, day, counters) VALUES (?, ?, ?) "
                "ON CONFLICT (tenant, day) DO UPDATE SET counters = excluded.counters",
                (tenant, day, _json(counters)),
            )

    def usage_rows(self, tenant: str | None = None) -> list[tuple[str, str, dict[str, int]]]:
        sql = "SELECT tenant, day, counters FROM llm_usage"
        rows = (
            self._db.execute(sql + " WHERE tenant = ? ORDER BY day", (tenant,))
            if tenant
            else self._db.execute(sql + " ORDER BY tenant, day")
        )
        return [(t, d, orjson.loads(c)) for t, d, c in rows]

    def planned_by(self, tenant: str) -> dict[str, int]:
        """Events folded per plan author, as the engine counted them in the folds."""
        row = self._db.execute(
            "SELECT value FROM tenant_meta WHERE tenant = ? AND key = ?", (tenant, PLANNED_BY_KEY)
        ).fetchone()
        return {str(k): int(v) for k, v in orjson.loads(row[0]).items()} if row else {}

    def folded_by(self, tenant: str) -> dict[str, Any]:
        """Which planner folded the tenant's events, from this data dir (not the settings of
        the reading process): ``topologies.llm.usage.folded_by``."""
        totals: dict[str, int] = {}
        for _, _, counters in self.usage_rows(tenant):
            for name, value in counters.items():
                totals[name] = totals.get(name, 0) + int(value)
        folded = int(self.counts(tenant)["events"].get("folded", 0))
        return folded_by(self.planned_by(tenant), totals, folded)

    def tenants(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT tenant FROM tenants ORDER BY tenant")]

    def versions(self) -> dict[str, int]:
        return {str(t): int(v) for t, v in self._db.execute("SELECT tenant, version FROM tenants")}

    def version(self, tenant: str) -> int:
        row = self._db.execute("SELECT version FROM tenants WHERE tenant = ?", (tenant,)).fetchone()
        return 0 if row is None else int(row[0])

    def load_tenant(
        self, tenant: str, dim: int, *, vectors: bool = True, ann: AnnConfig | None = None
    ) -> tuple[TenantMemory, int]:
        """The tenant's memory as stored, and the version it was read at (one snapshot).

        ``vectors=False`` skips the vector indexes (enough for listing and exporting).
        """
        memory = TenantMemory(tenant, dim, ann)
        db = self._db
        try:
            db.execute("BEGIN")  # one read snapshot for every table
            try:
                version = self.version(tenant)
                nodes = [
                    Node.model_validate_json(r[0])
                    for r in db.execute("SELECT data FROM nodes WHERE tenant = ?", (tenant,))
                ]
                edges = [
                    Edge.model_validate_json(r[0])
                    for r in db.execute("SELECT data FROM edges WHERE tenant = ?", (tenant,))
                ]
                aliases = {
                    str(a): str(k)
                    for a, k in db.execute(
                        "SELECT absorbed, keeper FROM aliases WHERE tenant = ?", (tenant,)
                    )
                }
                vecs = list(self._vectors(tenant, dim)) if vectors else []
                meta = {
                    str(k): orjson.loads(v)
                    for k, v in db.execute(
                        "SELECT key, value FROM tenant_meta WHERE tenant = ?", (tenant,)
                    )
                }
                events = {
                    str(e): str(s)
                    for e, s in db.execute(
                        "SELECT event_id, state FROM event_states WHERE tenant = ?", (tenant,)
                    )
                }
            finally:
                db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"reading tenant {tenant!r} from {self.path} failed: {exc}") from exc
        # Stored vectors are already unit length: load() puts them bit for bit (upsert would
        # normalise again and move the last bits, so a restart would not replay exactly).
        memory.load(nodes, edges, aliases, vecs, meta, events)
        return memory, version

    def _vectors(self, tenant: str, dim: int) -> Iterator[tuple[str, str, Vector]]:
        expected = self.embedder_model
        rows = self._db.execute(
            "SELECT idx, id, model, dim, vec FROM vectors WHERE tenant = ? ORDER BY rowid",
            (tenant,),
        )
        for idx, node_id, model, vdim, blob in rows:
            if (expected is not None and model != expected) or int(vdim) != dim:
                raise EmbedderMismatchError(
                    f"vector {node_id!r} of tenant {tenant!r} was made by {model!r} "
                    f"(dim {vdim}), not by the configured embedder (dim {dim})"
                )
            yield str(idx), str(node_id), np.frombuffer(blob, dtype="<f4").astype(np.float32)

    @property
    def embedder_dim(self) -> int | None:
        value = self.get_store_meta("embedder_dim")
        return None if value is None else int(value)

    def intent_counts(self, tenant: str) -> dict[str, int]:
        rows = self._db.execute(
            "SELECT json_extract(data, '$.status'), COUNT(*) FROM nodes "
            "WHERE tenant = ? AND kind = 'INTENT' GROUP BY 1",
            (tenant,),
        ).fetchall()
        return {str(status): int(n) for status, n in rows}

    def counts(self, tenant: str) -> dict[str, Any]:
        """Node and edge counts by kind, event states, outbox intents by status."""
        db = self._db
        return {
            "nodes": dict(
                db.execute(
                    "SELECT kind, COUNT(*) FROM nodes WHERE tenant = ? GROUP BY kind", (tenant,)
                ).fetchall()
            ),
            "edges": dict(
                db.execute(
                    "SELECT kind, COUNT(*) FROM edges WHERE tenant = ? GROUP BY kind", (tenant,)
                ).fetchall()
            ),
            "events": dict(
                db.execute(
                    "SELECT state, COUNT(*) FROM event_states WHERE tenant = ? GROUP BY state",
                    (tenant,),
                ).fetchall()
            ),
        }


def _synchronous(value: str) -> str:
    upper = value.upper()
    if upper not in ("FULL", "NORMAL", "EXTRA"):
        raise StoreError(f"unsupported synchronous mode {value!r}")
    return upper
