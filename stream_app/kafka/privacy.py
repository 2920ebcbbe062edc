"""Hard deletes on the Kafka deployment's changelogged state (issue 7).

:class:`stream_app.kafka.state.KafkaTenantState` writes a deleted item first as a *deletion
record* that still carries the previous payload (so a half-written transaction can be rolled
back) and turns it into a tombstone only at the tenant's next transaction. For a privacy
delete that window is not acceptable: :func:`write_hard_delete` writes the deletion ChangeSet
(records, then the commit marker) and, the marker being queued, immediately replaces every
deletion record of the tenant with a real tombstone (``value = None``).

Recovery replays the changelog and keeps the last value per key, so a recovered worker never
sees the deleted items. Older records of those keys remain in the topic's log segments until
log compaction runs: configure the changelog with ``cleanup.policy=compact``,
``min.compaction.lag.ms``/``max.compaction.lag.ms`` and ``segment.ms`` bounded (for example
24 h) so deleted bytes are physically gone within a known delay.

The Kafka worker (``KafkaHub`` in :mod:`stream_app.kafka.worker`, behind the API's privacy
routes) calls :func:`forget_event_kafka` / :func:`forget_tenant_kafka` /
:func:`set_layers_kafka` under the tenant's lock (the same place it folds), once it has
checked that it owns the tenant's partition, then waits for the changelog sends
(``KafkaWorker.settle``) before it answers.
"""

from __future__ import annotations

import structlog

from stream_app.kafka.state import KafkaTenantState
from topologies.embedding import Embedder
from topologies.memory import ChangeSet
from topologies.privacy import DeletionReport, delete_event, forget_tenant, set_layers

log = structlog.get_logger(__name__)


def write_hard_delete(state: KafkaTenantState, changes: ChangeSet) -> int:
    """Write a privacy ChangeSet, then tombstone its deletion records at once."""
    sent = state.write([changes])
    tenant = changes.tenant
    partition = state.partition_of(tenant)
    tombstones = 0
    for key in state._tombstones.pop(tenant, []):  # committed: the marker is queued before
        state._put(partition, key, None)
        tombstones += 1
    log.info("privacy_changes_written", tenant=tenant, records=sent, tombstones=tombstones)
    return sent + tombstones


def forget_event_kafka(
    state: KafkaTenantState,
    tenant: str,
    event_id: str,
    actor: str,
    embedder: Embedder | None = None,
) -> DeletionReport:
    report = delete_event(state.memory(tenant), event_id, actor=actor, embedder=embedder)
    if report.changes is not None:
        write_hard_delete(state, report.changes)
    return report


def forget_tenant_kafka(state: KafkaTenantState, tenant: str, actor: str) -> DeletionReport:
    report = forget_tenant(state.memory(tenant), actor=actor)
    if report.changes is not None:
        write_hard_delete(state, report.changes)
    return report


def set_layers_kafka(
    state: KafkaTenantState,
    tenant: str,
    changes: dict[str, bool],
    *,
    purge: bool,
    actor: str,
    embedder: Embedder | None = None,
) -> ChangeSet:
    """Opt layers in or out; what a purge deletes is tombstoned at once like a hard delete."""
    written = set_layers(state.memory(tenant), changes, purge=purge, actor=actor, embedder=embedder)
    if not written.empty:
        write_hard_delete(state, written)
    return written
