"""IMAP polling with a UID checkpoint (new messages only, at-least-once)."""

from __future__ import annotations

import asyncio
import contextlib
import imaplib
import json
import os
import re
import ssl as ssl_lib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path

import structlog

from connectors.base import Item, bad
from connectors.email import EmailMapper
from connectors.errors import ConnectorError

log = structlog.get_logger(__name__)

_UID = re.compile(rb"\bUID (\d+)")
_INTERNALDATE = re.compile(rb'INTERNALDATE "([^"]+)"')


@dataclass
class ImapCheckpoint:
    """Where the last poll stopped: UIDs are only comparable under the same UIDVALIDITY."""

    uidvalidity: int | None = None
    last_uid: int = 0

    @classmethod
    def load(cls, path: Path | None) -> ImapCheckpoint:
        if path is None or not path.exists():
            return cls()
        try:
            data = json.loads(path.read_text("utf-8"))
            return cls(uidvalidity=data.get("uidvalidity"), last_uid=int(data.get("last_uid", 0)))
        except (ValueError, TypeError, AttributeError) as exc:
            raise ConnectorError(f"unreadable IMAP checkpoint {path}: {exc}") from exc

    def save(self, path: Path | None) -> None:
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(
            json.dumps({"uidvalidity": self.uidvalidity, "last_uid": self.last_uid}), "utf-8"
        )
        os.replace(tmp, path)


class ImapSource:
    """New messages of one IMAP folder since the checkpoint; each `read()` is one poll.

    The checkpoint advances past a message once the consumer asks for the next item
    (or the poll completes), so a crash re-delivers at most the message in flight.
    """

    kind = "imap"

    def __init__(
        self,
        host: str,
        tenant: str,
        *,
        user: str,
        password: str,
        port: int | None = None,
        folder: str = "INBOX",
        ssl: bool = True,
        checkpoint_path: str | Path | None = None,
        default_tz: str | tzinfo = "UTC",
        batch_size: int = 50,
        timeout: float = 30.0,
        ssl_context: ssl_lib.SSLContext | None = None,
    ) -> None:
        self.host = host
        self.port = port or (993 if ssl else 143)
        self.user = user
        self.password = password
        self.folder = folder
        self.ssl = ssl
        self.ssl_context = ssl_context
        self.timeout = timeout
        self.batch_size = batch_size
        self.checkpoint_path = Path(checkpoint_path) if checkpoint_path else None
        self.checkpoint = ImapCheckpoint.load(self.checkpoint_path)
        self.tenant = tenant
        self.mapper = EmailMapper(tenant, default_tz)
        self.name = f"imap://{user}@{host}:{self.port}/{folder}"

    def read(self) -> Iterator[Item]:
        conn = self._connect()
        try:
            yield from self._poll(conn)
        finally:
            with contextlib.suppress(Exception):
                conn.logout()

    async def follow(
        self, poll_interval: float = 60.0, stop_event: asyncio.Event | None = None
    ) -> AsyncIterator[Item]:
        """Poll every `poll_interval` seconds until `stop_event` is set."""
        stop = stop_event or asyncio.Event()
        while not stop.is_set():
            try:
                items = await asyncio.to_thread(lambda: list(self.read()))
            except (OSError, imaplib.IMAP4.error) as exc:
                log.warning("imap_poll_failed", source=self.name, error=str(exc))
                items = []
            for item in items:
                yield item
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=poll_interval)

    def _connect(self) -> imaplib.IMAP4:
        try:
            conn: imaplib.IMAP4
            if self.ssl:
                context = self.ssl_context or ssl_lib.create_default_context()
                conn = imaplib.IMAP4_SSL(
                    self.host, self.port, ssl_context=context, timeout=self.timeout
                )
            else:
                conn = imaplib.IMAP4(self.host, self.port, timeout=self.timeout)
        except (OSError, imaplib.IMAP4.error) as exc:
            raise ConnectorError(f"cannot connect to {self.name}: {exc}") from exc
        try:
            conn.login(self.user, self.password)
        except (OSError, imaplib.IMAP4.error) as exc:
            with contextlib.suppress(Exception):
                conn.shutdown()
            raise ConnectorError(f"cannot log in to {self.name}: {exc}") from exc
        return conn

    def _poll(self, conn: imaplib.IMAP4) -> Iterator[Item]:
        mailbox = f'"{self.folder}"' if " " in self.folder else self.folder
        typ, _ = conn.select(mailbox, readonly=True)
        if typ != "OK":
            raise ConnectorError(f"cannot open folder {self.folder!r} on {self.name}")
        _, data = conn.response("UIDVALIDITY")
        validity = int(data[0]) if data and data[0] else None
        cp = self.checkpoint
        if cp.uidvalidity is not None and validity != cp.uidvalidity:
            log.warning(
                "imap_uidvalidity_changed", source=self.name, old=cp.uidvalidity, new=validity
            )
            cp.last_uid = 0
        cp.uidvalidity = validity
        typ, data = conn.uid("SEARCH", None, f"UID {cp.last_uid + 1}:*")  # type: ignore[arg-type]
        if typ != "OK":
            raise ConnectorError(f"UID SEARCH failed on {self.name}")
        # "n:*" always matches the highest UID, even below n: keep only new ones.
        uids = sorted(int(x) for x in (data[0] or b"").split() if int(x) > cp.last_uid)
        log.info("imap_poll", source=self.name, new=len(uids), after_uid=cp.last_uid)
        try:
            for start in range(0, len(uids), self.batch_size):
                batch = uids[start : start + self.batch_size]
                for uid, raw, internal in self._fetch(conn, batch):
                    location = f"{self.name}:uid {uid}"
                    if raw is None:
                        yield bad(location, "the server returned no message body")
                    else:
                        yield self.mapper.from_bytes(
                            raw, location, fallback_ts=internal, extra={"imap_uid": uid}
                        )
                    cp.last_uid = max(cp.last_uid, uid)  # consumed: the consumer came back
                cp.save(self.checkpoint_path)
        finally:
            cp.save(self.checkpoint_path)

    def _fetch(
        self, conn: imaplib.IMAP4, uids: list[int]
    ) -> Iterator[tuple[int, bytes | None, datetime | None]]:
        typ, data = conn.uid("FETCH", ",".join(map(str, uids)), "(UID INTERNALDATE BODY.PEEK[])")
        if typ != "OK":
            raise ConnectorError(f"UID FETCH failed on {self.name}")
        found: dict[int, tuple[bytes, datetime | None]] = {}
        for part in data:
            if not isinstance(part, tuple):
                continue
            head, body = part[0], part[1]
            match = _UID.search(head)
            if not match:
                continue
            found[int(match.group(1))] = (body, _internaldate(head))
        for uid in uids:
            if uid in found:
                yield uid, found[uid][0], found[uid][1]
            else:
                yield uid, None, None


def _internaldate(head: bytes) -> datetime | None:
    match = _INTERNALDATE.search(head)
    if not match:
        return None
    try:
        return datetime.strptime(match.group(1).decode().strip(), "%d-%b-%Y %H:%M:%S %z")
    except ValueError:
        return None
