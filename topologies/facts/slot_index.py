"""The slot index: each holder's most recent current beliefs, so a revision worded nothing
like its predecessor still finds it (the sentence kNN would not).

One meta entry per holder, ``facts.slot.<blake2b(holder)>`` -> fact ids, newest first, at
most ``MAX_PER_HOLDER``; the key is hashed so no holder name outlives a hard delete in the
meta map. Ids of deleted facts are skipped on read; a superseded belief leaves the list when
its revision enters it. Written in the fold transaction like every other meta entry.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from topologies.facts.slots import SELF, Slots
from topologies.memory import TenantMemory

PREFIX = "facts.slot."
MAX_PER_HOLDER = 64


@lru_cache(maxsize=8192)  # a holder's key is looked up for each of its later statements
def _key(holder: str) -> str:
    return PREFIX + hashlib.blake2b(holder.encode("utf-8"), digest_size=10).hexdigest()


def lookup_holders(slots: Slots) -> list[str]:
    """The holder itself, the names it mentions, and for a named holder the author's self."""
    holders = [slots.holder]
    holders += [f"name:{name}" for name in sorted(slots.names)]
    if slots.holder.startswith("name:"):
        holders.append(f"{SELF}:{slots.author}")
    return list(dict.fromkeys(h for h in holders if h))


def recent_heads(memory: TenantMemory, slots: Slots, limit: int) -> list[str]:
    """Up to ``limit`` recent beliefs of each holder the item may be about (each once, where
    its first holder lists it)."""
    out: dict[str, None] = {}
    get = memory.graph.get
    for holder in lookup_holders(slots):
        ids = [i for i in memory.meta.get(_key(holder)) or () if get(i) is not None]
        out.update(dict.fromkeys(ids[:limit]))
    return list(out)


def remember(memory: TenantMemory, slots: Slots, fact_id: str, replaces: str | None) -> None:
    """Put a new current belief first in its holder's list; drop the one it revises."""
    if not slots.asserts:
        return
    if replaces is not None:
        old = memory.graph.get(replaces)
        old_holder = str(old.attrs.get("holder", "")) if old is not None else ""
        if old_holder and old_holder != slots.holder:
            key = _key(old_holder)
            kept = [i for i in memory.meta.get(key) or () if i != replaces]
            memory.set_meta(key, kept or None)
    key = _key(slots.holder)
    ids = [i for i in memory.meta.get(key) or () if i not in (fact_id, replaces)]
    memory.set_meta(key, [fact_id, *ids][:MAX_PER_HOLDER])
