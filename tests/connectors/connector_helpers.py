"""Helpers for the connector tests: fixture paths, item collection, a loopback IMAP server."""

from __future__ import annotations

import re
import socketserver
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from connectors.base import BadItem
from schemas.events import RawEvent

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "connectors"
REFERENCE = datetime(2024, 3, 1, tzinfo=UTC)


def split(items: Iterable[RawEvent | BadItem]) -> tuple[list[RawEvent], list[BadItem]]:
    """Events and bad items of a source run, asserting event ids are unique."""
    events: list[RawEvent] = []
    bads: list[BadItem] = []
    for item in items:
        if isinstance(item, RawEvent):
            events.append(item)
        else:
            assert isinstance(item, BadItem), item
            bads.append(item)
    ids = [e.id for e in events]
    assert len(ids) == len(set(ids)), "an event id was yielded twice"
    for event in events:
        assert event.ts.tzinfo is not None and event.ts.utcoffset() is not None
    return events, bads


# --- a tiny IMAP4rev1 server (just what imaplib needs to poll a folder) -----------------


@dataclass
class Mailbox:
    uidvalidity: int = 7
    messages: list[tuple[int, bytes]] = field(default_factory=list)  # (uid, raw)
    user: str = "alice"
    password: str = "s3cret pass"
    logins: int = 0

    def add(self, raw: bytes) -> int:
        uid = (self.messages[-1][0] if self.messages else 100) + 1
        self.messages.append((uid, raw))
        return uid


def _uid_set(spec: str, uids: list[int]) -> list[int]:
    top = max(uids) if uids else 0
    chosen: set[int] = set()
    for part in spec.split(","):
        lo, _, hi = part.partition(":")
        a = top if lo == "*" else int(lo)
        b = a if not hi else (top if hi == "*" else int(hi))
        lo_n, hi_n = min(a, b), max(a, b)
        chosen.update(u for u in uids if lo_n <= u <= hi_n)
    return sorted(chosen)


class _ImapHandler(socketserver.StreamRequestHandler):
    mailbox: Mailbox

    def send(self, line: str | bytes) -> None:
        data = line.encode() if isinstance(line, str) else line
        self.wfile.write(data + b"\r\n")

    def handle(self) -> None:
        box = self.server.mailbox  # type: ignore[attr-defined]
        self.send("* OK [CAPABILITY IMAP4rev1] foldmem test server ready")
        authed = False
        while True:
            raw = self.rfile.readline()
            if not raw:
                return
            line = raw.decode().rstrip("\r\n")
            tag, _, rest = line.partition(" ")
            command, _, args = rest.partition(" ")
            command = command.upper()
            if command == "CAPABILITY":
                self.send("* CAPABILITY IMAP4rev1 AUTH=PLAIN")
                self.send(f"{tag} OK CAPABILITY completed")
            elif command == "LOGIN":
                parts = re.findall(r'"((?:[^"\\]|\\.)*)"|(\S+)', args)
                user, password = (a or b for a, b in parts[:2])
                if user == box.user and password.replace('\\"', '"') == box.password:
                    authed = True
                    box.logins += 1
                    self.send(f"{tag} OK LOGIN completed")
                else:
                    self.send(f"{tag} NO [AUTHENTICATIONFAILED] invalid credentials")
            elif command in ("SELECT", "EXAMINE") and authed:
                self.send(f"* {len(box.messages)} EXISTS")
                self.send("* 0 RECENT")
                self.send(f"* OK [UIDVALIDITY {box.uidvalidity}] UIDs valid")
                nxt = (box.messages[-1][0] + 1) if box.messages else 101
                self.send(f"* OK [UIDNEXT {nxt}] next uid")
                self.send(f"{tag} OK [READ-ONLY] {command} completed")
            elif command == "UID" and authed:
                sub, _, sub_args = args.partition(" ")
                uids = [u for u, _ in box.messages]
                if sub.upper() == "SEARCH":
                    spec = sub_args.split()[-1]
                    found = _uid_set(spec, uids)
                    self.send("* SEARCH " + " ".join(map(str, found)) if found else "* SEARCH")
                    self.send(f"{tag} OK SEARCH completed")
                elif sub.upper() == "FETCH":
                    spec = sub_args.split(" ", 1)[0]
                    for uid in _uid_set(spec, uids):
                        seq = uids.index(uid) + 1
                        data = dict(box.messages)[uid]
                        head = (
                            f'* {seq} FETCH (UID {uid} INTERNALDATE "08-Jan-2024 10:15:00 +0100" '
                            f"BODY[] {{{len(data)}}}"
                        )
                        self.wfile.write(head.encode() + b"\r\n" + data + b")\r\n")
                    self.send(f"{tag} OK FETCH completed")
                else:
                    self.send(f"{tag} BAD unknown UID command")
            elif command == "LOGOUT":
                self.send("* BYE logging out")
                self.send(f"{tag} OK LOGOUT completed")
                return
            elif command == "NOOP":
                self.send(f"{tag} OK NOOP completed")
            else:
                self.send(f"{tag} BAD command not supported here")


def run_imap_server() -> Iterator[tuple[str, int, Mailbox]]:
    """A real IMAP server on 127.0.0.1 (plain TCP) serving one folder."""
    box = Mailbox()
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _ImapHandler)
    server.daemon_threads = True
    server.mailbox = box  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield "127.0.0.1", server.server_address[1], box
    finally:
        server.shutdown()
        server.server_close()
