"""What a concept's text says of its member events (``topologies.summaries``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from schemas.graph import Node, NodeKind
from topologies.summaries import LINE_SIZE, SUMMARY_LINES, clip, concept_text, member_line

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def event(title: str, text: str = "", source: str = "note", hours: int = 0) -> Node:
    ts = T0 + timedelta(hours=hours)
    return Node(id=f"ev_{title}_{hours}", kind=NodeKind.EVENT, tenant="alice", title=title,
                text=text, ts=ts, created_at=ts, updated_at=ts, source=source)  # fmt: skip


def test_a_long_text_is_cut_after_a_whole_word() -> None:
    assert clip("Flights to BKK on 18 Dec went up again", 24) == "Flights to BKK on 18…"
    assert clip("Short   and\nflat", 24) == "Short and flat"


def test_a_chat_message_reads_its_chat_and_what_was_said() -> None:
    said = "Flights to BKK on 18 Dec went up again, 2,960 € for the three of us via Doha."
    line = member_line(event("Jonas Weber", said, source="chat"))
    assert line.startswith("Jonas Weber: Flights to BKK on 18 Dec went up again")
    assert line.endswith("…") and len(line) <= LINE_SIZE


def test_a_mail_reads_its_subject_and_a_titleless_chat_message_what_was_said() -> None:
    assert member_line(event("Go/No-Go for Flux Tariffs", "Hi Alice,", "email")) == (
        "Go/No-Go for Flux Tariffs"
    )
    assert member_line(event("", "Load test run 1 started.", "chat")) == (
        "Load test run 1 started."
    )


def test_the_newest_members_are_summed_up_first_and_a_repeated_line_once() -> None:
    members = [
        event("Week plan", hours=0),
        event("Kiezbrief", hours=1),
        event("Kiezbrief", hours=2),
        event("Run log", hours=3),
    ]
    assert concept_text(members) == "Recurring: Run log; Kiezbrief (×2); Week plan"


def test_a_summary_names_a_few_members() -> None:
    members = [event(f"Note {i}", hours=i) for i in range(SUMMARY_LINES + 3)]
    assert concept_text(members).count("; ") == SUMMARY_LINES - 1
