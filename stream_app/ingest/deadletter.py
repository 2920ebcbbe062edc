"""DATA_DIR/deadletter.jsonl: every item refused on the way in, with its source, location and
reason, never dropped silently. Appends take the lock a deletion's rewrite takes
(:mod:`connectors.sinks.files`), so a forget never loses a line written meanwhile."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import orjson
import structlog

from connectors.sinks.files import append_line

log = structlog.get_logger(__name__)


class DeadLetter:
    def __init__(self, path: Path) -> None:
        self.path = path

    def write(
        self,
        source: str,
        location: str,
        reason: str,
        kind: str = "invalid",
        *,
        tenant: str | None = None,
        event_id: str | None = None,
    ) -> None:
        """``tenant`` and ``event_id``, when known, let a deletion find the record."""
        record: dict[str, str] = {
            "at": datetime.now(UTC).isoformat(),
            "kind": kind,
            "source": source,
            "location": location,
            "reason": reason,
        }
        if tenant is not None:
            record["tenant"] = tenant
        if event_id is not None:
            record["event_id"] = event_id
        append_line(self.path, orjson.dumps(record))
        log.warning("dead_letter", source=source, location=location, reason=reason, kind=kind)
