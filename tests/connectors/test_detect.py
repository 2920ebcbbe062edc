"""Source type detection from files and folders, and the kind override."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest
from connector_helpers import FIXTURES, split

from connectors.calendar import IcsSource
from connectors.detect import detect_kind, open_source
from connectors.errors import ConnectorError
from connectors.imap import ImapSource


@pytest.mark.parametrize(
    ("relative", "kind"),
    [
        ("calendar/google.ics", "calendar"),
        ("calendar/truncated.ics", "calendar"),
        ("email/gmail.mbox", "mbox"),
        ("email/thunderbird.mbox", "mbox"),
        ("email/apple/reply_iphone.eml", "eml"),
        ("email/apple/Messages/48213.emlx", "eml"),
        ("email/apple", "eml"),
        ("email/Apple Export.mbox", "mbox"),
        ("chat/slack-export", "slack"),
        ("chat/WhatsApp Chat with Erik Svensson.txt", "whatsapp"),
        ("chat/WhatsApp Chat - Familie", "whatsapp"),
        ("chat/chat.jsonl", "chat-jsonl"),
        ("jsonl/events.jsonl", "jsonl"),
    ],
)
def test_detects_fixture_types(relative: str, kind: str) -> None:
    assert detect_kind(FIXTURES / relative) == kind
    source = open_source(FIXTURES / relative, "alice")
    events, _ = split(source.read())
    assert events, f"{relative} gave no events"


def test_content_sniffing_without_extensions(tmp_path: Path) -> None:
    cases = {
        "calendar/apple.ics": "calendar",
        "email/thunderbird.mbox": "mbox",
        "email/apple/photo.eml": "eml",
        "chat/chat.jsonl": "chat-jsonl",
        "jsonl/events.jsonl": "jsonl",
        "chat/WhatsApp Chat - Book club.txt": "whatsapp",
    }
    for n, (relative, kind) in enumerate(cases.items()):
        target = tmp_path / f"export{n}"
        shutil.copy(FIXTURES / relative, target)
        assert detect_kind(target) == kind, relative


def test_maildir_and_slack_zip(tmp_path: Path) -> None:
    for sub in ("cur", "new", "tmp"):
        (tmp_path / "Mail" / sub).mkdir(parents=True)
    assert detect_kind(tmp_path / "Mail") == "maildir"
    archive = tmp_path / "slack.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for file in (FIXTURES / "chat" / "slack-export").rglob("*.json"):
            zf.write(file, file.relative_to(FIXTURES / "chat" / "slack-export").as_posix())
    assert detect_kind(archive) == "slack"
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("readme.txt", "hello")
    with pytest.raises(ConnectorError, match="cannot tell"):
        open_source(other, "alice")


def test_kind_override_and_unknowns(tmp_path: Path) -> None:
    odd = tmp_path / "calendar-backup.txt"
    shutil.copy(FIXTURES / "email" / "gmail.mbox", odd)
    assert len(split(open_source(odd, "alice", kind="mbox").read())[0]) == 4
    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes\nnothing to see\n")
    with pytest.raises(ConnectorError, match="cannot tell the source type"):
        open_source(notes, "alice")
    with pytest.raises(ConnectorError, match="unknown source kind"):
        open_source(notes, "alice", kind="fax")
    with pytest.raises(ConnectorError, match="no such file"):
        open_source(tmp_path / "missing.ics", "alice")


def test_options_go_to_the_sources_that_take_them() -> None:
    options = {"default_tz": "Europe/Berlin", "deleted": "skip", "window_past": None}
    cal = open_source(FIXTURES / "calendar" / "apple.ics", "alice", default_tz="Europe/Berlin")
    assert isinstance(cal, IcsSource) and str(cal.default_tz) == "Europe/Berlin"
    slack = open_source(FIXTURES / "chat" / "slack-export", "alice", **options)
    assert len(split(slack.read())[0]) == 5  # deleted="skip" applied, default_tz ignored
    with pytest.raises(ConnectorError, match="unknown time zone"):
        open_source(FIXTURES / "calendar" / "apple.ics", "alice", default_tz="Mars/Olympus")


def test_imap_url(tmp_path: Path) -> None:
    source = open_source(
        "imaps://alice%40example.com@imap.example.com/Archive%202024",
        "alice",
        password="pw",
        checkpoint_path=tmp_path / "cp.json",
    )
    assert isinstance(source, ImapSource)
    assert (source.user, source.port, source.folder, source.ssl) == (
        "alice@example.com",
        993,
        "Archive 2024",
        True,
    )
    with pytest.raises(ConnectorError, match="password"):
        open_source("imap://bob@imap.example.com/INBOX", "alice")
