"""JSONL of RawEvents: validation, byte offsets, and tail -f style following."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson
from connector_helpers import FIXTURES, split

from connectors.base import BadItem
from connectors.jsonl import JsonlSource
from schemas.events import RawEvent

EVENTS = FIXTURES / "jsonl" / "events.jsonl"


def line(n: int, **extra: object) -> bytes:
    obj = {
        "id": f"note:{n}",
        "source": "note",
        "ts": f"2024-03-01T10:{n:02d}:00Z",
        "title": f"n{n}",
    }
    return orjson.dumps({**obj, **extra}) + b"\n"


def test_valid_and_invalid_lines() -> None:
    events, bads = split(JsonlSource(EVENTS, "alice").read())
    assert [e.id for e in events] == [
        "note:2024-03-01:groceries",
        "note:2024-03-01:call-mum",
        "crm:deal-4711",
        "note:2024-03-04:dentist",
    ]
    assert [e.tenant for e in events] == ["alice", "bob", "alice", "alice"]  # own tenant kept
    assert events[2].attrs == {"amount": 12000, "currency": "EUR"}
    assert [b.location for b in bads] == [
        "events.jsonl:line 5",
        "events.jsonl:line 6",
        "events.jsonl:line 7",
        "events.jsonl:line 8",
    ]
    assert bads[0].reason.startswith("ts:") and "timezone-aware" in bads[0].reason
    assert bads[1].reason.startswith("invalid JSON")
    assert bads[2].reason.startswith("colour:")
    assert "JSON object" in bads[3].reason


def test_offsets_resume_and_partial_last_line(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    data = line(1) + b"\n" + line(2) + b"{not json}\n" + line(3)
    path.write_bytes(data + line(4)[:-1])  # the last line has no newline yet
    source = JsonlSource(path, "alice")
    pairs = list(source.read_from(0, final=False))
    offsets = [off for _, off in pairs]
    assert offsets == [
        len(line(1)),
        len(line(1)) + 1 + len(line(2)),
        len(line(1)) + 1 + len(line(2)) + 11,
        len(data),
    ]
    assert source.offset == len(data)  # the partial line is not consumed
    assert isinstance(pairs[2][0], BadItem) and pairs[2][0].location == "events.jsonl:line 4"
    # Resuming from an offset yields only what follows, with true line numbers.
    resumed = list(source.read_from(offsets[1], final=False))
    assert [type(i).__name__ for i, _ in resumed] == ["BadItem", "RawEvent"]
    assert resumed[0][0].location == "events.jsonl:line 4"  # type: ignore[union-attr]
    # A one-shot read of a finished file takes the last line even without a newline.
    assert [e.id for e in split(JsonlSource(path, "alice").read())[0]][-1] == "note:4"
    assert JsonlSource(path, "alice", offset=offsets[2]).offset == offsets[2]
    assert [e.id for e in split(JsonlSource(path, "alice", offset=offsets[2]).read())[0]] == [
        "note:3",
        "note:4",
    ]


def test_crlf_bom_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "win.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + line(1)[:-1] + b"\r\n\r\n   \r\n" + line(2)[:-1] + b"\r\n")
    events, bads = split(JsonlSource(path, "alice").read())
    assert [e.id for e in events] == ["note:1", "note:2"] and bads == []


async def test_follow_a_growing_file(tmp_path: Path) -> None:
    path = tmp_path / "stream.jsonl"
    path.write_bytes(line(1))
    source = JsonlSource(path, "alice")
    stop = asyncio.Event()
    got: list[tuple[RawEvent | BadItem, int]] = []

    async def consume() -> None:
        async for item, offset in source.follow(poll_interval=0.02, stop_event=stop):
            got.append((item, offset))
            if len(got) == 4:
                stop.set()

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.1)
    assert len(got) == 1
    half = line(2)[:15]
    with path.open("ab") as fh:
        fh.write(half)  # a writer in the middle of a line
    await asyncio.sleep(0.1)
    assert len(got) == 1, "a partial line must not be consumed"
    with path.open("ab") as fh:
        fh.write(line(2)[15:] + b"garbage\n" + line(3))
    await asyncio.wait_for(task, timeout=5)
    assert [getattr(i, "id", None) for i, _ in got] == ["note:1", "note:2", None, "note:3"]
    assert got[2][0] == BadItem("stream.jsonl:line 3", got[2][0].reason)  # type: ignore[union-attr]
    assert got[-1][1] == path.stat().st_size == source.offset
    # A restarted follower resumes from the checkpointed offset.
    with path.open("ab") as fh:
        fh.write(line(4))
    again = JsonlSource(path, "alice", offset=got[-1][1])
    stop2 = asyncio.Event()
    resumed = []
    async for item, _ in again.follow(poll_interval=0.02, stop_event=stop2):
        resumed.append(item)
        stop2.set()
    assert [getattr(i, "id", None) for i in resumed] == ["note:4"]


async def test_follow_restarts_after_truncation(tmp_path: Path) -> None:
    path = tmp_path / "rotating.jsonl"
    path.write_bytes(line(1) + line(2))
    source = JsonlSource(path, "alice")
    stop = asyncio.Event()
    seen: list[str] = []

    async def consume() -> None:
        async for item, _ in source.follow(poll_interval=0.02, stop_event=stop):
            seen.append(item.id)  # type: ignore[union-attr]
            if len(seen) == 3:
                stop.set()

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.1)
    path.write_bytes(line(9))  # truncated and rewritten (log rotation)
    await asyncio.wait_for(task, timeout=5)
    assert seen == ["note:1", "note:2", "note:9"]
