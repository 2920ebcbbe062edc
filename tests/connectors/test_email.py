"""E-mail sources: Gmail/Thunderbird/Apple Mail mbox and eml, Maildir, malformed MIME."""

from __future__ import annotations

import mailbox
import shutil
from datetime import UTC, datetime
from pathlib import Path

from connector_helpers import FIXTURES, split

from connectors.detect import open_source
from connectors.email import EmlSource, MaildirSource, MboxSource, from_line_date
from connectors.mime import decode_bytes, decode_header_value

MAIL = FIXTURES / "email"


def by_subject(events: list) -> dict:
    return {e.title: e for e in events}


def test_gmail_takeout_mbox_threads_html_and_attachments() -> None:
    events, bads = split(MboxSource(MAIL / "gmail.mbox", "alice").read())
    assert bads == [] and len(events) == 4
    root, reply, signed = events[0], events[1], events[2]
    assert root.title == "Lease for Kastanienallee"
    assert root.ts == datetime(2024, 1, 8, 9, 15, tzinfo=UTC)
    assert root.participants == [
        "Erik Svensson <erik@example.se>",
        "Alice Example <alice@example.com>",
    ]
    assert root.attrs["labels"] == ["Inbox", "Important", "Opened", "Category Personal"]
    assert root.attrs["gmail_thread_id"] == "1787654321098765432"
    # Threads: every message points at the root message id and the root's event id.
    for event in (root, reply, signed):
        assert event.attrs["thread_id"] == "CAKx9fz1=AbC123@mail.gmail.com"
        assert event.attrs["thread_event_id"] == root.id
    assert reply.attrs["in_reply_to"] == "CAKx9fz1=AbC123@mail.gmail.com"
    # Quoted reply and "On ... wrote:" (wrapped by quoted-printable) trimmed.
    assert reply.body == "Sure, I will sign it tonight and scan it."
    # Signature trimmed, attachment listed but not inlined.
    assert signed.body == "Signed lease attached."
    assert signed.attrs["attachments"] == [
        {
            "filename": "Mietvertrag_unterschrieben.pdf",
            "content_type": "application/pdf",
            "size": 78,
        }
    ]
    assert "JVBER" not in signed.body
    assert "Landlord, Office <office@hausverwaltung.example.de>" in signed.participants
    # RFC 2047 subject and sender; HTML-only body reduced to text.
    flight = events[3]
    assert flight.title == "Your flight to Lisbon ✈️ is confirmed"
    assert flight.participants[0] == "TAP Air Portugal <no-reply@flytap.example>"
    assert "Booking reference: Q7XK2P" in flight.body
    assert "Flight TP 537 Berlin → Lisbon" in flight.body
    assert "track()" not in flight.body and "color" not in flight.body
    assert flight.attrs["from_html"] is True


def test_thunderbird_mbox_charsets_flowed_quotes_and_fallback_date() -> None:
    events, bads = split(MboxSource(MAIL / "thunderbird.mbox", "alice").read())
    assert bads == [] and len(events) == 4
    invite, answer, legacy, outlook = events
    assert invite.title == "Réunion de lancement à Lyon"
    assert invite.participants[0] == "Jean Dupont (Sécurité) <jean.dupont@exemple.fr>"
    # format=flowed soft breaks joined; QP and ISO-8859-1 decoded; "-- " signature cut.
    assert "Merci de confirmer ta présence avant le 1er février. Les billets" in invite.body
    assert "Responsable" not in invite.body and invite.body.endswith("Cordialement,")
    assert answer.title == "Re: Réunion de lancement à Lyon"
    assert answer.attrs["thread_event_id"] == invite.id
    assert "a écrit" not in answer.body and "aura lieu" not in answer.body
    assert "From the archive: this line was escaped" in answer.body  # mboxrd >From unescaped
    # Unknown charset label with raw 8-bit bytes: decoded by fallback, not dropped.
    assert legacy.title == "Grüße aus München"
    assert legacy.body == "Hallo Alice, viele Grüße aus München! Wir sehen uns am Donnerstag."
    # Outlook reply without Date: time from the mbox From_ line; original message cut.
    assert outlook.ts == datetime(2024, 1, 15, 8, 0, tzinfo=UTC)
    assert outlook.body == "Approved. Please send the PO to procurement by 19 January.\n\nCarol"


