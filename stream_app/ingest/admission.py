"""Admitting an event at the edge: its times checked against the wall clock.

The engine's time is the tenant's stream clock (the latest event time seen, capped by the
time each event arrived), never the wall clock. The edge (runner, ``foldmem ingest``, HTTP
ingest, the Kafka worker) reads the clock once per event and hands the engine its verdict:

- ``ts`` or ``received_at`` more than ``FOLDMEM_MAX_FUTURE_DAYS`` (730) ahead of the clock:
  refused (:class:`EventTimeError`, dead-lettered or answered 422 with the reason): a wrong
  year or an epoch in milliseconds must not move a stream clock that decay and sweeps read.
- an event dated in the future within that limit (a meeting next month) is folded, stamped
  ``received_at`` = now (a ``received_at`` in the future is lowered to now), so the stream
  clock moves at most to the time the event arrived.
- the past is accepted whatever its age (imports are historical); an old event never moves
  the stream clock back.

The Kafka worker uses the broker's timestamp of the message as "now", so a replay of the
topic admits exactly what the first run admitted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from schemas.errors import InvalidEventError
from schemas.events import RawEvent


def wall_clock() -> datetime:
    return datetime.now(UTC)


class EventTimeError(InvalidEventError):
    """An event time too far ahead of the clock; ``field`` names which one."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Admission:
    max_future: timedelta = timedelta(days=730)
    clock: Callable[[], datetime] = field(default=wall_clock)

    @classmethod
    def of(cls, max_future_days: float) -> Admission:
        return cls(max_future=timedelta(days=max_future_days))

    def admit(self, event: RawEvent, now: datetime | None = None) -> RawEvent:
        """The event to fold (``received_at`` stamped when it is dated ahead of ``now``), or
        EventTimeError."""
        now = now or self.clock()
        self.check(event, now)
        received = event.received_at
        if (received is not None and received > now) or (received is None and event.ts > now):
            return event.model_copy(update={"received_at": now})
        return event

    def check(self, event: RawEvent, now: datetime | None = None) -> None:
        """EventTimeError if a time of the event lies too far ahead of ``now``."""
        now = now or self.clock()
        limit = now + self.max_future
        for name, value in (("ts", event.ts), ("received_at", event.received_at)):
            if value is not None and value > limit:
                days = f"{self.max_future.total_seconds() / 86400:g}"
                raise EventTimeError(
                    name,
                    f"{value.isoformat()} is more than {days} days in the future (the limit "
                    f"is FOLDMEM_MAX_FUTURE_DAYS={days}): a wrong year or an epoch in the wrong "
                    "unit? Refused so it cannot move the tenant's stream clock",
                )
