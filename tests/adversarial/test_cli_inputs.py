"""Issue 12 item 12 (and 7 for the CLI): bad input to the command line is one line,
``error: ...``, exit code 2, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]


def foldmem(data_dir: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FOLDMEM_DATA_DIR": str(data_dir), "FOLDMEM_EMBEDDER": "hashing",
           "FOLDMEM_LOG_LEVEL": "warning", "FOLDMEM_SWEEP_INTERVAL": "0"}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "stream_app.cli", *args],
        input=stdin, capture_output=True, env=env, cwd=ROOT, timeout=120, check=False,
    )  # fmt: skip
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(errors="replace"),
        done.stderr.decode(errors="replace"),
    )  # fmt: skip


def assert_clean_error(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout
    assert done.stderr.startswith("error: "), done.stderr[-2000:]
    for word in words:
        assert word in done.stderr


def test_forget_tenant_without_yes_and_without_a_terminal(sample_dir: Path) -> None:
    done = foldmem(sample_dir, "forget-tenant", "--tenant", "alice")
    assert_clean_error(done, "--yes")
    assert "alice" in foldmem(sample_dir, "status").stdout  # nothing was forgotten


@pytest.mark.parametrize(
    "args",
    [
        ["query", "--tenant", "alice", "--as-of", "2026-11-05", "dentist"],
        ["query", "--tenant", "alice", "--since", "2026-11-01", "--until", "2026-11-05", "x"],
        ["query", "--tenant", "alice", ""],
        ["query", "--tenant", "alice", "--k", "0", "dentist"],
        ["recall", "--tenant", "alice", ""],
        ["graph", "export", "--tenant", "alice", "--format", "xml"],
    ],
)
def test_bad_arguments_are_one_line(sample_dir: Path, args: list[str]) -> None:
    assert_clean_error(foldmem(sample_dir, *args))


def test_binary_garbage_is_reported_as_not_utf8(tmp_path: Path) -> None:
    good = {"id": "a", "tenant": "t", "source": "note", "ts": "2026-11-05T10:00:00Z"}
    source = tmp_path / "events.jsonl"
    source.write_bytes(
        orjson.dumps({**good, "title": "fine"}) + b"\n"
        + b'{"id": "b", "tenant": "t", "title": "caf\xe9"}\n'
        + bytes(range(128, 256)) + b"\n"
    )  # fmt: skip
    data = tmp_path / "data"
    done = foldmem(data, "run", "--once", "--no-api", str(source))
    assert done.returncode == 0, done.stderr[-2000:]
    reasons = [orjson.loads(line)["reason"] for line in (data / "deadletter.jsonl").open("rb")]
    assert reasons == ["not valid UTF-8 (byte offset 40)", "not valid UTF-8 (byte offset 0)"]
