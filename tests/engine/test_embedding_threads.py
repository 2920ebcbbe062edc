"""The MiniLM session's idle threads sleep: a spinning ONNX Runtime pool kept a core busy
after every call, which doubled the CPU time of a fold (one text per call) and of naming
(a few short phrases per call)."""

from __future__ import annotations

import time

import pytest

from topologies.embedding import MiniLmOnnxEmbedder


@pytest.fixture(scope="module")
def minilm() -> MiniLmOnnxEmbedder:
    try:
        MiniLmOnnxEmbedder.default_paths()
    except Exception as exc:  # the model packages are optional in some environments
        pytest.skip(f"MiniLM model not installed: {exc}")
    return MiniLmOnnxEmbedder(threads=2)


def test_idle_pool_threads_do_not_spin(minilm: MiniLmOnnxEmbedder) -> None:
    session, _ = minilm._runtime
    entry = session.get_session_options().get_session_config_entry(
        "session.intra_op.allow_spinning"
    )
    assert entry == "0"


def test_no_cpu_is_burnt_between_calls(minilm: MiniLmOnnxEmbedder) -> None:
    minilm.embed(["warm up"])
    idle = 0.0
    for n in range(10):
        minilm.embed([f"one short phrase {n}"])
        started = time.process_time()
        time.sleep(0.02)  # the fold does other work between two embeddings
        idle += time.process_time() - started
    assert idle < 0.05  # spinning pools burnt ~0.15 s of CPU in these 0.2 s of pauses
