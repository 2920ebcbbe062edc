"""Slack workspace exports (zip or folder): channels, users, threads, edits and deletions."""

from __future__ import annotations

import html
import re
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import orjson
import structlog

from connectors.base import Item, bad, json_problem, make_event
from connectors.errors import ConnectorError

log = structlog.get_logger(__name__)

_LISTINGS = ("channels.json", "groups.json", "mpims.json", "dms.json")
_DAY_FILE = re.compile(r"^\d{4}-\d{2}-\d{2}\.json$")
_MARKUP = re.compile(r"<([^<>]+)>")
# Membership and admin notices carry no content worth remembering.
_SKIPPED_SUBTYPES = frozenset(
    {
        "channel_join", "channel_leave", "channel_topic", "channel_purpose", "channel_name",
        "channel_archive", "channel_unarchive", "group_join", "group_leave", "group_topic",
        "group_purpose", "group_name", "group_archive", "group_unarchive", "bot_add",
        "bot_remove", "pinned_item", "unpinned_item", "reminder_add",
    }
)  # fmt: skip


class _Tree:
    """Read-only view of an export folder or zip (paths relative to the export root)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.zip: zipfile.ZipFile | None = None
        self.root = PurePosixPath()
        if path.is_file():
            try:
                self.zip = zipfile.ZipFile(path)
            except zipfile.BadZipFile as exc:
                raise ConnectorError(f"{path} is not a zip file: {exc}") from exc
            roots = [
                PurePosixPath(n).parent for n in self.zip.namelist() if n.endswith("users.json")
            ]
            roots += [
                PurePosixPath(n).parent for n in self.zip.namelist() if n.endswith("channels.json")
            ]
            if roots:
                self.root = min(roots, key=lambda p: len(p.parts))

    def read(self, rel: str) -> bytes | None:
        if self.zip is not None:
            try:
                return self.zip.read(str(self.root / rel))
            except KeyError:
                return None
        file = self.path / rel
        return file.read_bytes() if file.is_file() else None

    def dirs(self) -> list[str]:
        if self.zip is not None:
            found = set()
            for name in self.zip.namelist():
                parts = (
                    PurePosixPath(name).relative_to(self.root).parts if self._under(name) else ()
                )
                if len(parts) == 2:
                    found.add(parts[0])
            return sorted(found)
        return sorted(p.name for p in self.path.iterdir() if p.is_dir())

    def files(self, directory: str) -> list[str]:
        if self.zip is not None:
            prefix = self.root / directory
            return sorted(
                PurePosixPath(n).name
                for n in self.zip.namelist()
                if PurePosixPath(n).parent == prefix and not n.endswith("/")
            )
        folder = self.path / directory
        return sorted(p.name for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []

    def _under(self, name: str) -> bool:
        return self.root == PurePosixPath() or PurePosixPath(name).is_relative_to(self.root)

    def close(self) -> None:
        if self.zip is not None:
            self.zip.close()


class SlackSource:
    """Messages of a Slack export; id `chat:slack:<channel id>:<ts>`, source 'chat'.

    Edits (the `edited` field or `message_changed` events) give the last text under the
    original id; deletions are emitted once with attrs deleted=True (`deleted="mark"`)
    or left out (`deleted="skip"`).
    """

    kind = "slack"

    def __init__(
        self,
        path: str | Path,
        tenant: str,
        *,
        deleted: Literal["mark", "skip"] = "mark",
        include_bots: bool = True,
    ) -> None:
        self.path = Path(path)
        self.name = str(path)
        self.tenant = tenant
        self.deleted = deleted
        self.include_bots = include_bots

    def read(self) -> Iterator[Item]:
        tree = _Tree(self.path)
        try:
            yield from self._read(tree)
        finally:
            tree.close()

    def _read(self, tree: _Tree) -> Iterator[Item]:
        users, bads = self._users(tree)
        yield from bads
        channels: list[tuple[str, str, str]] = []  # (folder, channel id, display name)
        for listing in _LISTINGS:
            entries, problem = self._json(tree, listing)
            if problem:
                yield problem
            for entry in entries if isinstance(entries, list) else []:
                if not isinstance(entry, dict) or "id" not in entry:
                    continue
                cid = str(entry["id"])
                if listing == "dms.json":
                    names = [users.get(str(m), str(m)) for m in entry.get("members", [])]
                    channels.append((cid, cid, "DM " + ", ".join(names)))
                else:
                    name = str(entry.get("name") or cid)
                    channels.append((name, cid, "#" + name))
        known = {folder for folder, _, _ in channels}
        for folder in tree.dirs():  # folders missing from the listings
            if folder not in known and any(_DAY_FILE.match(f) for f in tree.files(folder)):
                channels.append((folder, folder, "#" + folder))
        for folder, cid, display in channels:
            yield from self._channel(tree, folder, cid, display, users)

    def _json(self, tree: _Tree, rel: str) -> tuple[Any, Item | None]:
        data = tree.read(rel)
        if data is None:
            return None, None
        try:
            return orjson.loads(data), None
        except orjson.JSONDecodeError as exc:
            return None, bad(f"{self.path.name}:{rel}", json_problem(data, exc))

    def _users(self, tree: _Tree) -> tuple[dict[str, str], list[Item]]:
        entries, problem = self._json(tree, "users.json")
        users: dict[str, str] = {}
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and "id" in entry:
                profile = entry.get("profile") or {}
                users[str(entry["id"])] = str(
                    entry.get("real_name")
                    or profile.get("real_name")
                    or profile.get("display_name")
                    or entry.get("name")
                    or entry["id"]
                )
        return users, [problem] if problem else []

    def _channel(
        self, tree: _Tree, folder: str, cid: str, display: str, users: dict[str, str]
    ) -> Iterator[Item]:
        messages: dict[str, tuple[dict[str, Any], str]] = {}  # ts -> (message, location)
        changes: dict[str, dict[str, Any]] = {}
        deletions: set[str] = set()
        for day in (f for f in tree.files(folder) if _DAY_FILE.match(f)):
            rel = f"{folder}/{day}"
            entries, problem = self._json(tree, rel)
            if problem:
                yield problem
                continue
            if not isinstance(entries, list):
                yield bad(f"{self.path.name}:{rel}", "expected a JSON list of messages")
                continue
            for n, msg in enumerate(entries, 1):
                location = f"{self.path.name}:{rel}:message {n}"
                if not isinstance(msg, dict) or not _valid_ts(msg.get("ts")):
                    yield bad(location, "message without a valid ts")
                    continue
                subtype = msg.get("subtype")
                if subtype == "message_changed" and isinstance(msg.get("message"), dict):
                    new = msg["message"]
                    if _valid_ts(new.get("ts")):
                        changes[str(new["ts"])] = new
                elif subtype == "message_deleted":
                    deletions.add(str(msg.get("deleted_ts") or msg["ts"]))
                elif subtype == "tombstone":
                    deletions.add(str(msg["ts"]))
                elif subtype not in _SKIPPED_SUBTYPES:
                    messages.setdefault(str(msg["ts"]), (msg, location))
        for ts, new in changes.items():
            old, location = messages.get(ts, ({}, f"{self.path.name}:{folder}"))
            messages[ts] = ({**old, **new, "edited": new.get("edited") or {"ts": ts}}, location)
        for ts in sorted(messages, key=float):
            msg, location = messages[ts]
            if ts in deletions:
                if self.deleted == "skip":
                    continue
                msg = {**msg, "text": "", "files": [], "_deleted": True}
            if not self.include_bots and (msg.get("bot_id") or msg.get("subtype") == "bot_message"):
                continue
            yield self._event(msg, location, folder, cid, display, users)

    def _event(
        self,
        msg: dict[str, Any],
        location: str,
        folder: str,
        cid: str,
        display: str,
        users: dict[str, str],
    ) -> Item:
        ts = str(msg["ts"])
        uid = str(msg.get("user") or msg.get("bot_id") or "")
        profile = msg.get("user_profile") or {}
        author = (
            users.get(uid) or profile.get("real_name") or msg.get("username") or uid or "unknown"
        )
        text, mentioned = render_slack_text(str(msg.get("text") or ""), users)
        thread_ts = str(msg.get("thread_ts") or "")
        attrs: dict[str, Any] = {
            "platform": "slack",
            "channel": display,
            "channel_id": cid,
            "ts": ts,
            "user_id": uid or None,
        }
        if thread_ts:
            attrs["thread_ts"] = thread_ts
            attrs["thread_id"] = f"chat:slack:{cid}:{thread_ts}"
            attrs["thread_root"] = thread_ts == ts
        if msg.get("reply_count"):
            attrs["reply_count"] = msg["reply_count"]
        if msg.get("edited"):
            attrs["edited"] = True
        if msg.get("_deleted"):
            attrs["deleted"] = True
        files = [
            {"filename": f.get("name") or f.get("title") or "", "content_type": f.get("mimetype")}
            for f in msg.get("files") or []
            if isinstance(f, dict)
        ]
        if files:
            attrs["attachments"] = files
        if msg.get("subtype"):
            attrs["subtype"] = msg["subtype"]
        return make_event(
            location,
            id=f"chat:slack:{cid}:{ts}",
            tenant=self.tenant,
            source="chat",
            ts=datetime.fromtimestamp(float(ts), UTC),
            title=f"{author} in {display}",
            body=text,
            participants=[author, *mentioned],
            attrs=attrs,
        )


def _valid_ts(value: Any) -> bool:
    try:
        return value is not None and float(value) > 0
    except (TypeError, ValueError):
        return False


def render_slack_text(text: str, users: dict[str, str]) -> tuple[str, list[str]]:
    """Slack mrkdwn to plain text: <@U1> -> @Name, <#C1|x> -> #x, <url|label> -> label (url)."""
    mentioned: list[str] = []

    def replace(match: re.Match[str]) -> str:
        inner = match.group(1)
        target, _, label = inner.partition("|")
        if target.startswith("@"):
            name = users.get(target[1:]) or label or target[1:]
            mentioned.append(name)
            return "@" + name
        if target.startswith("#"):
            return "#" + (label or target[1:])
        if target.startswith("!"):
            return "@" + (label.lstrip("@") or target[1:].split("^")[0])
        if target.startswith("mailto:"):
            return label or target[7:]
        return f"{label} ({target})" if label and label != target else target

    rendered = _MARKUP.sub(replace, text)
    return html.unescape(rendered), mentioned
