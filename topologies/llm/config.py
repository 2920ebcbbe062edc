"""LLMConfig: everything the LLM planner needs to reach a model and stay within bounds.

Built from the stream_app Settings (flat ``llm_*`` fields, env ``FOLDMEM_LLM_*``) by
:meth:`LLMConfig.from_settings`, or directly in tests and benchmarks.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

StructuredMode = Literal["json_schema", "json_object", "text"]
LADDER: tuple[StructuredMode, ...] = ("json_schema", "json_object", "text")


class LLMConfig(BaseModel):
    """Connection, resilience, cost and concurrency knobs of the LLM planner."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None  # None with an api_key: api.openai.com
    model: str = "gpt-4o-mini"
    api_key: SecretStr | None = None
    # structured output: "auto" walks the ladder json_schema -> json_object -> text
    structured_output: Literal["auto", "json_schema", "json_object", "text"] = "auto"
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_output_tokens: int = Field(default=1500, ge=64)
    # resilience
    timeout_s: float = Field(default=30.0, gt=0.0)  # per HTTP attempt
    max_retries: int = Field(default=3, ge=0)  # on 429 / 5xx / timeouts / connection errors
    backoff_base_s: float = Field(default=0.5, ge=0.0)
    backoff_max_s: float = Field(default=8.0, ge=0.0)
    retry_after_max_s: float = Field(default=30.0, ge=0.0)  # longer Retry-After: give up now
    breaker_failures: int = Field(default=5, ge=1)  # consecutive failed events -> open
    breaker_reset_s: float = Field(default=30.0, gt=0.0)  # open -> half-open probe after this
    repair_rounds: int = Field(default=1, ge=0)
    # cost
    daily_token_budget: int = Field(default=0, ge=0)  # per tenant per UTC day; 0 = unlimited
    # fewer calls
    near_duplicate: float = Field(default=0.97, gt=0.0, le=1.0)  # cosine to a folded EVENT
    # untrusted input: an INTENT proposed by the model needs TRIGGERS from this many concepts
    # that already existed with evidence from earlier events (one event cannot make an intent)
    intent_prior_support: int = Field(default=2, ge=0)
    # concurrency: in-flight model requests across all tenants
    concurrency: int = Field(default=8, ge=1)
    # prompt size
    max_event_chars: int = Field(default=4000, ge=200)
    max_title_chars: int = Field(default=120, ge=20)
    related_concepts: int = Field(default=5, ge=0)  # kNN concepts added beside the context tiers

    @property
    def enabled(self) -> bool:
        """No key and no base URL means: no LLM, the heuristic planner."""
        return bool(self.base_url) or self.api_key is not None

    @property
    def endpoint(self) -> str:
        """Key of the capability memory: one entry per (server, model)."""
        return f"{(self.base_url or 'https://api.openai.com/v1').rstrip('/')}#{self.model}"

    def key(self) -> str:
        return self.api_key.get_secret_value() if self.api_key is not None else ""

    @classmethod
    def from_settings(cls, settings: Any) -> LLMConfig:
        """Map flat ``llm_*`` attributes of any settings object (or a dict) to an LLMConfig.

        ``llm_base_url`` -> ``base_url``, ``llm_concurrency`` -> ``concurrency`` and so on;
        unknown or missing attributes keep their defaults.
        """
        if isinstance(settings, LLMConfig):
            return settings
        values: dict[str, Any] = {}
        for name in cls.model_fields:
            key = f"llm_{name}"
            if isinstance(settings, dict):
                found, value = key in settings, settings.get(key)
            else:
                found, value = hasattr(settings, key), getattr(settings, key, None)
            if not found or value is None:
                continue
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            if name in ("base_url", "api_key") and value == "":
                continue
            values[name] = value
        return cls.model_validate(values)
