"""The reader process (stream_app/hub/reader.py): a worker process that reads a tenant's next
batch while this one folds. It reads what a parser in the fold's own process reads; one that
died is replaced; it leaves with the fold's process, even one killed by SIGKILL; the factory
hands it to the engine when FOLDMEM_PARSE_AHEAD is on."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from stream_app.factory import build_engine
from stream_app.hub import reader as reader_module
from stream_app.hub.reader import ReaderProcess, cores, quota_cores, shared_reader
from tests.app.conftest import app_settings
from tests.engine.test_batch_parse import nodes_of
from tests.engine.test_fold_batch import sample_events
from topologies import reactions
from topologies.naming.phrases import PhraseParser, Reading


def test_the_process_reads_what_a_parser_of_the_fold_reads() -> None:
    nodes = nodes_of(sample_events(30))
    here = PhraseParser()
    keys = here.event_keys(nodes)
    turns = reactions.turn_texts(nodes)
    there = shared_reader().submit(keys, turns).result(timeout=120)
    assert there.analyses == here.analyse(keys)
    assert there.texts == here.reading(keys, turns).texts
    adopter = PhraseParser()
    adopter.adopt(there)
    assert adopter.analyse(keys) == there.analyses and adopter.parsed == 0


def test_the_worker_keeps_nothing_of_what_it_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader_module, "_PARSER", [PhraseParser()])  # the worker's, here
    nodes = nodes_of(sample_events(4))
    keys = PhraseParser().event_keys(nodes)
    reading = reader_module._read(keys, ["I moved to Hamburg in October."])
    assert reading.analyses and "I moved to Hamburg in October." in reading.texts
    assert reader_module._PARSER[0].clear() == 0  # no text a deletion could not reach


def _die() -> None:
    """A worker process's start that fails (a model missing, memory short)."""
    raise SystemExit(1)


class DyingReader(ReaderProcess):
    """A reader whose worker processes die as they start."""

    @staticmethod
    def _start() -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            1, mp_context=multiprocessing.get_context("spawn"), initializer=_die
        )


def test_a_reader_whose_worker_keeps_dying_gives_up_after_its_restarts() -> None:
    reader = DyingReader()
    submitted = 0
    try:
        with capture_logs() as logs:
            future = reader.submit([], ["Lunch with Alice"])
            while not future.cancelled() and submitted < 40:
                with contextlib.suppress(Exception):
                    future.result(timeout=120)
                future = reader.submit([], ["Lunch with Alice"])
                submitted += 1
        assert future.cancelled()  # every batch parses its own texts from here on
        assert [e["event"] for e in logs].count("read_ahead_stopped") == 1
        assert reader.submit([], ["Lunch with Alice"]).cancelled()
    finally:
        reader.close()


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"cpu.max": "150000 100000\n"}, 1),  # v2: 1.5 CPUs, one whole
        ({"cpu.max": "400000 100000\n"}, 4),
        ({"cpu.max": "max 100000\n"}, None),  # no quota
        ({"cpu/cpu.cfs_quota_us": "100000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1),  # v1
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({}, None),  # nothing to read
    ],
)
def test_a_containers_cpu_quota_counts_its_whole_cpus(
    tmp_path: Path, files: dict[str, str], expected: int | None
) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert quota_cores(tmp_path) == expected
    if expected == 1:
        assert cores(tmp_path) == 1  # one core: no reader process


def test_the_factory_hands_the_shared_reader_to_the_engine_when_parse_ahead_is_on(
    tmp_path: Path,
) -> None:
    on = build_engine(app_settings(tmp_path / "on"))
    off = build_engine(app_settings(tmp_path / "off", parse_ahead=False))
    assert on.reader is (shared_reader() if cores() > 1 else None)
    assert off.reader is None


def test_a_worker_process_that_died_is_replaced() -> None:
    reader = ReaderProcess()
    nodes = nodes_of(sample_events(4))
    parser = PhraseParser()
    keys = parser.event_keys(nodes)
    try:
        first = reader.submit(keys, []).result(timeout=120)
        assert first.analyses == parser.analyse(keys)
        dead = reader.pid()
        assert dead is not None
        os.kill(dead, signal.SIGKILL)
        answers: list[Reading] = []
        for _ in range(3):  # the pool learns of its dead worker from a submit or a reading
            try:
                answers.append(reader.submit(keys, []).result(timeout=120))
                break
            except Exception:
                continue
        assert answers and answers[0].analyses == first.analyses
        assert reader.pid() not in (None, dead)  # a new worker answered
    finally:
        reader.close()
    assert not reader.running


FOLD_PROCESS = """
import multiprocessing, time
from stream_app.hub.reader import ReaderProcess

if __name__ == "__main__":
    reader = ReaderProcess()
    reader.submit([], ["Lunch with Alice in Berlin"]).result(timeout=120)
    print("workers", *[child.pid for child in multiprocessing.active_children()], flush=True)
    time.sleep(600)
"""


def ended(pid: int) -> bool:
    """Whether the process is gone (or a zombie nobody reaped)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "State:\tZ" in status


def test_the_worker_process_ends_with_a_fold_process_killed_by_sigkill(tmp_path: Path) -> None:
    script = tmp_path / "fold.py"
    script.write_text(textwrap.dedent(FOLD_PROCESS))
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    fold = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, env=env)
    try:
        assert fold.stdout is not None
        lines = iter(fold.stdout.readline, b"")  # up to the end of its output
        line = next((line for line in lines if line.startswith(b"workers")), b"")
        workers = [int(pid) for pid in line.split()[1:]]
        assert len(workers) == 1
    finally:
        fold.kill()
        fold.wait(timeout=30)
    deadline = time.monotonic() + 30
    while not all(ended(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(ended(pid) for pid in workers)
