"""`foldmem run --once` folds without a server; a taken port says how to choose another."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.conftest import invoke, make_stream, write_jsonl


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port some other program is listening on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        yield int(sock.getsockname()[1])


def test_run_once_needs_no_api_port(
    data_dir: Path, tmp_path: Path, taken_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOLDMEM_API_PORT", str(taken_port))
    stream = write_jsonl(tmp_path / "s.jsonl", make_stream(3))
    code, out, err = invoke("run", "--once", str(stream))
    assert code == 0, err
    assert "folded 3" in err
    assert "read API on" not in out


def test_run_once_with_an_explicit_port_serves_and_a_taken_one_says_what_to_do(
    data_dir: Path, tmp_path: Path, taken_port: int
) -> None:
    stream = write_jsonl(tmp_path / "s.jsonl", make_stream(2))
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    code, out, err = invoke("run", "--once", "--api-port", str(port), str(stream))
    assert code == 0, err
    assert f"read API on http://127.0.0.1:{port}" in out

    code, _, err = invoke("run", "--once", "--api-port", str(taken_port), str(stream))
    assert code == 2 and "Traceback" not in err
    assert f"127.0.0.1:{taken_port}" in err
    assert "--api-port" in err and "FOLDMEM_API_PORT" in err and "--no-api" in err


def test_serve_on_a_taken_port_names_the_options_of_serve(data_dir: Path, taken_port: int) -> None:
    invoke("run", "--once", "--no-api", str(write_jsonl(data_dir.parent / "e.jsonl", [])))
    code, _, err = invoke("serve", "--api-port", str(taken_port))
    assert code == 2 and "--api-port" in err
    assert "--no-api" not in err  # serve has no such option
