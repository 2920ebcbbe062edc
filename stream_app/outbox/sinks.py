"""The sinks of the embedded mode and of ``foldmem notify``, from Settings, each with how the
outbox feeds it (:class:`stream_app.outbox.delivery.Delivery`):

- the terminal (``human`` lines) and DATA_DIR/intents.jsonl (each line with its
  ``message_id``): inline, every message, retried without a horizon;
- a webhook (``FOLDMEM_WEBHOOK_URL``/``_SECRET``, or ``foldmem notify --webhook``): in the
  background (a slow or failing webhook never holds up a fold), each message id once, retried
  with ``FOLDMEM_WEBHOOK_BACKOFF_S`` doubling up to ``_MAX_BACKOFF_S`` for
  ``_RETRY_HOURS``, then dead-lettered to DATA_DIR/webhook-deadletter.jsonl.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from connectors.sinks import JsonlSink, Sink, StdoutSink, WebhookSink
from schemas.errors import ConfigError
from stream_app.embedded.interlock import TenantLocks
from stream_app.embedded.store import Store
from stream_app.outbox.delivery import Deliveries, Delivery, RetryPolicy
from stream_app.outbox.table import Outbox
from stream_app.settings import WEBHOOK_DEADLETTER_FILE, Settings

LOCAL_RETRY = RetryPolicy(first_delay_s=0.5, max_delay_s=30.0)  # a full disk: until it is not


def dead_letter_path(settings: Settings) -> Path:
    return settings.data_dir / WEBHOOK_DEADLETTER_FILE


def webhook_secret(settings: Settings, secret: str | None = None) -> str:
    value = secret or (
        settings.webhook_secret.get_secret_value() if settings.webhook_secret else None
    )
    if not value:
        raise ConfigError(
            "a webhook needs a signing secret: pass --secret or set FOLDMEM_WEBHOOK_SECRET"
        )
    return value


def webhook_sink(
    settings: Settings, url: str | None = None, secret: str | None = None
) -> WebhookSink:
    """The webhook (default FOLDMEM_WEBHOOK_URL / FOLDMEM_WEBHOOK_SECRET)."""
    url = url or settings.webhook_url or ""
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"webhook URL must start with http:// or https://, got {url!r}")
    return WebhookSink(url, webhook_secret(settings, secret))


def webhook_policy(settings: Settings) -> RetryPolicy:
    return RetryPolicy(
        first_delay_s=settings.webhook_backoff_s,
        max_delay_s=settings.webhook_max_backoff_s,
        horizon_s=settings.webhook_retry_hours * 3600.0,
    )


def intents_log(settings: Settings) -> JsonlSink:
    """DATA_DIR/intents.jsonl, named for the data dir (a copied data dir keeps its cursor)."""
    return JsonlSink(settings.intents_path, with_message_id=True, name="jsonl:intents.jsonl")


def default_sinks(settings: Settings, stream: TextIO | None = None) -> list[Sink]:
    """Print each intent message and append it to DATA_DIR/intents.jsonl (and POST it to
    FOLDMEM_WEBHOOK_URL when set)."""
    sinks: list[Sink] = [
        StdoutSink(style="human", stream=stream),
        intents_log(settings),
    ]
    if settings.webhook_url:
        sinks.append(webhook_sink(settings))
    return sinks


def delivery(
    settings: Settings, outbox: Outbox, sink: Sink, *, once: bool | None = None
) -> Delivery:
    """How the outbox feeds ``sink``: a webhook each id once with its retry horizon and dead
    letters, a local sink every message until it takes it (``once`` overrides)."""
    webhook = isinstance(sink, WebhookSink)
    return Delivery(
        sink,
        outbox,
        once=webhook if once is None else once,
        policy=webhook_policy(settings) if webhook else LOCAL_RETRY,
        dead_letters=dead_letter_path(settings) if webhook else None,
        locks=TenantLocks(settings.locks_path),
    )


def embedded_deliveries(settings: Settings, store: Store, sinks: Sequence[Sink]) -> Deliveries:
    """The embedded hub's: local sinks inline, webhooks in the background."""
    outbox = Outbox(store)
    return Deliveries(
        [delivery(settings, outbox, sink) for sink in sinks],
        inline=[s.name for s in sinks if not isinstance(s, WebhookSink)],
        drain_s=settings.webhook_drain_s,
    )
