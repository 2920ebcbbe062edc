"""Settings of the foldmem service: environment variables with the prefix ``FOLDMEM_``.

Nothing is read at import time: call :func:`load_settings` (or ``Settings()``) where needed.
Engine parameters map onto :class:`topologies.config.EngineConfig` via :meth:`engine_config`.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from schemas.errors import ConfigError
from topologies.config import EngineConfig

EmbedderName = Literal["minilm", "hashing", "openai"]
LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost; everything else counts as exposed."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


INTENTS_FILE = "intents.jsonl"  # DATA_DIR/..., every intent message (embedded mode)
DEADLETTER_FILE = "deadletter.jsonl"  # DATA_DIR/..., every rejected item
WEBHOOK_DEADLETTER_FILE = "webhook-deadletter.jsonl"  # DATA_DIR/..., undeliverable messages


class Settings(BaseSettings):
    """Runtime configuration. Each field is also the env var FOLDMEM_<FIELD NAME>."""

    model_config = SettingsConfigDict(
        env_prefix="FOLDMEM_", extra="ignore", validate_default=True, env_ignore_empty=True
    )

    # --- storage and tenants
    data_dir: Path = Path(".foldmem")
    default_tenant: str = Field(default="default", min_length=1, max_length=128)
    store_synchronous: Literal["FULL", "NORMAL"] = "FULL"

    # --- read API
    api_host: str = "127.0.0.1"
    api_port: int = Field(default=8765, ge=0, le=65535)
    api_token: SecretStr | None = None
    # request bodies above these sizes are refused with 413 before they are read
    api_max_body_bytes: int = Field(default=2 * 1024 * 1024, ge=1024)  # every route ...
    api_max_ingest_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)  # ... but POST events
    # `foldmem mcp --http`: the MCP server's port (same host and token rules as the API)
    mcp_port: int = Field(default=8766, ge=0, le=65535)

    # --- embeddings
    embedder: EmbedderName = "minilm"
    hashing_dim: int = Field(default=256, ge=16, le=8192)
    minilm_threads: int = Field(default=2, ge=1, le=64)
    embedding_base_url: str | None = (
        None  # OpenAI-compatible endpoint, e.g. http://localhost:11434/v1
    )
    embedding_api_key: SecretStr | None = None
    embedding_model: str = "text-embedding-3-small"
    embedding_dim: int = Field(default=1536, ge=1, le=16384)

    # --- planner ("heuristic" needs nothing; other names are registered in stream_app.factory)
    planner: str = "auto"  # auto: the LLM planner when FOLDMEM_LLM_BASE_URL or _API_KEY is set

    # --- LLM planner (FOLDMEM_PLANNER=llm; docs/llm.md). No base URL and no key: heuristic.
    llm_base_url: str | None = None  # e.g. http://localhost:11434/v1 (Ollama)
    llm_model: str = "gpt-4o-mini"
    llm_api_key: SecretStr | None = None
    # the kind of server sets the timeout, retry, concurrency and streaming defaults
    # (docs/llm.md); auto: hosted without a base URL or on a public host, llamacpp on a local one
    llm_server: Literal["auto", "hosted", "vllm", "ollama", "llamacpp"] = "auto"
    llm_structured_output: Literal[
        "auto", "json_schema", "json_object_schema", "json_object", "text"
    ] = "auto"
    llm_timeout_s: float | None = Field(default=None, gt=0)  # None: by server kind
    llm_max_retries: int | None = Field(default=None, ge=0)  # None: by server kind
    llm_retry_timeouts: bool | None = None  # None: by server kind (never for a local server)
    llm_stream: bool | None = None  # None: by server kind (streams on local servers: cancellable)
    llm_max_output_tokens: int = Field(default=700, ge=64)
    llm_repair_rounds: int = Field(default=1, ge=0, le=5)
    llm_breaker_failures: int = Field(default=5, ge=1)
    llm_breaker_reset_s: float = Field(default=30.0, gt=0)
    llm_daily_token_budget: int = Field(default=0, ge=0)  # per tenant per UTC day, 0 = no cap
    llm_concurrency: int | None = Field(default=None, ge=1, le=256)  # None: by server kind
    # facts from the plan's call (plan), a call of their own (call), or the rules (rules)
    llm_facts: Literal["plan", "call", "rules"] = "plan"
    llm_reconcile_calls: int = Field(default=1, ge=0, le=16)  # belief decisions per event
    llm_rule_structure: bool = True  # add the heuristic's dates and event links to a plan
    # which concept an event joins: the heuristic's rules (the model names it) or the model
    llm_concept_boundaries: Literal["rules", "model"] = "rules"
    llm_near_duplicate: float = Field(default=0.97, gt=0, le=1)

    # --- logging
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    log_format: Literal["console", "json"] = "console"

    # --- runner
    poll_interval: float = Field(default=0.5, gt=0, le=60)  # tail -f poll (seconds)
    sweep_interval: float = Field(default=300.0, ge=0)  # decay sweep period (seconds, 0 = off)
    # the cyclic garbage collector's first-generation threshold (0: Python's own, 700): a fold
    # frees most of what it allocates by reference counting (stream_app/collector.py)
    gc_threshold: int = Field(default=20_000, ge=0)
    max_concurrent_tenants: int = Field(default=4, ge=1, le=256)
    tenant_queue_size: int = Field(default=256, ge=1)
    # a tenant's queue is folded in batches of up to this many events (one embedder call, two
    # commits per batch: topologies.engine.FoldEngine.fold_batch) ...
    fold_batch_size: int = Field(default=64, ge=1, le=4096)
    # ... waiting up to this long for a batch to fill (0: fold what the queue holds at once,
    # which batches a backlog and adds no latency to a live stream)
    fold_batch_ms: float = Field(default=0.0, ge=0, le=60_000)
    # while a tenant's batch folds, the texts of its next batch (already queued) are embedded
    # in a worker thread (topologies.engine.FoldEngine.fold_batch's ``ahead``); false: off
    embed_ahead: bool = True
    # ... and parsed (spaCy, its events analysed) in a worker process on another core
    # (stream_app/hub/reader.py; about 180 MB while it runs; off on one core); false: each
    # batch parses its own texts
    parse_ahead: bool = True
    # a fact's statement that is a sentence of its event's text is embedded from the text's
    # own model pass (MiniLM: late chunking), not in a second one; false: on its own
    statements_in_context: bool = True
    # Kafka workers: messages taken and folded as one batch (1: one at a time, by
    # FOLDMEM_KAFKA_CONCURRENCY actors); batches of 64 folded 1.18x the events per second of
    # one at a time (docs/kafka.md)
    kafka_fold_batch_size: int = Field(default=64, ge=1, le=4096)
    # events further ahead of the wall clock than this are refused (stream_app.ingest.admission)
    max_future_days: float = Field(default=730.0, gt=0)
    # how long a write waits for another process writing the same tenant
    # (stream_app.embedded.interlock)
    write_lock_timeout_s: float = Field(default=60.0, gt=0)

    # --- Kafka deployment (stream_app.kafka.worker); comma-separated host:port list
    kafka_brokers: str = "localhost:9092"
    kafka_app_id: str = Field(default="foldmem", min_length=1)  # consumer group + table prefix
    kafka_events_topic: str = "foldmem.events"
    kafka_intents_topic: str = "foldmem.intents"
    kafka_deadletter_topic: str = "foldmem.deadletter"
    kafka_partitions: int = Field(default=8, ge=1, le=1024)  # events topic = state changelog
    kafka_replication: int = Field(default=1, ge=1, le=16)
    kafka_concurrency: int = Field(default=8, ge=1, le=256)  # tenants folded concurrently
    kafka_session_timeout: float = Field(default=10.0, gt=0)  # dead worker -> partitions move
    kafka_standby_replicas: int = Field(default=0, ge=0, le=8)  # Faust standby table replicas
    kafka_advertised_host: str | None = None  # host other workers forward API requests to

    # --- connectors (docs/connectors.md)
    webhook_url: str | None = None  # embedded mode: also POST every intent message here
    webhook_secret: SecretStr | None = None  # HMAC-SHA256 key of the X-Foldmem-Signature header
    # durable webhook delivery (stream_app.outbox.notify): backoff from webhook_backoff_s
    # doubling up to webhook_max_backoff_s, dead letter only after webhook_retry_hours; at exit
    # a process goes on delivering for webhook_drain_s, then leaves the rest queued for the next
    webhook_retry_hours: float = Field(default=24.0, gt=0)
    webhook_backoff_s: float = Field(default=1.0, gt=0)
    webhook_max_backoff_s: float = Field(default=600.0, gt=0)
    webhook_drain_s: float = Field(default=10.0, ge=0)
    imap_password: SecretStr | None = None  # for imap[s]://user@host/FOLDER sources
    imap_poll_interval: float = Field(default=60.0, gt=0)  # seconds between IMAP polls

    # --- engine parameters (None = EngineConfig's default)
    context_knn: int | None = Field(default=None, ge=1)
    merge_similarity: float | None = Field(default=None, gt=0, le=1)
    decay_per_day: float | None = Field(default=None, ge=0)
    prune_floor: float | None = Field(default=None, ge=0)
    intent_threshold: float | None = Field(default=None, gt=0)
    intent_stale_days: float | None = Field(default=None, gt=0)  # pending, no new evidence
    intent_deadline_grace_days: float | None = Field(default=None, ge=0)  # pending, past due
    assign_similarity: float | None = Field(default=None, gt=0, le=1)
    pair_similarity: float | None = Field(default=None, gt=0, le=1)
    pool_size: int | None = Field(default=None, ge=1)
    ann_min_vectors: int | None = Field(default=None, ge=2)  # exact kNN below, IVF above
    ann_nprobe: int | None = Field(default=None, ge=1)  # IVF buckets scanned per search

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if not is_loopback(self.api_host) and self.api_token is None:
            raise ValueError(
                f"FOLDMEM_API_TOKEN is required when the API binds to {self.api_host!r} "
                "(a non-loopback address)"
            )
        if self.embedder == "openai" and not self.embedding_base_url and not self.embedding_api_key:
            raise ValueError(
                "FOLDMEM_EMBEDDER=openai needs FOLDMEM_EMBEDDING_BASE_URL or "
                "FOLDMEM_EMBEDDING_API_KEY"
            )
        return self

    # ------------------------------------------------------------------ derived
    @property
    def kafka_broker_list(self) -> list[str]:
        return [b.strip() for b in self.kafka_brokers.split(",") if b.strip()]

    @property
    def token(self) -> str | None:
        return None if self.api_token is None else self.api_token.get_secret_value()

    def engine_config(self) -> EngineConfig:
        """The EngineConfig with every FOLDMEM_ override applied."""
        top: dict[str, Any] = {}
        context: dict[str, Any] = {}
        consolidation: dict[str, Any] = {}
        intents: dict[str, Any] = {}
        ann: dict[str, Any] = {}
        _put(context, "knn", self.context_knn)
        _put(consolidation, "merge_similarity", self.merge_similarity)
        _put(consolidation, "decay_per_day", self.decay_per_day)
        _put(consolidation, "prune_floor", self.prune_floor)
        _put(intents, "initial_threshold", self.intent_threshold)
        _put(intents, "stale_after_days", self.intent_stale_days)
        _put(intents, "deadline_grace_days", self.intent_deadline_grace_days)
        _put(top, "assign_similarity", self.assign_similarity)
        _put(top, "pair_similarity", self.pair_similarity)
        _put(top, "pool_size", self.pool_size)
        _put(top, "embed_ahead", self.embed_ahead)
        _put(top, "statements_in_context", self.statements_in_context)
        _put(ann, "min_vectors", self.ann_min_vectors)
        _put(ann, "nprobe", self.ann_nprobe)
        base = EngineConfig()
        return base.model_copy(
            update={
                **top,
                "context": base.context.model_copy(update=context),
                "consolidation": base.consolidation.model_copy(update=consolidation),
                "intents": base.intents.model_copy(update=intents),
                "ann": base.ann.model_copy(update=ann),
            }
        )

    def llm_config(self) -> Any:
        """The topologies.llm LLMConfig built from the ``llm_*`` fields."""
        from topologies.llm.config import LLMConfig

        return LLMConfig.from_settings(self)

    # ---------------------------------------------------------------- file paths
    @property
    def db_path(self) -> Path:
        return self.data_dir / "foldmem.db"

    @property
    def intents_path(self) -> Path:
        return self.data_dir / INTENTS_FILE

    @property
    def deadletter_path(self) -> Path:
        return self.data_dir / DEADLETTER_FILE

    @property
    def ingest_db_path(self) -> Path:
        return self.data_dir / "ingest.db"

    @property
    def run_lock_path(self) -> Path:
        return self.data_dir / "run.lock"

    @property
    def locks_path(self) -> Path:
        return self.data_dir / "locks"


def _put(target: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        target[key] = value


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment plus explicit overrides (None values are ignored).

    Raises ConfigError (a FoldmemError) with every problem named, instead of a traceback.
    """
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**given)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ConfigError(f"invalid configuration: {problems}") from exc
