"""Chat sources: Slack export (folder and zip), WhatsApp (Android, iOS) and chat JSONL."""

from __future__ import annotations

import shutil
import zipfile
from datetime import UTC, datetime
from pathlib import Path

from connector_helpers import FIXTURES, split

from connectors.chat import ChatJsonlSource, SlackSource, WhatsAppSource

CHAT = FIXTURES / "chat"
SLACK = CHAT / "slack-export"
ANDROID = CHAT / "WhatsApp Chat with Erik Svensson.txt"
IOS = CHAT / "WhatsApp Chat - Familie" / "_chat.txt"


def zip_export(folder: Path, target: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(target, "w") as archive:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                archive.write(file, prefix + file.relative_to(folder).as_posix())
    return target


def test_slack_export_threads_edits_deletions_and_bad_files() -> None:
    events, bads = split(SlackSource(SLACK, "alice").read())
    ids = [e.id for e in events]
    assert ids == [
        "chat:slack:C01ATLAS:1705312800.000200",
        "chat:slack:C01ATLAS:1705314600.000300",
        "chat:slack:C01ATLAS:1705316400.000400",
        "chat:slack:C01ATLAS:1705399200.000100",
        "chat:slack:C01ATLAS:1705400000.000200",
        "chat:slack:D01AB2CD3:1705482000.000100",
    ]  # the channel_join notice is skipped
    assert sorted(b.location for b in bads) == [
        "slack-export:atlas/2024-01-16.json:message 5",
        "slack-export:random/2024-01-15.json",
    ]
    root, reply, carol, budget, deleted, dm = events
    assert root.title == "Bob Builder in #atlas"
    assert root.body == (
        "Kickoff is on Jan 29. @Alice Example can you draft the agenda? "
        "Notes: Atlas doc (https://docs.example.com/atlas)"
    )
    assert root.participants == ["Bob Builder", "Alice Example"]
    assert root.ts == datetime(2024, 1, 15, 10, 0, 0, 200, tzinfo=UTC)
    assert root.attrs["thread_root"] is True and root.attrs["reply_count"] == 2
    for message in (reply, carol):
        assert message.attrs["thread_id"] == root.id and message.attrs["thread_root"] is False
    assert reply.body == "Sure, I'll have a draft by Friday & share it in #atlas"
    assert reply.attrs["edited"] is True
    assert carol.title == "Carol Manager in #atlas"  # name from profile.real_name
    assert carol.body == "Please include the budget review. @here"
    # message_changed: the new text under the original id, once.
    assert budget.body == "Budget v2 attached: travel cut by 10%"
    assert budget.attrs["edited"] is True
    assert budget.attrs["attachments"][0]["filename"] == "atlas-budget-v1.xlsx"
    assert all("Budget v1" not in e.body for e in events)
    # message_deleted: marked once, text gone.
    assert deleted.attrs["deleted"] is True and deleted.body == ""
    assert all("dentist" not in e.body for e in events)
    assert dm.title == "Bob Builder in DM Alice Example, Bob Builder"
    assert all(e.source == "chat" and e.tenant == "alice" for e in events)


def test_slack_deleted_messages_can_be_skipped() -> None:
    events, _ = split(SlackSource(SLACK, "alice", deleted="skip").read())
    assert "chat:slack:C01ATLAS:1705400000.000200" not in {e.id for e in events}
    assert len(events) == 5


def test_slack_zip_equals_folder(tmp_path: Path) -> None:
    folder, _ = split(SlackSource(SLACK, "alice").read())
    flat = zip_export(SLACK, tmp_path / "export.zip")
    nested = zip_export(SLACK, tmp_path / "nested.zip", prefix="Acme Slack export Jan 2024/")
    for archive in (flat, nested):
        events, bads = split(SlackSource(archive, "alice").read())
        assert [e.model_dump() for e in events] == [e.model_dump() for e in folder]
        assert sorted(b.location for b in bads) == [
            f"{archive.name}:atlas/2024-01-16.json:message 5",
            f"{archive.name}:random/2024-01-15.json",
        ]


def test_whatsapp_android_multiline_media_duplicates() -> None:
    events, bads = split(WhatsAppSource(ANDROID, "alice", default_tz="Europe/Berlin").read())
    assert bads == []
    assert len(events) == 9  # the encryption notice is not a message
    assert events[0].title == "Erik Svensson in Erik Svensson"
    assert events[0].ts == datetime(2023, 12, 30, 20, 2, tzinfo=UTC)  # month first, 9:02 PM CET
    assert events[2].body == (
        "My landlord has one on Kastanienallee, 2 rooms.\n"
        "Viewing would be on the 5th at 6pm.\nDeposit is 3 months rent."
    )
    assert events[3].attrs["media_omitted"] is True and events[3].body == ""
    # The same text sent twice in the same minute: two messages, two ids.
    assert events[4].body == events[5].body and events[4].id != events[5].id
    assert events[7].attrs["attachments"] == [
        {"filename": "IMG-20240102-WA0003.jpg", "content_type": None}
    ]
    assert events[7].body == "Floor plan from the agent"
    assert events[8].attrs["deleted"] is True
    assert all(e.id.startswith("chat:whatsapp:") for e in events)


def test_whatsapp_ios_day_first_notices_and_bad_date() -> None:
    events, bads = split(WhatsAppSource(IOS, "alice", default_tz="Europe/Berlin").read())
    assert [e.title for e in events] == [
        "Mama in Familie",
        "Alice in Familie",
        "Mama in Familie",
        "Alice in Familie",
        "Alice in Familie",
    ]
    assert events[0].ts == datetime(2024, 3, 4, 17, 31, 40, tzinfo=UTC)
    assert events[1].body == "Ja, ich bringe den Kuchen mit.\nUnd die Fotos vom letzten Jahr."
    assert events[3].attrs["attachments"][0]["filename"].endswith("PHOTO-2024-03-05-07-02-19.jpg")
    assert [(b.location, "31.02.24" in b.reason) for b in bads] == [("_chat.txt:line 8", True)]


def test_whatsapp_ios_us_format_with_narrow_space_before_pm() -> None:
    path = CHAT / "WhatsApp Chat - Book club.txt"
    events, _ = split(WhatsAppSource(path, "alice", default_tz="America/Los_Angeles").read())
    assert [e.ts for e in events] == [
        datetime(2024, 3, 5, 2, 30, 12, tzinfo=UTC),
        datetime(2024, 3, 5, 2, 31, 2, tzinfo=UTC),
    ]
    assert events[0].attrs["channel"] == "Book club"


def test_whatsapp_ids_survive_a_later_export(tmp_path: Path) -> None:
    first, _ = split(WhatsAppSource(ANDROID, "alice").read())
    later = tmp_path / ANDROID.name
    shutil.copy(ANDROID, later)
    with later.open("a", encoding="utf-8") as fh:
        fh.write("1/3/24, 9:00 AM - Erik Svensson: The landlord said yes!\n")
    second, _ = split(WhatsAppSource(later, "alice").read())
    assert [e.id for e in second[: len(first)]] == [e.id for e in first]
    assert len(second) == len(first) + 1


def test_chat_jsonl_fields_threads_and_bad_lines() -> None:
    events, bads = split(
        ChatJsonlSource(CHAT / "chat.jsonl", "alice", default_tz="Europe/Berlin").read()
    )
    assert [e.body for e in events] == [
        "Standup notes are in the wiki.",
        "Thanks! I'll add the offsite agenda.",
        "Reminder: expense reports due Friday.",
        "(milliseconds epoch as text)",
        "floating time",
    ]
    assert events[1].attrs["thread_id"] == events[0].id
    assert events[0].attrs["platform"] == "mattermost"  # extra keys kept in attrs
    assert events[2].ts == datetime(2024, 1, 22, 8, 10, tzinfo=UTC)
    assert events[3].ts == datetime(2024, 1, 22, 8, 11, 0, 123000, tzinfo=UTC)
    assert events[4].ts == datetime(2024, 1, 22, 9, 30, tzinfo=UTC)  # floating, Berlin
    assert [b.location for b in bads] == [
        "chat.jsonl:line 7",
        "chat.jsonl:line 8",
        "chat.jsonl:line 9",
        "chat.jsonl:line 10",
    ]
    assert "ts" in bads[0].reason and "user" in bads[1].reason and "JSON" in bads[2].reason


def test_chat_sources_reread_identically() -> None:
    for make in (
        lambda: SlackSource(SLACK, "alice"),
        lambda: WhatsAppSource(ANDROID, "alice"),
        lambda: WhatsAppSource(IOS, "alice"),
        lambda: ChatJsonlSource(CHAT / "chat.jsonl", "alice"),
    ):
        a, _ = split(make().read())
        b, _ = split(make().read())
        assert [e.model_dump() for e in a] == [e.model_dump() for e in b]


def test_whatsapp_text_before_the_first_message_is_one_bad_item(tmp_path: Path) -> None:
    path = tmp_path / "WhatsApp Chat with Bob.txt"
    path.write_text("exported by a tool\nsecond junk line\n12/30/23, 9:02 PM - Bob: hi\n")
    events, bads = split(WhatsAppSource(path, "alice").read())
    assert [e.body for e in events] == ["hi"]
    assert [b.location for b in bads] == ["WhatsApp Chat with Bob.txt:lines 1-2"]


def test_chat_jsonl_accepts_the_common_spellings_of_each_field(tmp_path: Path) -> None:
    from connectors.detect import detect_kind

    lines = [
        '{"from": "Bob", "message": "Dinner at eight?", "timestamp": "2024-01-22T19:00:00Z", '
        '"room": "family"}',
        '{"sender": "Ann", "content": "Yes, I will bring dessert.", "time": 1705950060, '
        '"conversation": "family"}',
        '{"author": "Cem", "body": "Count me in.", "date": "2024-01-22T19:02:00+00:00", '
        '"channel": "family"}',
        '{"from": {"name": "Dora", "id": "u4"}, "text": "On my way", "ts": "2024-01-22T19:03:00Z"}',
    ]
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert detect_kind(path) == "chat-jsonl"
    events, bads = split(ChatJsonlSource(path, "alice").read())
    assert bads == []
    assert [e.participants for e in events] == [["Bob"], ["Ann"], ["Cem"], ["Dora"]]
    assert [e.body for e in events] == [
        "Dinner at eight?",
        "Yes, I will bring dessert.",
        "Count me in.",
        "On my way",
    ]
    assert events[1].ts == datetime(2024, 1, 22, 19, 1, tzinfo=UTC)
    assert [e.attrs["channel"] for e in events] == ["family", "family", "family", "export"]
    assert events[0].title == "Bob in family"
    # the spellings are consumed, not repeated in attrs
    assert not {"from", "message", "timestamp", "room"} & set(events[0].attrs)


def test_a_chat_line_without_a_sender_names_the_accepted_spellings(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text('{"channel": "c", "ts": "2024-01-22T19:00:00Z", "text": "hi"}\n')
    _, bads = split(ChatJsonlSource(path, "alice").read())
    assert len(bads) == 1
    assert "sender" in bads[0].reason and "from" in bads[0].reason and "author" in bads[0].reason
