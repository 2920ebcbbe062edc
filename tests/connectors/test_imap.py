"""IMAP polling against a real (tiny) IMAP server on loopback, with a UID checkpoint."""

from __future__ import annotations

import asyncio
import json
import mailbox
from pathlib import Path

import pytest
from connector_helpers import FIXTURES, Mailbox, split

from connectors.errors import ConnectorError
from connectors.imap import ImapSource


def gmail_messages() -> list[bytes]:
    box = mailbox.mbox(FIXTURES / "email" / "gmail.mbox", create=False)
    try:
        return [box.get_bytes(key) for key in box.iterkeys()]
    finally:
        box.close()


def source(server: tuple[str, int, Mailbox], checkpoint: Path, **kw: object) -> ImapSource:
    host, port, box = server
    return ImapSource(
        host,
        "alice",
        user=box.user,
        password=box.password,
        port=port,
        ssl=False,
        checkpoint_path=checkpoint,
        batch_size=2,
        **kw,  # type: ignore[arg-type]
    )


def test_poll_fetches_only_new_messages(imap_server, tmp_path: Path) -> None:
    _, _, box = imap_server
    raw = gmail_messages()
    for data in raw[:3]:
        box.add(data)
    cp = tmp_path / "state" / "imap.json"
    events, bads = split(source(imap_server, cp).read())
    assert bads == [] and [e.attrs["imap_uid"] for e in events] == [101, 102, 103]
    assert events[0].title == "Lease for Kastanienallee" and events[0].source == "email"
    assert json.loads(cp.read_text()) == {"uidvalidity": 7, "last_uid": 103}
    # Nothing new: "UID 104:*" still matches UID 103 on the server; it must not come back.
    assert list(source(imap_server, cp).read()) == []
    box.add(raw[3])
    again, _ = split(source(imap_server, cp).read())
    assert [e.attrs["imap_uid"] for e in again] == [104]
    assert again[0].title.startswith("Your flight to Lisbon")
    assert box.logins == 3


def test_checkpoint_advances_only_past_consumed_messages(imap_server, tmp_path: Path) -> None:
    _, _, box = imap_server
    for data in gmail_messages():
        box.add(data)
    cp = tmp_path / "imap.json"
    reader = source(imap_server, cp).read()
    first = next(reader)
    second = next(reader)  # asking for the 2nd confirms the 1st
    reader.close()  # crash while the 2nd is in flight
    assert json.loads(cp.read_text())["last_uid"] == 101
    rest, _ = split(source(imap_server, cp).read())
    assert [e.attrs["imap_uid"] for e in rest] == [102, 103, 104]
    assert rest[0].id == second.id != first.id  # re-delivered with the same id


def test_uidvalidity_change_restarts_with_identical_ids(imap_server, tmp_path: Path) -> None:
    _, _, box = imap_server
    for data in gmail_messages()[:2]:
        box.add(data)
    cp = tmp_path / "imap.json"
    before, _ = split(source(imap_server, cp).read())
    box.uidvalidity = 8
    after, _ = split(source(imap_server, cp).read())
    assert [e.id for e in after] == [e.id for e in before]


def test_bad_password_is_a_connector_error(imap_server, tmp_path: Path) -> None:
    host, port, _ = imap_server
    bad = ImapSource(host, "alice", user="alice", password="nope", port=port, ssl=False)
    with pytest.raises(ConnectorError, match="cannot log in"):
        list(bad.read())


async def test_follow_polls_until_stopped(imap_server, tmp_path: Path) -> None:
    _, _, box = imap_server
    raw = gmail_messages()
    box.add(raw[0])
    stop = asyncio.Event()
    seen: list[int] = []

    async def consume() -> None:
        async for item in source(imap_server, tmp_path / "cp.json").follow(0.05, stop):
            seen.append(item.attrs["imap_uid"])  # type: ignore[union-attr]
            if len(seen) == 2:
                stop.set()

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.2)
    box.add(raw[1])
    await asyncio.wait_for(task, timeout=5)
    assert seen == [101, 102]
