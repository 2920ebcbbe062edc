"""Hou et al.'s recall probability and consolidation (docs/DESIGN.md section 8), as pure
functions.

``p = (1 - exp(-r * exp(-t / g_n))) / (1 - exp(-1))`` with relevance ``r`` (cosine to the cue),
``t`` days since the last recall (or since encoding) and consolidation ``g_n`` (days), where
``g_n = g_(n-1) + S(dt)`` and ``S(dt) = (1 - exp(-dt)) / (1 + exp(-dt))`` (= tanh(dt / 2)),
``dt`` the gap in days between the last two recalls. S is in [0, 1): a recall right after the
previous one adds almost nothing, a recall a week later adds almost a full day, so spaced
recalls consolidate more than massed ones.

g_0 (``ReadConfig.recall_g0``) = 1 day: encoding counts as one fully spaced "recall", the most
any single recall can add, so the model's time unit and its consolidation unit agree. With it
an unrecalled memory needs r >= 0.78 right after encoding to clear k = 0.86, and its effective
relevance r * exp(-t / g) halves in about 0.7 day; every spaced recall stretches that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

_NORM = 1.0 - math.exp(-1.0)
RECALL_ATTR = "recall"


def recall_probability(relevance: float, elapsed_days: float, consolidation: float) -> float:
    """p in [0, 1] (clamped; the normalisation reaches 1 at r = 1, t = 0)."""
    r = max(0.0, relevance)
    t = max(0.0, elapsed_days)
    g = max(1e-9, consolidation)
    p = (1.0 - math.exp(-r * math.exp(-t / g))) / _NORM
    return min(1.0, max(0.0, p))


def consolidation_gain(gap_days: float) -> float:
    """S(dt) = (1 - exp(-dt)) / (1 + exp(-dt))."""
    dt = max(0.0, gap_days)
    e = math.exp(-dt)
    return (1.0 - e) / (1.0 + e)


def consolidation_step(previous: float, gap_days: float) -> float:
    """g_n = g_(n-1) + S(dt)."""
    return previous + consolidation_gain(gap_days)


def days_between(earlier: datetime, later: datetime) -> float:
    return max(0.0, (later - earlier).total_seconds() / 86400.0)


@dataclass
class RecallState:
    """A node's recall history, stored in ``node.attrs["recall"]``."""

    g: float
    n: int = 0  # recalls so far
    times: list[datetime] = field(default_factory=list)  # most recent last (bounded)

    @classmethod
    def from_attrs(cls, attrs: dict[str, Any], g0: float) -> RecallState:
        raw = attrs.get(RECALL_ATTR)
        if not isinstance(raw, dict):
            return cls(g=g0)
        times = [datetime.fromisoformat(t) for t in raw.get("times", [])]
        return cls(g=float(raw.get("g", g0)), n=int(raw.get("n", 0)), times=times)

    def to_attrs(self) -> dict[str, Any]:
        return {"g": self.g, "n": self.n, "times": [t.isoformat() for t in self.times]}

    def last(self, encoded: datetime | None) -> datetime | None:
        return self.times[-1] if self.times else encoded

    def recalled(self, now: datetime, encoded: datetime | None, keep: int) -> RecallState:
        """The state after a recall at ``now``: dt is the gap since the previous recall."""
        previous = self.last(encoded)
        gap = days_between(previous, now) if previous is not None else 0.0
        times = [*self.times, now][-max(1, keep) :]
        return RecallState(g=consolidation_step(self.g, gap), n=self.n + 1, times=times)
