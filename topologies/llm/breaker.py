"""A circuit breaker for the model endpoint: closed -> open -> half-open -> closed.

Closed: calls go through; ``failure_threshold`` consecutive failures open it. Open: no calls
(the planner uses the heuristic planner) until ``reset_s`` have passed. Half-open: exactly
one probe call goes through; success closes the breaker, failure opens it again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from enum import StrEnum

import structlog

log = structlog.get_logger(__name__)


class BreakerState(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class CircuitBreaker:
    def __init__(
        self,
        failure_threshold: int = 5,
        reset_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        name: str = "llm",
    ) -> None:
        self.failure_threshold = failure_threshold
        self.reset_s = reset_s
        self.name = name
        self._clock = clock
        self._state = BreakerState.CLOSED
        self._failures = 0
        self._opened_at = 0.0
        self._probe_in_flight = False
        self.opened_count = 0

    @property
    def state(self) -> BreakerState:
        if self._state == BreakerState.OPEN and self._clock() - self._opened_at >= self.reset_s:
            return BreakerState.HALF_OPEN
        return self._state

    def allow(self) -> bool:
        """May a call go out now? In half-open, only one probe at a time."""
        state = self.state
        if state == BreakerState.CLOSED:
            return True
        if state == BreakerState.OPEN:
            return False
        if self._probe_in_flight:
            return False
        if self._state != BreakerState.HALF_OPEN:
            self._state = BreakerState.HALF_OPEN
            log.info("llm_breaker_half_open", breaker=self.name)
        self._probe_in_flight = True
        return True

    def record_success(self) -> None:
        if self._state != BreakerState.CLOSED:
            log.info("llm_breaker_closed", breaker=self.name)
        self._state = BreakerState.CLOSED
        self._failures = 0
        self._probe_in_flight = False

    def record_failure(self) -> None:
        self._failures += 1
        self._probe_in_flight = False
        if self._state == BreakerState.HALF_OPEN or self._failures >= self.failure_threshold:
            if self._state != BreakerState.OPEN:
                self.opened_count += 1
                log.warning(
                    "llm_breaker_open",
                    breaker=self.name,
                    failures=self._failures,
                    reset_s=self.reset_s,
                )
            self._state = BreakerState.OPEN
            self._opened_at = self._clock()

    def release(self) -> None:
        """A permitted call ended without a verdict (e.g. cancelled): free the probe slot."""
        self._probe_in_flight = False

    def status(self) -> dict[str, object]:
        return {
            "state": self.state.value,
            "consecutive_failures": self._failures,
            "times_opened": self.opened_count,
        }
