"""The Kafka hub's privacy writes (:class:`stream_app.kafka.hub.KafkaHub` delegates its
``forget_event``, ``forget_tenant`` and ``change_layers`` here).

Each runs under the tenant's lock once it is certain that this worker owns the tenant's
partition, deletes in the tenant's memory (``topologies.privacy``), and writes the ChangeSet
as a hard delete (:meth:`stream_app.kafka.state.KafkaTenantState.hard_delete`): the
deletion records are replaced by tombstones at once instead of at the tenant's next
transaction. The changelog sends are acknowledged before the API answers, then every intent
the deletion removed is retracted on the intents topic.

Recovery replays the changelog and keeps the last value per key, so a recovered worker never
sees the deleted items. Older records of those keys remain in the topic's log segments until
log compaction runs: configure the changelog with ``cleanup.policy=compact``,
``min.compaction.lag.ms``/``max.compaction.lag.ms`` and ``segment.ms`` bounded (for example
24 h) so deleted bytes are physically gone within a known delay (docs/kafka.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemas.intents import RetractionReason
from stream_app.hub.upkeep import intent_statuses, rebuild_derived, retractions
from topologies import privacy
from topologies.memory import ChangeSet, TenantMemory
from topologies.privacy import DeletionReport

if TYPE_CHECKING:
    from collections.abc import Callable

    from stream_app.kafka.hub import KafkaHub


async def forget_event(hub: KafkaHub, tenant: str, event_id: str, actor: str) -> DeletionReport:
    def op(memory: TenantMemory) -> DeletionReport:
        return privacy.delete_event(memory, event_id, actor=actor, embedder=hub.engine.embedder)

    return await _forget(hub, tenant, op, "event_forgotten", create=True)


async def forget_tenant(hub: KafkaHub, tenant: str, actor: str) -> DeletionReport:
    def op(memory: TenantMemory) -> DeletionReport:
        return privacy.forget_tenant(memory, actor=actor)

    return await _forget(hub, tenant, op, "tenant_forgotten", create=False)


async def change_layers(
    hub: KafkaHub, tenant: str, changes: dict[str, bool], purge: bool, actor: str
) -> dict[str, bool]:
    """Opt layers in or out; what a purge deletes is tombstoned at once like a hard delete."""
    async with hub.owned(tenant):
        memory = hub.state.memory(tenant)
        written = privacy.set_layers(
            memory, changes, purge=purge, actor=actor, embedder=hub.engine.embedder
        )
        await _hard_delete(hub, tenant, written)
    return hub.layers(tenant)


async def _forget(
    hub: KafkaHub,
    tenant: str,
    op: Callable[[TenantMemory], DeletionReport],
    reason: RetractionReason,
    create: bool,
) -> DeletionReport:
    async with hub.owned(tenant):
        # a tenant never seen here: NotFoundError (forget), or an empty memory (an event id
        # is tombstoned all the same)
        memory = hub.state.memory(tenant) if create else hub.view(tenant)
        statuses = intent_statuses(memory)
        report = op(memory)
        await _hard_delete(hub, tenant, report.changes)
        await hub.intent_topic.publish(retractions(report, statuses, reason))
    return report


async def _hard_delete(hub: KafkaHub, tenant: str, changes: ChangeSet | None) -> None:
    """Write the privacy ChangeSet (tombstones included), let the derived indexes follow, and
    wait for the changelog before the API answers."""
    if changes is None or changes.empty:
        return
    hub.changelog.hard_delete(changes)
    memory = hub.state.get(tenant)
    if memory is not None:
        rebuild_derived(memory)
    await hub.changelog.settle(tenant)
