"""Synthetic multi-domain streams for the nightly engine (hashing embedder friendly)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from schemas.events import RawEvent

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]

A = ["billing", "routing", "invoice", "search", "auth", "catalog", "geo", "export"]
B = ["staging", "integration", "smoke", "load", "unit", "canary", "flaky", "contract"]
K = ["knee", "hip", "ankle", "calf", "hamstring", "quad", "shin", "back"]
P = ["swelling", "mobility", "strength", "balance", "stretch", "pain", "range", "gait"]
G = ["tomatoes", "basil", "chillies", "mint", "lettuce", "beans", "thyme", "peas"]
H = ["balcony", "window", "terrace", "allotment", "roof", "porch", "yard", "shed"]

WORK = "Reviewed the {a} pull request and {b} builds ahead of the {c} release cutoff on {d}."
HEALTH = (
    "Checked my {k} stretches with the physio because the {q} clinic deadline "
    "is {d}; {p} improving."
)
HOME = "Watered the {g} on the {h} and repotted the {g2} seedlings on {d} evening."


def domain_stream(tenant: str = "dana", per_domain: int = 5, start: int = 0) -> list[RawEvent]:
    """Three life domains: software work, health recovery, gardening; interleaved."""
    events = []
    for i in range(start, start + per_domain):
        day = DAYS[i % len(DAYS)]
        for j, (source, template) in enumerate((("email", WORK), ("note", HEALTH), ("chat", HOME))):
            events.append(
                RawEvent(
                    id=f"{tenant}-{source}-{i}",
                    tenant=tenant,
                    source=source,
                    ts=T0 + timedelta(days=i, hours=j),
                    title=source,
                    body=template.format(
                        d=f"{day} week {i}",
                        a=A[i % 8],
                        b=B[(i * 3) % 8],
                        c=A[(i + 4) % 8],
                        k=K[i % 8],
                        p=P[(i * 3) % 8],
                        q=K[(i + 4) % 8],
                        g=G[i % 8],
                        h=H[(i * 3) % 8],
                        g2=G[(i + 4) % 8],
                    ),
                )
            )
    return events
