"""One batch ahead per tenant: a newer start replaces (and cancels) the older, the work is
handed over once, and a deletion drops (and cancels) all of it."""

from __future__ import annotations

from concurrent.futures import Future

from topologies.ahead import AheadSlots


def test_a_newer_start_replaces_the_older_and_the_work_is_handed_over_once() -> None:
    slots: AheadSlots[int] = AheadSlots()
    older, newer, other = Future[int](), Future[int](), Future[int]()
    slots.put("alice", older)
    slots.put("bob", other)
    slots.put("alice", newer)
    assert older.cancelled() and not newer.cancelled()
    assert slots.take("alice") is newer
    assert slots.take("alice") is None
    slots.put("bob", None)  # nothing to start for bob's next batch
    assert other.cancelled() and slots.take("bob") is None


def test_a_deletion_drops_every_tenants_work() -> None:
    slots: AheadSlots[int] = AheadSlots()
    futures = [Future[int]() for _ in range(3)]
    for tenant, future in zip(["alice", "bob", "carol"], futures, strict=True):
        slots.put(tenant, future)
    slots.clear()
    assert all(f.cancelled() for f in futures)
    assert slots.take("alice") is None
