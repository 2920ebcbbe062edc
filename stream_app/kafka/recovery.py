"""Faust's table recovery, with the events partitions read from their committed offsets only.

When a worker is assigned partitions, Faust replays the changelog (the consumer's flow is on for
that), then ``Recovery.on_recovery_completed`` resumes the events partitions and only then seeks
them to their committed offsets (a round trip to the broker). In between, the still-running
fetcher hands the agent events from wherever the consumer stood. The seek resets the consumer's
read offsets, but the fetcher goes on draining the records it already holds, which moves the
read offsets past the committed ones again; Faust's ``flow_control.resume()`` after the seek
then clears the agent's queue, and what the queue held is never read again: its offsets are
below the read offset, so their refetch is dropped ("DROPPED MESSAGE ROFF" in Faust's dev log).

With batches this lost events after a kill -9 (docs/kafka.md, "A lost event after a restart"):
the new worker's take buffer filled with 64 redelivered events while the seek was under way,
the rest waited in the queue, and the two events at its head were cleared and never folded.

:class:`SeekedRecovery` stops the consumer's flow before Faust resumes the events partitions:
nothing is fetched or delivered until the seek is done and Faust resumes the flow itself, so
the agent reads each events partition from its committed offset. Events handed over before
that (fetched while the changelog was replayed) are folded, then come again as duplicates:
nothing is lost or applied twice.

That seek moves only the partitions with a committed offset (aiokafka seeks an offset above
0 and leaves the others where the fetcher stands), and the fetcher can move them before it: the
long poll under way while the changelog is replayed reads Faust's set of active partitions as
it changes, so it can return an events partition's prefetched records, which Faust drops (the
flow is stopped, or the partition still paused) and expects the seek to bring back. A worker
killed before its first offset commit leaves no committed offset: the new worker's partition
stayed past those events, and it waited for events that had already gone by (the kill -9 test
timed out with a silent worker, docs/kafka.md). :class:`RewindingConsumer` seeks a stream
partition without a committed offset to its start, where a new consumer group starts
(``auto_offset_reset="earliest"``); what the recovered state already holds comes again as
duplicates. It seeks to the partition's first offset, asked of the broker, not to "the
beginning": aiokafka resolves that later, and until it has, the partition has no position.
Faust's livelock check reads every partition's position and aiokafka asserts it is set, so a
check in that window crashed the new worker (the kill -9 test on a loaded machine,
docs/kafka.md). The check skips a partition without a position (one aiokafka is resetting after
an offset out of range, too).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog
from aiokafka import TopicPartition
from faust.tables import TableManager
from faust.tables.recovery import Recovery
from faust.transport.drivers import aiokafka as aiokafka_driver
from faust.types import TP

log = structlog.get_logger(__name__)


class SeekedRecovery(Recovery):
    """Recovery that holds the events until their partitions are seeked (module docstring)."""

    async def on_recovery_completed(self, generation_id: int = 0) -> None:
        """The changelog is replayed: stop the consumer's flow, then let Faust resume the
        events partitions, seek them to their committed offsets and resume the flow."""
        self.app.consumer.stop_flow()
        await super().on_recovery_completed(generation_id)


class SeekedTableManager(TableManager):
    """Faust's table manager with :class:`SeekedRecovery` (``faust.App(TableManager=...)``)."""

    @property
    def recovery(self) -> Recovery:
        if self._recovery is None:
            self._recovery = SeekedRecovery(self.app, self, beacon=self.beacon, loop=self.loop)
        return self._recovery


class RewindingConsumer(aiokafka_driver.Consumer):
    """Faust's aiokafka consumer whose seek to the committed offsets also seeks each stream
    partition without one (none, or 0) to its start (module docstring). Changelog partitions
    are left alone: the recovery reads them from offsets of its own."""

    async def seek_to_committed(self) -> Mapping[TP, int]:
        committed: Mapping[Any, int] = await super().seek_to_committed()
        uncommitted = [
            tp for tp, offset in committed.items() if not offset and not self._is_changelog_tp(tp)
        ]
        if uncommitted:
            await self._rewind(uncommitted)
        return committed

    async def _rewind(self, partitions: list[TP]) -> None:
        """Seek the partitions to their first offsets, asked of the broker: a seek to an
        offset leaves the partition a position at once (module docstring). It runs in the
        consumer's thread, as Faust's own seeks do; a partition the broker gives no first
        offset for (an old message format) is sent to the beginning instead."""
        first = await self._thread.earliest_offsets(*partitions)
        known = {tp: offset for tp, offset in first.items() if offset is not None and offset >= 0}
        if known:
            await self._thread.seek_wait(known)
        rest = [tp for tp in partitions if tp not in known]
        if rest:
            await self._thread.seek_to_beginning(*rest)
        log.info(
            "events_partitions_rewound",
            to={tp.partition: offset for tp, offset in known.items()},
            to_beginning=sorted(tp.partition for tp in rest),
        )

    def verify_event_path(self, now: float, tp: TP) -> None:
        """Faust's livelock check of one partition: a diagnostic, which logs and must not
        crash the worker. It reads the partition's position, which aiokafka asserts is set: a
        partition being reset has none, and is skipped (module docstring). aiokafka runs in
        its own thread and can start a reset between that look and the read: the assertion
        is then logged instead."""
        if self._resetting(tp):
            return None
        try:
            return super().verify_event_path(now, tp)
        except AssertionError:
            log.warning("livelock_check_skipped", topic=tp.topic, partition=tp.partition)
            return None

    def _resetting(self, tp: TP) -> bool:
        """The partition is assigned and has no position (or there is no subscription to
        read, where Faust's check fails too); read where Faust's check reads it."""
        subscription = self._thread._ensure_consumer()._fetcher._subscriptions.subscription
        if subscription is None:
            return True
        if subscription.assignment is None:  # Faust's check says so itself
            return False
        state = subscription.assignment.state_value(TopicPartition(tp.topic, tp.partition))
        return state is not None and not state.has_valid_position


class RewindingTransport(aiokafka_driver.Transport):
    """The aiokafka transport with :class:`RewindingConsumer` (``app.transport``)."""

    Consumer = RewindingConsumer
