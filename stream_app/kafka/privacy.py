"""The Kafka hub's privacy writes, in one place (:class:`KafkaPrivacy`, which
:class:`stream_app.kafka.hub.KafkaHub` inherits: ``forget`` an event or a tenant,
``change_layers``).

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

import contextlib
from abc import abstractmethod
from datetime import UTC, datetime

from stream_app.hub.upkeep import (
    Deletion,
    Forgetting,
    intent_statuses,
    rebuild_derived,
    retractions,
)
from stream_app.kafka.changelog import Changelog
from stream_app.kafka.state import KafkaTenantState
from stream_app.kafka.topics import IntentTopic
from topologies import privacy
from topologies.memory import ChangeSet, TenantMemory
from topologies.privacy import DeletionReport


class KafkaPrivacy(Forgetting):
    """The writes; what they need of the hub is declared below (KafkaHub provides it)."""

    state: KafkaTenantState
    changelog: Changelog
    intent_topic: IntentTopic

    @abstractmethod
    def owned(self, tenant: str) -> contextlib.AbstractAsyncContextManager[None]: ...

    @abstractmethod
    def view(self, tenant: str) -> TenantMemory: ...

    @abstractmethod
    def layers(self, tenant: str) -> dict[str, bool]: ...

    async def forget(self, tenant: str, deletion: Deletion) -> DeletionReport:
        async with self.owned(tenant):
            # a tenant never seen here: NotFoundError (forget), or an empty memory (an event
            # id is tombstoned all the same)
            memory = self.state.memory(tenant) if deletion.creates else self.view(tenant)
            statuses = intent_statuses(memory)
            report = deletion.run(memory)
            await self._hard_delete(tenant, report.changes)
            await self.intent_topic.publish(retractions(report, statuses, deletion.reason))
        return report

    async def change_layers(
        self, tenant: str, changes: dict[str, bool], purge: bool, actor: str
    ) -> dict[str, bool]:
        """Opt layers in or out; what a purge deletes is tombstoned at once."""
        async with self.owned(tenant):
            memory = self.state.memory(tenant)
            written = privacy.set_layers(
                memory,
                changes,
                purge=purge,
                actor=actor,
                now=datetime.now(UTC),
                embedder=self.engine.embedder,
            )
            await self._hard_delete(tenant, written)
        return self.layers(tenant)

    async def _hard_delete(self, tenant: str, changes: ChangeSet | None) -> None:
        """Write the privacy ChangeSet (tombstones included), let the derived indexes follow,
        and wait for the changelog before the API answers."""
        if changes is None or changes.empty:
            return
        await self.engine.offload(self.engine.forget_texts)  # as a fold step: none runs then
        self.changelog.hard_delete(changes)
        memory = self.state.get(tenant)
        if memory is not None:
            rebuild_derived(memory)
        await self.changelog.settle(tenant)
