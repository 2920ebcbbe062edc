"""Calendar (.ics) source: Google, Outlook and Apple exports, broken files."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from connector_helpers import FIXTURES, REFERENCE, split

from connectors.calendar import IcsSource

CAL = FIXTURES / "calendar"


def read(name: str | Path, **options: object) -> tuple[list, list]:
    path = name if isinstance(name, Path) else CAL / name
    options.setdefault("reference_time", REFERENCE)
    return split(IcsSource(path, "alice", **options).read())  # type: ignore[arg-type]


def by_title(events: list, title: str) -> list:
    return sorted((e for e in events if e.title == title), key=lambda e: e.attrs["recurrence_id"])


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_google_weekly_series_with_exdate_moved_and_cancelled_instance() -> None:
    events, bads = read("google.ics")
    assert bads == []
    weekly = [e for e in events if e.attrs["uid"].startswith("5k2jh3g4")]
    # COUNT=10 Mondays from 8 Jan: one EXDATE, one moved, one cancelled instance.
    assert len(weekly) == 10
    starts = {e.attrs["recurrence_id"]: e for e in weekly}
    assert sorted(starts) == [
        "20240108T090000Z", "20240115T090000Z", "20240122T090000Z", "20240129T090000Z",
        "20240205T090000Z", "20240212T090000Z", "20240219T090000Z", "20240226T090000Z",
        "20240304T090000Z", "20240311T090000Z",
    ]  # fmt: skip
    moved = starts["20240129T090000Z"]
    assert moved.title == "Atlas weekly sync (moved)"
    assert moved.ts == utc(2024, 1, 30, 13, 0)
    assert moved.attrs["location"] == "Room 2.01"
    assert starts["20240205T090000Z"].attrs["status"] == "cancelled"
    assert starts["20240122T090000Z"].attrs["status"] == "cancelled"
    assert starts["20240122T090000Z"].attrs["cancelled_by"] == "EXDATE"
    confirmed = [e for e in weekly if e.attrs["status"] == "confirmed"]
    assert len(confirmed) == 8
    first = starts["20240108T090000Z"]
    assert first.ts == utc(2024, 1, 8, 9, 0)
    assert first.source == "calendar" and first.tenant == "alice"
    assert first.participants == [
        "Bob Builder <bob@example.com>",
        "Alice Example <alice@example.com>",
        "carol@example.org",
    ]
    assert first.attrs["organizer"] == "Bob Builder <bob@example.com>"
    assert first.attrs["location"] == "Room 4.12, Main Building"
    assert first.attrs["conference"] == "https://meet.google.com/abc-defg-hij"
    assert {a["partstat"] for a in first.attrs["attendees"]} == {"accepted", "needs-action"}
    # HTML description reduced to text, Google Meet boilerplate dropped.
    assert "Agenda: shared doc <https://docs.example.com/agenda>" in first.body
    assert "<br>" not in first.body and "-::~" not in first.body
    assert "Weekly sync on the Atlas project." in first.body


def test_cancellation_and_move_keep_the_instance_id(tmp_path: Path) -> None:
    """Removing the EXDATE and the override blocks gives the same ids, now confirmed."""
    text = (CAL / "google.ics").read_bytes().decode()
    blocks = text.split("BEGIN:VEVENT")
    plain = [b for b in blocks if "RECURRENCE-ID" not in b]
    plain_text = "BEGIN:VEVENT".join(plain).replace(
        "EXDATE;TZID=Europe/Berlin:20240122T100000\r\n", ""
    )
    path = tmp_path / "google_plain.ics"
    path.write_text(plain_text)
    before, _ = read(path)
    after, _ = read("google.ics")
    assert {e.id for e in before} == {e.id for e in after}
    status_before = {e.id: e.attrs["status"] for e in before}
    changed = {e.id for e in after if e.attrs["status"] != status_before[e.id]}
    assert len(changed) == 2  # the EXDATE'd and the cancelled instance: updates, not adds
    moved_after = next(e for e in after if e.title.endswith("(moved)"))
    assert next(e for e in before if e.id == moved_after.id).ts == utc(2024, 1, 29, 9, 0)


def test_google_all_day_yearly_and_x_wr_timezone() -> None:
    events, _ = read("google.ics")
    birthdays = [e for e in events if e.title == "Dana's birthday"]
    # Window: 1 March 2023 .. 1 March 2025.
    assert [e.attrs["start"] for e in birthdays] == ["2024-02-14", "2025-02-14"]
    assert all(e.attrs["all_day"] for e in birthdays)
    assert birthdays[0].ts == datetime(2024, 2, 13, 23, 0, tzinfo=UTC)  # midnight in Berlin
    viewing = next(e for e in events if e.title == "Flat viewing with Erik")
    assert viewing.ts == utc(2024, 3, 5, 17, 0)
    assert viewing.ts.utcoffset() == timedelta(hours=1)  # shown in X-WR-TIMEZONE
    assert "recurrence_id" not in viewing.attrs and viewing.attrs["recurring"] is False
    assert len(events) == 13


def test_window_is_configurable_and_single_events_are_always_kept() -> None:
    events, _ = read("google.ics", reference_time=datetime(2025, 6, 1, tzinfo=UTC))
    titles = sorted(e.title for e in events)
    assert "Atlas weekly sync" not in titles
    assert [e.attrs["start"] for e in events if e.title == "Dana's birthday"] == [
        "2025-02-14",
        "2026-02-14",
    ]
    assert "Flat viewing with Erik" in titles
    narrow, _ = read("google.ics", window_past=timedelta(days=14), window_future=timedelta(days=7))
    weekly = sorted(e.attrs["recurrence_id"] for e in narrow if e.title.startswith("Atlas"))
    assert weekly == ["20240219T090000Z", "20240226T090000Z", "20240304T090000Z"]


def test_outlook_windows_zone_names_exceptions_and_all_day() -> None:
    events, bads = read("outlook.ics")
    assert bads == []
    standup = sorted(
        (e for e in events if e.title == "Migration standup"),
        key=lambda e: e.attrs["recurrence_id"],
    )
    assert [e.attrs["recurrence_id"] for e in standup] == [
        "20240226T080000Z", "20240227T080000Z", "20240228T080000Z",
        "20240229T080000Z", "20240301T080000Z", "20240304T080000Z",
    ]  # fmt: skip
    assert standup[0].ts == utc(2024, 2, 26, 8, 0)  # "W. Europe Standard Time" = CET
    assert standup[2].ts == utc(2024, 2, 28, 8, 30)  # the moved exception
    assert standup[4].attrs["status"] == "cancelled"  # EXDATE
    assert standup[0].attrs["organizer"] == "Carol Manager <carol@contoso.com>"
    assert "Microsoft Teams" not in standup[0].body
    assert standup[0].body == "Daily standup for the migration team."
    review = next(e for e in events if e.title == "Q1 review (Seattle)")
    assert review.ts == utc(2024, 3, 12, 17, 0)  # Pacific Standard Time, in DST
    assert review.attrs["status"] == "tentative"
    leave = next(e for e in events if e.title == "Urlaub")
    assert leave.attrs["all_day"] and leave.attrs["end"] == "2024-03-23"
    assert leave.ts == utc(2024, 3, 18)
    assert len(events) == 8


def test_apple_rdate_exdate_and_floating_time() -> None:
    events, bads = read("apple.ics", default_tz="America/New_York")
    assert bads == []
    club = by_title(events, "Book club")
    assert [e.ts.astimezone(UTC).date() for e in club] == [
        date(2024, 1, 16), date(2024, 2, 16), date(2024, 3, 16), date(2024, 4, 16),
        date(2024, 4, 21), date(2024, 5, 16), date(2024, 6, 16),
    ]  # fmt: skip
    assert [e.attrs["status"] for e in club].count("cancelled") == 1
    assert club[3].attrs["cancelled_by"] == "EXDATE"
    assert club[4].ts == datetime(2024, 4, 21, 1, 0, tzinfo=UTC)  # RDATE 18:00 PDT
    assert club[0].attrs["location"].startswith("Green Apple Books\n506 Clement St")
    run = next(e for e in events if e.title == "Morning run")
    assert run.ts == datetime(2024, 3, 10, 12, 30, tzinfo=UTC)  # floating 08:30 in New York (EDT)
    run_utc = next(e for e in read("apple.ics")[0] if e.title == "Morning run")
    assert run_utc.ts == datetime(2024, 3, 10, 8, 30, tzinfo=UTC)
    assert run.id == run_utc.id
    assert len(events) == 9


def test_truncated_file_keeps_the_complete_events() -> None:
    events, bads = read("truncated.ics")
    assert sorted(e.title for e in events) == ["Design review", "Hiring panel"]
    assert len(bads) == 1
    assert bads[0].location == "truncated.ics:line 23"
    assert "truncated" in bads[0].reason


def test_broken_events_are_reported_one_by_one() -> None:
    events, bads = read("broken.ics")
    assert sorted(e.title for e in events) == ["Dentist", "Lunch with Priya"]
    assert [b.location for b in bads] == [
        "broken.ics:VEVENT 2 (UID bad-date@example.com)",
        "broken.ics:VEVENT 3 (UID no-start@example.com)",
        "broken.ics:VEVENT 4 (UID bad-rule@example.com)",
    ]
    assert "DTSTART" in bads[0].reason and "RRULE" in bads[2].reason


def test_rereading_gives_identical_events() -> None:
    for name in ("google.ics", "outlook.ics", "apple.ics", "truncated.ics", "broken.ics"):
        first, _ = read(name)
        second, _ = read(name)
        assert [e.model_dump() for e in first] == [e.model_dump() for e in second]
        assert all(e.id.startswith("calendar:") for e in first)


def test_ids_do_not_depend_on_the_window() -> None:
    def weekly(reference: datetime) -> dict[str, str]:
        events, _ = read("google.ics", reference_time=reference, window_past=timedelta(days=40))
        return {e.attrs["recurrence_id"]: e.id for e in events if e.title.startswith("Atlas")}

    early, late = weekly(REFERENCE), weekly(REFERENCE + timedelta(days=14))
    common = set(early) & set(late)
    assert len(common) >= 4 and set(early) != set(late)
    assert all(early[rid] == late[rid] for rid in common)


def test_a_file_that_is_not_a_calendar_is_reported(tmp_path: Path) -> None:
    junk = tmp_path / "junk.ics"
    junk.write_bytes(b"\x89PNG\r\n\x1a\n not a calendar")
    events, bads = read(junk)
    assert events == [] and [(b.location, b.reason) for b in bads] == [
        ("junk.ics", "not an iCalendar file (no BEGIN:VCALENDAR)")
    ]
    (tmp_path / "empty.ics").write_bytes(b"")
    assert [b.reason for b in read(tmp_path / "empty.ics")[1]] == ["empty file"]
