"""Time expressions of a query ("last week", "in May 2023", "on 8 May", "3 days ago") as
periods of event time, read with :func:`topologies.text.find_dates` against the tenant's
stream clock (never the wall clock).

A period becomes a boost, not a filter: events whose time falls in it, or shortly after it
(people tell of a thing after it happened: ``slack`` x the period's length, at least a day),
rank higher. An explicit ``as_of`` / ``between`` in the request stays the hard filter.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from topologies.text import find_dates


@dataclass(frozen=True)
class Period:
    start: datetime
    end: datetime  # exclusive
    phrase: str


def periods(text: str, now: datetime) -> list[Period]:
    """The periods a query names, resolved against ``now`` (the stream clock)."""
    found = []
    for mention in find_dates(text, now, past=True):
        end = mention.until or mention.when + timedelta(days=1)
        found.append(Period(mention.when, end, mention.phrase))
    return found


def windows(spans: list[Period], slack: float) -> list[tuple[datetime, datetime]]:
    """Each period with the time after it in which people tell of it: ``slack`` x its
    length, at least a day."""
    return [
        (span.start, span.end + max(timedelta(days=1), (span.end - span.start) * slack))
        for span in spans
    ]


def within(when: datetime | None, spans: list[tuple[datetime, datetime]]) -> bool:
    return when is not None and any(start <= when < end for start, end in spans)
