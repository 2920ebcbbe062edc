"""RawEvent: one item of a user's stream (calendar, email, chat, note, or custom)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from schemas.limits import (
    MAX_ATTRS_BYTES,
    MAX_BODY_BYTES,
    MAX_ID_CHARS,
    MAX_PARTICIPANT_CHARS,
    MAX_PARTICIPANTS,
    MAX_SOURCE_CHARS,
    MAX_TENANT_CHARS,
    MAX_TITLE_BYTES,
    SCHEMA_VERSION,
)

KNOWN_SOURCES = ("calendar", "email", "chat", "note")
_SLUG = r"^[A-Za-z0-9][A-Za-z0-9._:@+\-]*$"


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", errors="surrogatepass"))


def refuse_numbers(value: object, field: str) -> object:
    """Times come as ISO 8601 text: a number (or digits as text) would be read as epoch seconds,
    which is a guess (seconds or milliseconds? 12345 is 1970) and is refused."""
    if isinstance(value, int | float) or (isinstance(value, str) and _is_number(value)):
        raise ValueError(
            f"{field} must be an ISO 8601 date-time with an offset, such as "
            f"2026-11-05T09:00:00+01:00, not a number ({value!r}): epoch values are ambiguous"
        )
    return value


def _is_number(text: str) -> bool:
    try:
        float(text.strip())
    except ValueError:
        return False
    return True


def require_aware(value: datetime, field: str) -> datetime:
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise ValueError(f"{field} must be timezone-aware (add an offset such as +00:00 or Z)")
    return value


class RawEvent(BaseModel):
    """An event as it arrives. `id` is the source's stable id and the idempotency key."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False, frozen=True)

    schema_version: int = Field(default=SCHEMA_VERSION, ge=1, le=SCHEMA_VERSION)
    id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    tenant: str = Field(min_length=1, max_length=MAX_TENANT_CHARS, pattern=_SLUG)
    source: str = Field(min_length=1, max_length=MAX_SOURCE_CHARS, pattern=_SLUG)
    ts: datetime
    title: str = ""
    body: str = ""
    participants: list[str] = Field(default_factory=list, max_length=MAX_PARTICIPANTS)
    attrs: dict[str, Any] = Field(default_factory=dict)
    received_at: datetime | None = None

    @field_validator("id")
    @classmethod
    def _id_printable(cls, value: str) -> str:
        if not value.strip() or any(ord(ch) < 32 for ch in value):
            raise ValueError("id must be non-blank printable text")
        return value

    @field_validator("ts", "received_at", mode="before")
    @classmethod
    def _not_a_number(cls, value: object, info: ValidationInfo) -> object:
        return refuse_numbers(value, str(info.field_name))

    @field_validator("ts")
    @classmethod
    def _ts_aware(cls, value: datetime) -> datetime:
        return require_aware(value, "ts")

    @field_validator("received_at")
    @classmethod
    def _received_aware(cls, value: datetime | None) -> datetime | None:
        return None if value is None else require_aware(value, "received_at")

    @field_validator("title")
    @classmethod
    def _title_bounded(cls, value: str) -> str:
        if utf8_len(value) > MAX_TITLE_BYTES:
            raise ValueError(f"title is longer than {MAX_TITLE_BYTES} bytes")
        return value

    @field_validator("body")
    @classmethod
    def _body_bounded(cls, value: str) -> str:
        if utf8_len(value) > MAX_BODY_BYTES:
            raise ValueError(f"body is longer than {MAX_BODY_BYTES} bytes")
        return value

    @field_validator("participants")
    @classmethod
    def _participants_bounded(cls, value: list[str]) -> list[str]:
        for item in value:
            if len(item) > MAX_PARTICIPANT_CHARS:
                raise ValueError(f"a participant is longer than {MAX_PARTICIPANT_CHARS} chars")
        return value

    @field_validator("attrs")
    @classmethod
    def _attrs_bounded(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            size = len(orjson.dumps(value, default=str))
        except TypeError as exc:  # pragma: no cover - orjson default=str covers most
            raise ValueError(f"attrs must be JSON-serialisable: {exc}") from exc
        if size > MAX_ATTRS_BYTES:
            raise ValueError(f"attrs is larger than {MAX_ATTRS_BYTES} bytes as JSON")
        return value

    @property
    def text(self) -> str:
        """The text the engine reads: title and body."""
        if self.title and self.body:
            return f"{self.title}\n{self.body}"
        return self.title or self.body

    def with_tenant(self, tenant: str) -> RawEvent:
        return self.model_copy(update={"tenant": tenant})

    def stamped(self, now: datetime | None = None) -> RawEvent:
        """A copy with `received_at` set (kept if already present)."""
        if self.received_at is not None:
            return self
        return self.model_copy(update={"received_at": now or datetime.now(UTC)})
