"""Intents (goals that emerge from converging evidence) and the messages published for them."""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from schemas.limits import SCHEMA_VERSION


class IntentStatus(StrEnum):
    PENDING = "pending"
    ACTION_SCHEDULED = "action_scheduled"
    RESOLVED = "resolved"
    REJECTED = "rejected"
    DEFERRED = "deferred"
    EXPIRED = "expired"


# Lifecycle: pending -> action_scheduled -> resolved | rejected | deferred; a deferred intent
# can come back to pending (or be scheduled, resolved or rejected); resolved/rejected are final.
# expired is set by the engine, never by the user: a pending intent with no new evidence within
# the stale horizon, or whose deadline passed long ago (IntentConfig). It is closed but not
# final: new evidence for the same goal, or the user, brings it back (or closes it for good).
# Added in schema version 1 without a bump: every message valid before is valid now; a
# consumer that validates statuses against the older list must accept the new value.
INTENT_TRANSITIONS: dict[IntentStatus, frozenset[IntentStatus]] = {
    IntentStatus.PENDING: frozenset(
        {
            IntentStatus.ACTION_SCHEDULED,
            IntentStatus.RESOLVED,
            IntentStatus.REJECTED,
            IntentStatus.DEFERRED,
            IntentStatus.EXPIRED,
        }
    ),
    IntentStatus.ACTION_SCHEDULED: frozenset(
        {IntentStatus.RESOLVED, IntentStatus.REJECTED, IntentStatus.DEFERRED}
    ),
    IntentStatus.DEFERRED: frozenset(
        {
            IntentStatus.PENDING,
            IntentStatus.ACTION_SCHEDULED,
            IntentStatus.RESOLVED,
            IntentStatus.REJECTED,
        }
    ),
    IntentStatus.EXPIRED: frozenset(
        {
            IntentStatus.PENDING,
            IntentStatus.ACTION_SCHEDULED,
            IntentStatus.RESOLVED,
            IntentStatus.REJECTED,
            IntentStatus.DEFERRED,
        }
    ),
    IntentStatus.RESOLVED: frozenset(),
    IntentStatus.REJECTED: frozenset(),
}

OPEN_STATUSES = frozenset(
    {IntentStatus.PENDING, IntentStatus.ACTION_SCHEDULED, IntentStatus.DEFERRED}
)


# an intent's title ends with its deadline when it has one: "Get a new passport (by 18 Dec)"
_DEADLINE_SUFFIX = re.compile(r" \(by \d{1,2} [A-Z][a-z]{2}\)$")


def title_without_deadline(title: str) -> str:
    """The intent title without its "(by 18 Dec)" suffix: what it names, whatever its date."""
    return _DEADLINE_SUFFIX.sub("", title)


def can_transition(current: IntentStatus, target: IntentStatus) -> bool:
    return target in INTENT_TRANSITIONS[current]


class Intent(BaseModel):
    """The public view of an INTENT node."""

    model_config = ConfigDict(extra="forbid")

    id: str
    tenant: str
    title: str
    description: str = ""
    category: str = "general"
    status: IntentStatus = IntentStatus.PENDING
    supporting_concepts: list[str] = Field(default_factory=list)
    supporting_labels: list[str] = Field(default_factory=list)
    evidence_event_ids: list[str] = Field(default_factory=list)  # RawEvent ids
    deadline: datetime | None = None
    density: float = 0.0
    threshold: float = 0.0
    created_at: datetime
    updated_at: datetime


RetractionReason = Literal["event_forgotten", "tenant_forgotten"]


class IntentMessage(BaseModel):
    """What goes out on the intents topic / sinks. `message_id` dedups (intent id + status).

    ``intent.updated``: the intent's title or deadline changed while its status did not (the
    evidence came to name the goal better, or its date moved); ``previous_title`` and
    ``previous_deadline`` say what the consumer showed until now, ``revision`` counts the
    intent's updates (its ``message_id`` is ``<intent id>:updated:<revision>``). Added in
    schema version 1 without a bump: a consumer that knows only the other types may skip it.

    ``intent.retracted``: the intent was removed by a deletion (``reason``); the consumer must
    delete what it holds of it. Its ``intent`` carries only the id, the tenant, the last status
    and the time (title and description empty: nothing of the deleted content); its
    ``message_id`` is ``<intent id>:retracted``.
    """

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    type: Literal["intent.created", "intent.status_changed", "intent.updated", "intent.retracted"]
    tenant: str
    intent: Intent
    previous_status: IntentStatus | None = None
    previous_title: str | None = None  # intent.updated only
    previous_deadline: datetime | None = None  # intent.updated only
    revision: int | None = None  # intent.updated only
    emitted_at: datetime
    reason: RetractionReason | None = None  # intent.retracted only

    @property
    def message_id(self) -> str:
        if self.type == "intent.retracted":
            return f"{self.intent.id}:retracted"
        if self.type == "intent.updated":
            return f"{self.intent.id}:updated:{self.revision}"
        return f"{self.intent.id}:{self.intent.status.value}"

    @classmethod
    def retraction(
        cls,
        tenant: str,
        intent_id: str,
        last_status: IntentStatus,
        reason: RetractionReason,
        at: datetime,
    ) -> IntentMessage:
        intent = Intent(
            id=intent_id, tenant=tenant, title="", status=last_status, created_at=at,
            updated_at=at,
        )  # fmt: skip
        return cls(
            type="intent.retracted",
            tenant=tenant,
            intent=intent,
            previous_status=last_status,
            emitted_at=at,
            reason=reason,
        )
