"""What the ingest driver counts, and the summary lines ``foldmem run`` and ``foldmem ingest``
print from it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class IngestStats:
    read: int = 0  # items read (a refused file counts all of its items)
    sent: int = 0  # events handed to the target and not refused
    folded: int = 0
    duplicates: int = 0
    already_sent: int = 0  # passed over: the source's checkpoint holds them
    dead_lettered: int = 0  # bad items and refused events reported now
    reported_before: int = 0  # ... and those a previous run reported
    failed: int = 0  # folds that failed (dead-lettered as fold_failed)
    intents: int = 0
    refolded: int = 0  # stored but unfolded events folded at start-up
    unchanged_sources: int = 0
    seconds: float = 0.0
    folding_seconds: float = 0.0  # of those, the time a delivery was under way
    interrupted: bool = False

    def run_line(self) -> str:
        """``foldmem run``'s summary."""
        return (
            f"read {self.read}, folded {self.folded}, duplicates {self.duplicates}, "
            f"dead-lettered {self.dead_lettered + self.failed}"
            + (f" (+{self.reported_before} reported before)" if self.reported_before else "")
            + f", intents emitted {self.intents}, {self.seconds:.1f}s"
            + self._folding_rate()
        )

    def _folding_rate(self) -> str:
        """The fold rate over the time spent folding, not the time spent waiting for events
        (``foldmem run`` follows its sources until stopped)."""
        if self.folding_seconds <= 0:
            return ""
        if not self.folded:  # duplicates only: no fold to give a rate of
            return f" (folding {self.folding_seconds:.1f}s)"
        rate = self.folded / self.folding_seconds
        return f" (folding {self.folding_seconds:.1f}s, {rate:.1f} events/s)"

    def import_line(self, dry_run: bool = False) -> str:
        """``foldmem ingest``'s summary."""
        rate = self.read / self.seconds if self.seconds > 0 else 0.0
        verb = "would send" if dry_run else "sent"
        parts = [f"read {self.read}", f"{verb} {self.sent}"]
        if self.folded or self.duplicates:
            parts.append(f"folded {self.folded}, duplicates {self.duplicates}")
        parts.append(f"already sent {self.already_sent}")
        known = f" (+{self.reported_before} reported before)" if self.reported_before else ""
        parts.append(f"bad {self.dead_lettered}{known}")
        if self.unchanged_sources:
            parts.append(f"unchanged sources skipped {self.unchanged_sources}")
        parts.append(f"{self.seconds:.1f}s ({rate:.0f} items/s)")
        return ", ".join(parts)
