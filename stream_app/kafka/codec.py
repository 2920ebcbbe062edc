"""Byte encodings of the Kafka deployment: table keys, versioned table records, messages
(:func:`parse_event` reads an events-topic message).

The state table (see :mod:`stream_app.kafka.state`) holds one record per stored item of a
tenant, keyed ``tenant 0x1F kind 0x1F item-key``. Kinds:

========  ===========================  ======================================
kind      item key                     payload
========  ===========================  ======================================
``n``     node id                      Node JSON
``e``     src 0x1E dst 0x1E edge kind   Edge JSON
``v``     index name 0x1E node id      little-endian float32 vector bytes
``a``     absorbed node id             surviving node id (UTF-8)
``m``     meta key                     JSON value
``s``     RawEvent id                  event state (UTF-8: stored | folded)
``c``     (empty)                      commit marker: the last committed sequence number
========  ===========================  ======================================

Every item record carries the sequence number of the transaction that wrote it and the
payload it replaced, so a transaction whose commit marker never reached the changelog (a
crash while its writes were in flight) is rolled back on recovery; see kafka_state.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
from pydantic import ValidationError

from schemas.errors import FoldmemError, InvalidEventError
from schemas.events import RawEvent
from schemas.graph import Edge, EdgeKind, Node
from topologies.config import AnnConfig
from topologies.graph import EdgeKey
from topologies.memory import ChangeSet, TenantMemory
from topologies.vector_index import Vector

SEP = "\x1f"
SUB = "\x1e"
NODE, EDGE, VECTOR, ALIAS, META, EVENT, COMMIT = "n", "e", "v", "a", "m", "s", "c"
ITEM_KINDS = (NODE, EDGE, VECTOR, ALIAS, META, EVENT)

_MAGIC = b"FM1"
_HEADER = struct.Struct(">3sQBI")  # magic, seq, flags, len(prev)
_HAS_PREV, _HAS_NEW = 1, 2


class CodecError(FoldmemError):
    """A table record or key could not be decoded."""


# ----------------------------------------------------------------------- messages
def parse_event(raw: bytes | None, key: bytes | None) -> RawEvent:
    """A RawEvent from an events-topic message, or InvalidEventError naming what is wrong."""
    if raw is None:
        raise InvalidEventError("empty message value", raw)
    try:
        event = RawEvent.model_validate_json(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'event'}: {err['msg']}"
            for err in exc.errors()
        )
        raise InvalidEventError(f"invalid RawEvent: {problems}", raw) from exc
    if key is None or key != event.tenant.encode():
        raise InvalidEventError(
            f"message key {key!r} is not the event's tenant {event.tenant!r} "
            "(key events by tenant)",
            raw,
        )
    return event


# --------------------------------------------------------------------------- keys
def table_key(tenant: str, kind: str, item: str) -> bytes:
    return f"{tenant}{SEP}{kind}{SEP}{item}".encode()


def split_key(key: bytes) -> tuple[str, str, str]:
    parts = key.decode().split(SEP, 2)
    if len(parts) != 3:
        raise CodecError(f"malformed state key {key!r}")
    return parts[0], parts[1], parts[2]


def edge_item(key: EdgeKey) -> str:
    src, dst, kind = key
    return f"{src}{SUB}{dst}{SUB}{EdgeKind(kind).value}"


def vector_item(index: str, node_id: str) -> str:
    return f"{index}{SUB}{node_id}"


# ------------------------------------------------------------------------ records
@dataclass(frozen=True)
class Record:
    """One versioned table value: written by transaction ``seq``; ``new`` None = deleted."""

    seq: int
    prev: bytes | None
    new: bytes | None

    def encode(self) -> bytes:
        flags = (_HAS_PREV if self.prev is not None else 0) | (
            _HAS_NEW if self.new is not None else 0
        )
        prev = self.prev or b""
        return _HEADER.pack(_MAGIC, self.seq, flags, len(prev)) + prev + (self.new or b"")

    @classmethod
    def decode(cls, raw: bytes) -> Record:
        if len(raw) < _HEADER.size:
            raise CodecError("truncated state record")
        magic, seq, flags, plen = _HEADER.unpack_from(raw)
        if magic != _MAGIC:
            raise CodecError("state record has an unknown format")
        body = raw[_HEADER.size :]
        prev = body[:plen] if flags & _HAS_PREV else None
        new = body[plen:] if flags & _HAS_NEW else None
        return cls(seq, prev, new)


def encode_seq(seq: int) -> bytes:
    return struct.pack(">Q", seq)


def decode_seq(raw: bytes) -> int:
    return int(struct.unpack(">Q", raw)[0])


# ----------------------------------------------------------------------- payloads
def vector_bytes(vec: Vector) -> bytes:
    return np.asarray(vec, dtype="<f4").reshape(-1).tobytes()


def changeset_items(change: ChangeSet) -> Iterator[tuple[str, str, bytes | None]]:
    """(kind, item key, payload or None for deleted) for everything a ChangeSet names."""
    for node_id, node in change.nodes.items():
        yield NODE, node_id, None if node is None else node.model_dump_json().encode()
    for key, edge in change.edges.items():
        yield EDGE, edge_item(key), None if edge is None else edge.model_dump_json().encode()
    for (index, node_id), vec in change.vectors.items():
        yield VECTOR, vector_item(index, node_id), None if vec is None else vector_bytes(vec)
    for absorbed, keeper in change.aliases.items():
        yield ALIAS, absorbed, None if keeper is None else keeper.encode()
    for meta_key, value in change.meta.items():
        yield META, meta_key, None if value is None else orjson.dumps(value)
    for event_id, state in change.events.items():
        yield EVENT, event_id, None if state is None else state.encode()


def build_memory(
    tenant: str, dim: int, items: dict[tuple[str, str], bytes], ann: AnnConfig | None = None
) -> TenantMemory:
    """A TenantMemory from (kind, item key) -> payload (only live items)."""
    nodes: list[Node] = []
    edges: list[Edge] = []
    aliases: dict[str, str] = {}
    vectors: list[tuple[str, str, Vector]] = []
    meta: dict[str, Any] = {}
    events: dict[str, str] = {}
    for (kind, item), payload in items.items():
        if kind == NODE:
            nodes.append(Node.model_validate_json(payload))
        elif kind == EDGE:
            edges.append(Edge.model_validate_json(payload))
        elif kind == VECTOR:
            index, _, node_id = item.partition(SUB)
            vec = np.frombuffer(payload, dtype="<f4").astype(np.float32)
            if vec.shape[0] != dim:
                raise CodecError(
                    f"vector {node_id!r} of tenant {tenant!r} has dim {vec.shape[0]}, "
                    f"the configured embedder has {dim}"
                )
            vectors.append((index, node_id, vec))
        elif kind == ALIAS:
            aliases[item] = payload.decode()
        elif kind == META:
            meta[item] = orjson.loads(payload)
        elif kind == EVENT:
            events[item] = payload.decode()
    memory = TenantMemory(tenant, dim, ann)
    memory.load(nodes, edges, aliases, vectors, meta, events)
    return memory


def memory_items(memory: TenantMemory) -> dict[tuple[str, str], bytes]:
    """Every item of a TenantMemory as (kind, item key) -> payload (for comparisons)."""
    change = ChangeSet(tenant=memory.tenant)
    for node in memory.graph.nodes():
        change.nodes[node.id] = node
    for _, _, data in memory.graph.g.edges(data=True):
        edge: Edge = data["e"]
        change.edges[(edge.src, edge.dst, edge.kind)] = edge
    for name, index in memory.indexes.items():
        for node_id in (*index.ids(), *index.centroid_ids()):
            change.vectors[(name, node_id)] = index.get(node_id)
    change.aliases.update(memory.graph.aliases)
    change.meta.update(memory.meta)
    change.events.update(memory.event_states)
    return {(k, i): p for k, i, p in changeset_items(change) if p is not None}
