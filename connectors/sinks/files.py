"""Append-only local files that a rewrite cannot lose a line of.

Lines are appended one ``os.write`` each (``O_APPEND``) under an exclusive ``flock``; a
rewrite (a deletion scrubbing what it removed) writes a temporary file beside the original,
fsyncs it and ``os.replace``s it over the original under the same lock. An appender that
opened the file before the replace sees that the inode changed and opens it again.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[int]:
    """An fd of ``path`` opened for appending, exclusively locked, and still ``path``'s inode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                yield fd
                return
        finally:
            os.close(fd)  # closing releases the lock


def append_line(path: Path, line: bytes) -> None:
    """Append one line (one write, O_APPEND) without racing a rewrite."""
    with _locked(path) as fd:
        os.write(fd, line if line.endswith(b"\n") else line + b"\n")


def rewrite_lines(path: Path, keep: Callable[[bytes], bytes | None]) -> int:
    """Rewrite ``path`` atomically with ``keep(line)`` for each line (None drops it); returns
    the number of lines changed or dropped."""
    if not path.exists():
        return 0
    with _locked(path):
        lines = path.read_bytes().splitlines()
        out: list[bytes] = []
        changed = 0
        for line in lines:
            kept = keep(line)
            changed += kept != line
            if kept is not None:
                out.append(kept)
        if not changed:
            return 0
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(b"".join(line + b"\n" for line in out))
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        _fsync_dir(path.parent)
    return changed


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
