"""Prometheus metrics of a worker (one registry per app instance, nothing global)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from topologies.fold_steps import StepTimes

LagFn = Callable[[], Iterable[tuple[str, int, int]]]  # (topic, partition, lag)
UsageFn = Callable[[], tuple[int, int]]  # (LLM calls, LLM tokens)

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _Dynamic(Collector):
    """Values read at scrape time: consumer lag and the planner's LLM usage."""

    def __init__(self, lag: LagFn, usage: UsageFn) -> None:
        self.lag = lag
        self.usage = usage

    def collect(self) -> Iterable[Metric]:
        lag = GaugeMetricFamily(
            "foldmem_consumer_lag",
            "Messages behind the end of the log",
            labels=["topic", "partition"],
        )
        for topic, partition, value in self.lag():
            lag.add_metric([topic, str(partition)], value)
        yield lag
        calls, tokens = self.usage()
        yield CounterMetricFamily("foldmem_llm_calls", "LLM calls made by the planner", value=calls)
        yield CounterMetricFamily(
            "foldmem_llm_tokens", "LLM tokens used by the planner", value=tokens
        )


class WorkerMetrics:
    def __init__(self, lag: LagFn | None = None, usage: UsageFn | None = None) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.events_folded = Counter(
            "foldmem_events_folded", "Events folded, by outcome", ["status"], registry=r
        )
        self.fold_seconds = Histogram(
            "foldmem_fold_seconds",
            "Time to fold one event (ingest, plan, apply, state write)",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=r,
        )
        self.fold_step_seconds = Counter(
            "foldmem_fold_step_seconds",
            "Seconds folds spent in each step on the fold's thread (topologies/fold_steps.py)",
            ["step"],
            registry=r,
        )
        self.intents_emitted = Counter(
            "foldmem_intents_emitted", "Intent messages published", ["type"], registry=r
        )
        self.deadletters = Counter(
            "foldmem_deadletter", "Messages sent to the dead-letter topic", registry=r
        )
        self.state_records = Counter(
            "foldmem_state_records", "State table records written", registry=r
        )
        self.tenants = Gauge("foldmem_tenants", "Tenants held by this worker", registry=r)
        r.register(_Dynamic(lag or (lambda: ()), usage or (lambda: (0, 0))))

    def observe_steps(self, steps: StepTimes) -> None:
        for step, seconds in steps.seconds.items():
            self.fold_step_seconds.labels(step=step).inc(seconds)

    def render(self) -> bytes:
        return bytes(generate_latest(self.registry))