def test_apple_mail_eml_emlx_folder() -> None:
    events, bads = split(EmlSource(MAIL / "apple", "alice").read())
    assert bads == [] and len(events) == 3
    subjects = by_subject(events)
    reply = subjects["Re: Flat viewing Tuesday"]
    assert reply.body == "Tuesday works. I’ll bring the deposit in cash."
    photos = subjects["Fotos vom Geburtstag 🎂"]
    assert [a["filename"] for a in photos.attrs["attachments"]] == [
        "IMG_4711.jpeg",
        "Kuchen Rezept für Dana.pdf",  # RFC 2231 encoded
    ]
    assert photos.participants == [
        "Dana Park <dana@example.org>",
        "Alice Example <alice@example.com>",
        "Bob Builder <bob@example.com>",
    ]
    agenda = subjects["Atlas offsite agenda"]  # .emlx: byte count line + message + plist
    assert agenda.body.endswith("Please add your topics by Monday.")
    assert "plist" not in agenda.body


def test_apple_mail_mbox_export_folder_via_open_source() -> None:
    source = open_source(MAIL / "Apple Export.mbox", "alice")
    events, bads = split(source.read())
    assert bads == [] and [e.title for e in events] == [
        "Seattle trip logistics",
        "Re: Seattle trip logistics",
    ]
    assert events[1].body == "Thanks Frank, booking the flight today."
    assert events[1].attrs["thread_event_id"] == events[0].id


def test_malformed_mbox_reports_bad_messages_and_keeps_the_rest() -> None:
    events, bads = split(MboxSource(MAIL / "malformed.mbox", "alice").read())
    assert [e.attrs["message_id"] for e in events] == [
        "good-1@example.com",  # its duplicate (message 5) is not yielded again
        "truncated-mime@example.com",
        "no-boundary@example.com",
    ]
    assert [b.location for b in bads] == ["malformed.mbox:message 3", "malformed.mbox:message 4"]
    assert "no From/To/Date" in bads[0].reason and "date" in bads[1].reason
    truncated = events[1]
    assert truncated.body == "The seating plan is attached. Table 4 is reserved for the board."
    assert truncated.attrs["attachments"][0]["filename"] == "seating.xls"
    assert "CloseBoundaryNotFoundDefect" in truncated.attrs["defects"]
    assert events[2].body == "Vegetarian options: 12. Vegan: 5."


def test_maildir_with_subfolder_gives_the_same_ids_as_eml(tmp_path: Path) -> None:
    root = tmp_path / "Maildir"
    box = mailbox.Maildir(root, create=True)
    sent = box.add_folder("Sent")
    files = sorted((MAIL / "apple").glob("*.eml"))
    box.add(mailbox.MaildirMessage(files[0].read_bytes()))
    sent.add(mailbox.MaildirMessage(files[1].read_bytes()))
    events, bads = split(open_source(root, "alice").read())
    assert isinstance(open_source(root, "alice"), MaildirSource)
    assert bads == [] and len(events) == 2
    assert [e.attrs.get("folder") for e in events] == [None, "Sent"]
    eml_ids = {e.id for e in split(EmlSource(MAIL / "apple", "alice").read())[0]}
    assert {e.id for e in events} <= eml_ids


def test_rereading_and_copying_give_identical_ids(tmp_path: Path) -> None:
    for name in ("gmail.mbox", "thunderbird.mbox", "malformed.mbox"):
        first = split(MboxSource(MAIL / name, "alice").read())[0]
        copy = tmp_path / name
        shutil.copy(MAIL / name, copy)
        second = split(MboxSource(copy, "alice").read())[0]
        assert [e.id for e in first] == [e.id for e in second]
        assert [e.model_dump() for e in first] == [e.model_dump() for e in second]
        assert all(e.id.startswith("email:") and e.source == "email" for e in first)


def test_charset_and_header_fallbacks() -> None:
    assert decode_bytes("Grüße".encode("cp1252"), "x-unknown") == "Grüße"
    assert decode_bytes("Grüße".encode(), "iso-8859-8-i") == "Grüße"
    assert decode_bytes(b"\x81\x8d\xff", "utf-8").count("\ufffd") >= 1
    assert decode_header_value("=?utf-8?B?8J+OgiBQYXJ0eQ==?=") == "🎂 Party"
    assert decode_header_value("=?bogus-charset?Q?caf=E9?=") == "café"
    assert from_line_date(b"From - Wed Jan 10 14:02:11 2024") == datetime(
        2024, 1, 10, 14, 2, 11, tzinfo=UTC
    )
    assert from_line_date(b"From 1787@xxx Mon Jan 08 09:15:02 +0000 2024") is not None
    assert from_line_date(b"From MAILER-DAEMON") is None
