"""LLMConfig: everything the LLM planner needs to reach a model and stay within bounds.

Built from the stream_app Settings (flat ``llm_*`` fields, env ``FOLDMEM_LLM_*``) by
:meth:`LLMConfig.from_settings`, or directly in tests and benchmarks.

The timeout, retry, concurrency and streaming knobs default by the kind of server
(:data:`SERVER_POLICIES`, docs/llm.md): a hosted API answers many requests at once and drops
an abandoned one, while a local llama.cpp or Ollama server computes one request at a time and
(without streaming) keeps computing a request its client gave up on, so it gets a long
timeout, no retry of a timed-out request, one request in flight and a streamed reply whose
connection is closed on timeout (the server then stops generating).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, SecretStr

# json_object_schema: {"type": "json_object", "schema": {...}} (llama.cpp servers constrain
# the output with a grammar built from the schema)
StructuredMode = Literal["json_schema", "json_object_schema", "json_object", "text"]
LADDER: tuple[StructuredMode, ...] = ("json_schema", "json_object_schema", "json_object", "text")
ServerKind = Literal["hosted", "vllm", "ollama", "llamacpp"]
FactSource = Literal["plan", "call", "rules"]
ConceptBoundaries = Literal["rules", "model"]


@dataclass(frozen=True)
class ServerPolicy:
    """How requests to one kind of server are timed, retried, bounded and cancelled."""

    kind: ServerKind
    timeout_s: float  # per request, from sending it to the last token
    max_retries: int  # on 429 / 5xx / connection errors
    retry_timeouts: bool  # may a timed-out request be sent again?
    concurrency: int  # requests in flight across all tenants
    stream: bool  # stream the reply: closing the stream cancels the generation


SERVER_POLICIES: dict[ServerKind, ServerPolicy] = {
    # many requests at once; an abandoned request is dropped by the provider
    "hosted": ServerPolicy("hosted", 60.0, 3, True, 8, False),
    # continuous batching; a closed stream aborts the request
    "vllm": ServerPolicy("vllm", 120.0, 2, True, 8, True),
    # one request at a time (OLLAMA_NUM_PARALLEL=1); a closed connection stops the generation
    "ollama": ServerPolicy("ollama", 600.0, 1, False, 1, True),
    # llama-server / llama-cpp-python: one request at a time; a non-streamed request keeps
    # computing after its client left, a closed stream stops it after the current token
    "llamacpp": ServerPolicy("llamacpp", 600.0, 1, False, 1, True),
}


def local_host(base_url: str) -> bool:
    """Loopback, a private network address or a bare host name (a machine of one's own)."""
    host = (urlparse(base_url).hostname or "").lower()
    if host in ("localhost", "host.docker.internal") or host.endswith((".local", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host and host != ""
    return address.is_loopback or address.is_private or address.is_link_local


class LLMConfig(BaseModel):
    """Connection, resilience, cost and concurrency knobs of the LLM planner."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None  # None with an api_key: api.openai.com
    model: str = "gpt-4o-mini"
    api_key: SecretStr | None = None
    # auto: hosted without a base URL or on a public host, llamacpp on a local one
    server: Literal["auto", "hosted", "vllm", "ollama", "llamacpp"] = "auto"
    # structured output: "auto" walks the ladder json_schema -> json_object_schema ->
    # json_object -> text (the schema is also described in the prompt)
    structured_output: Literal[
        "auto", "json_schema", "json_object_schema", "json_object", "text"
    ] = "auto"
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_output_tokens: int = Field(default=700, ge=64)
    # resilience; None: the server kind's policy (SERVER_POLICIES)
    timeout_s: float | None = Field(default=None, gt=0.0)
    max_retries: int | None = Field(default=None, ge=0)
    retry_timeouts: bool | None = None
    stream: bool | None = None
    backoff_base_s: float = Field(default=0.5, ge=0.0)
    backoff_max_s: float = Field(default=8.0, ge=0.0)
    retry_after_max_s: float = Field(default=30.0, ge=0.0)  # longer Retry-After: give up now
    breaker_failures: int = Field(default=5, ge=1)  # consecutive failed calls -> open
    breaker_reset_s: float = Field(default=30.0, gt=0.0)  # open -> half-open probe after this
    repair_rounds: int = Field(default=1, ge=0)
    # cost
    daily_token_budget: int = Field(default=0, ge=0)  # per tenant per UTC day; 0 = unlimited
    # fewer calls
    near_duplicate: float = Field(default=0.97, gt=0.0, le=1.0)  # cosine to a folded EVENT
    # where the facts layer gets its items: the plan's FACT nodes (no extra call), a call of
    # its own per event, or the deterministic rules
    facts: FactSource = "plan"
    # a listed concept may be the event's concept at this cosine to the event (the factory
    # sets the engine's EngineConfig.assign_similarity, the heuristic planner's own threshold)
    concept_similarity: float = Field(default=0.40, ge=-1.0, le=1.0)
    # add the heuristic planner's dates and event links (TIME nodes, entity links between
    # events) to the model's plan: rules find those well and at no cost
    rule_structure: bool = True
    # with rule_structure: which concept an event is evidence of is decided by the heuristic
    # planner ("rules": the model's label names a concept the rules open) or by the model
    concept_boundaries: ConceptBoundaries = "rules"
    # model calls per event for fact reconciliation (only items that may revise a belief)
    reconcile_calls: int = Field(default=1, ge=0)
    # untrusted input: an INTENT proposed by the model needs TRIGGERS from this many concepts
    # that already existed with evidence from earlier events (one event cannot make an intent)
    intent_prior_support: int = Field(default=2, ge=0)
    # in-flight model requests across all tenants; None: the server kind's policy
    concurrency: int | None = Field(default=None, ge=1)
    # prompt size
    max_event_chars: int = Field(default=2000, ge=200)
    max_title_chars: int = Field(default=100, ge=20)
    max_context_lines: int = Field(default=20, ge=0)
    max_context_events: int = Field(default=4, ge=0)  # past EVENT lines among them
    related_concepts: int = Field(default=5, ge=0)  # kNN concepts added beside the context tiers
    max_plan_ops: int = Field(default=6, ge=1, le=64)  # ops the model may list

    @property
    def enabled(self) -> bool:
        """No key and no base URL means: no LLM, the heuristic planner."""
        return bool(self.base_url) or self.api_key is not None

    @property
    def endpoint(self) -> str:
        """Key of the capability memory: one entry per (server, model)."""
        return f"{(self.base_url or 'https://api.openai.com/v1').rstrip('/')}#{self.model}"

    @property
    def server_kind(self) -> ServerKind:
        if self.server != "auto":
            return self.server
        if self.base_url and local_host(self.base_url):
            return "llamacpp"
        return "hosted"

    @property
    def policy(self) -> ServerPolicy:
        """The server kind's policy with this config's explicit settings on top."""
        base = SERVER_POLICIES[self.server_kind]
        return ServerPolicy(
            base.kind,
            self.timeout_s if self.timeout_s is not None else base.timeout_s,
            self.max_retries if self.max_retries is not None else base.max_retries,
            self.retry_timeouts if self.retry_timeouts is not None else base.retry_timeouts,
            self.concurrency if self.concurrency is not None else base.concurrency,
            self.stream if self.stream is not None else base.stream,
        )

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
