"""The error hierarchy shared by every package. All foldmem errors derive from FoldmemError."""

from __future__ import annotations


class FoldmemError(Exception):
    """Root of every error foldmem raises on purpose."""


class ConfigError(FoldmemError):
    """Settings are missing or contradict each other."""


class InvalidEventError(FoldmemError):
    """An incoming event failed validation; `reason` names the field."""

    def __init__(self, reason: str, raw: bytes | str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.raw = raw


class PlanRejectedError(FoldmemError):
    """An UpdatePlan failed whole-plan validation or could not be applied; nothing was changed."""

    def __init__(self, reason: str, op_index: int | None = None) -> None:
        where = f"op {op_index}: " if op_index is not None else ""
        super().__init__(f"{where}{reason}")
        self.reason = reason
        self.op_index = op_index


class NotFoundError(FoldmemError):
    """A tenant, node or intent does not exist."""


class InvalidTransitionError(FoldmemError):
    """An intent status change the lifecycle does not allow."""


class StoreError(FoldmemError):
    """The durable store failed."""


class LLMError(FoldmemError):
    """The LLM path failed in a way retries will not fix."""


class TransientLLMError(LLMError):
    """A timeout, a 429 or a 5xx: worth retrying with backoff."""


class BudgetExceededError(LLMError):
    """The tenant's daily token budget is spent."""
