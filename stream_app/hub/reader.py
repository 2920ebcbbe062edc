"""The reader process: a tenant's next batch parsed in a worker process while this batch folds.

spaCy's tokenizer, tagger and parser hold the GIL, so a worker thread parses nothing while
the fold runs; a worker process on the machine's other core does. While one batch folds, the
process parses the texts of the next (its events' titles and bodies, its chat turns) and
analyses its events (:meth:`PhraseParser.reading`), and hands back the Docs as spaCy's
``DocBin`` bytes and the analyses as values: the fold's parser adopts them
(:meth:`PhraseParser.adopt`) and parses none of them itself. The process loads the same
pipeline (:func:`~topologies.naming.phrases.load_pipeline`): the parses are the same whatever
process makes them. The factory hands :func:`shared_reader` to the engine
(``FoldEngine.reader``, a :class:`~topologies.naming.phrases.BatchReader`) when
``FOLDMEM_PARSE_AHEAD`` is on and the process may run on more than one core.

On the synthetic stream (hashing embedder, batches of 64) a batch's parse was about a sixth of
its fold, and reading it back 3% of the parse (0.02 against 0.7 ms a text, 2026-12-05). The
process starts on the first batch read ahead (about 1.3 s, on the other core), holds about
180 MB, and serves every engine of the process (as the parser is shared:
:func:`~topologies.naming.phrases.shared_parser`) until the process exits; it leaves with the
process even when that one is killed.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import lru_cache
from pathlib import Path

import structlog

from topologies.naming.phrases import AnalysisKey, PhraseParser, Reading

log = structlog.get_logger(__name__)

CGROUP = Path("/sys/fs/cgroup")  # where Linux shows a container's CPU quota

_PARSER: list[PhraseParser] = []  # the worker process's own parser (set by _start_worker)


def _start_worker() -> None:
    """The worker process's start: load the pipeline once, and leave with the fold's process
    (one killed, kill -9, leaves its worker waiting for work that never comes)."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with, args=(parent.sentinel,), daemon=True).start()
    _PARSER.append(PhraseParser())


def _exit_with(sentinel: int) -> None:
    """End this process when the process ``sentinel`` stands for ends."""
    multiprocessing.connection.wait([sentinel])
    os._exit(0)


def _pid() -> int:
    """The worker process's task: its process id."""
    return os.getpid()


def _cpu_seconds() -> float:
    """The worker process's task: the CPU time it has used."""
    return time.process_time()


def _read(keys: list[AnalysisKey], texts: list[str]) -> Reading:
    """The worker process's task: read a batch (:meth:`PhraseParser.reading`) and keep
    nothing of it: the fold's process asks only for what its own parser has not read, so a
    cache here would serve nothing, and would hold texts a deletion cannot reach."""
    parser = _PARSER[0]
    try:
        return parser.reading(keys, texts)
    finally:
        parser.clear()


class ReaderProcess:
    """One worker process that reads batches ahead, started on first use. Spawned, not
    forked: the fold's process runs threads (the API's loop, the embedding worker, BLAS)
    that a fork would copy mid-step. A worker that died is replaced, ``MAX_RESTARTS`` times
    at most: then the reader gives up (an error logged once), and every batch parses its
    own texts."""

    MAX_RESTARTS = 3

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._restarts = 0

    @property
    def running(self) -> bool:
        return self._pool is not None

    def submit(self, keys: Sequence[AnalysisKey], texts: Sequence[str]) -> Future[Reading]:
        """Read the keys' events and the texts in the worker process (started if need be);
        a cancelled future once the reader gave up."""
        with self._lock:
            if self._restarts > self.MAX_RESTARTS:
                gone: Future[Reading] = Future()
                gone.cancel()
                return gone
            if self._pool is None:
                self._pool = self._start()
            try:
                return self._pool.submit(_read, list(keys), list(texts))
            except BrokenProcessPool:
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None
                self._restarts += 1
                if self._restarts > self.MAX_RESTARTS:
                    log.error("read_ahead_stopped", reason="the worker process kept dying")
                else:
                    log.warning("read_ahead_restarted", reason="the worker process died")
        return self.submit(keys, texts)

    def pid(self) -> int | None:
        """The worker process's id (None before it starts)."""
        with self._lock:
            pool = self._pool
        return None if pool is None else pool.submit(_pid).result(timeout=60)

    def cpu_seconds(self) -> float:
        """The CPU time the worker process has used (0 before it starts): what a benchmark
        adds to the fold's own."""
        with self._lock:
            pool = self._pool
        return 0.0 if pool is None else pool.submit(_cpu_seconds).result(timeout=60)

    def close(self) -> None:
        """Stop the worker process (a reading under way is dropped)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    @staticmethod
    def _start() -> ProcessPoolExecutor:
        log.info("read_ahead_started")
        return ProcessPoolExecutor(
            1, mp_context=multiprocessing.get_context("spawn"), initializer=_start_worker
        )


@lru_cache(maxsize=1)
def shared_reader() -> ReaderProcess:
    """One reader process per process, for every engine in it (started on first use)."""
    return ReaderProcess()


def cores(cgroup: Path = CGROUP) -> int:
    """The CPUs this process may run on: those it may be scheduled on, fewer where a
    container's CPU quota says so (a worker process on one core gains nothing)."""
    if hasattr(os, "sched_getaffinity"):
        schedulable = len(os.sched_getaffinity(0))
    else:
        schedulable = os.cpu_count() or 1
    quota = quota_cores(cgroup)
    return schedulable if quota is None else min(schedulable, quota)


def quota_cores(cgroup: Path = CGROUP) -> int | None:
    """Whole CPUs of the container's quota (cgroup v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``
    over ``cpu.cfs_period_us``), at least 1; None: no quota, or none to read."""
    try:
        if (cgroup / "cpu.max").exists():
            quota, period = (cgroup / "cpu.max").read_text().split()[:2]
        else:
            quota = (cgroup / "cpu" / "cpu.cfs_quota_us").read_text().strip()
            period = (cgroup / "cpu" / "cpu.cfs_period_us").read_text().strip()
        if quota in ("max", "-1"):
            return None
        return max(1, int(quota) // int(period))
    except (OSError, ValueError):
        return None
