"""Progress of the ingest driver on a terminal: one row per source (items done, a bar when
the source knows its size, the rate, the time taken). :class:`Progress` itself shows nothing
(not a terminal, ``--no-progress``, an HTTP request)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

Advance = Callable[[int], None]


class Progress:
    def task(self, source: Any) -> Advance:
        """The callable that counts ``n`` more items of ``source`` as done."""
        return _nothing


def _nothing(n: int) -> None:
    return None


class ProgressBars(Progress):
    def __init__(self, progress: Any) -> None:
        self._progress = progress

    def task(self, source: Any) -> Advance:
        hint = getattr(source, "size_hint", None)
        total = hint() if callable(hint) else None
        task = self._progress.add_task(Path(str(source.name)).name, total=total or None)

        def advance(n: int) -> None:
            self._progress.advance(task, n)

        return advance


@contextlib.contextmanager
def progress_bars(stream: TextIO, *, shown: bool, transient: bool = False) -> Iterator[Progress]:
    """Bars on ``stream`` while the block runs, if ``shown``. Lines printed on stdout in the
    meantime (intents) appear above the bars."""
    if not shown:
        yield Progress()
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        ProgressColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.progress import Progress as RichProgress
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed or 0:.0f} items/s")

    with RichProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        Rate(),
        TimeElapsedColumn(),
        console=Console(file=stream),
        redirect_stdout=True,
        transient=transient,
    ) as progress:
        yield ProgressBars(progress)
