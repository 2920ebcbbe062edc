"""POST intent messages to a webhook, signed with HMAC-SHA256.

Each message is one JSON POST with the headers ``X-Foldmem-Signature: sha256=<hex HMAC of the
body>`` and ``X-Foldmem-Message-Id`` (receivers deduplicate on it: a retry after a lost
response repeats it). ``add`` makes one attempt; a failure raises :class:`SinkError`, retryable
for connection errors, timeouts, 408/425/429 and 5xx (with the receiver's Retry-After), not
for other 4xx. Retries, their backoff and dead letters are the outbox's
(:mod:`stream_app.outbox.delivery`).
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx
import structlog

from connectors.sinks.base import SinkError, message_body
from schemas.intents import IntentMessage

log = structlog.get_logger(__name__)

SIGNATURE_HEADER = "X-Foldmem-Signature"
MESSAGE_ID_HEADER = "X-Foldmem-Message-Id"
_RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})


def sign(body: bytes, secret: str) -> str:
    """The signature header value: `sha256=<hex HMAC-SHA256 of body>`."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify_signature(body: bytes, header: str, secret: str) -> bool:
    """True if `header` is the signature of `body` under `secret` (constant-time compare)."""
    if not header or not header.startswith("sha256="):
        return False
    return hmac.compare_digest(sign(body, secret), header.strip())


class WebhookSink:
    def __init__(
        self,
        url: str,
        secret: str,
        *,
        timeout: float = 10.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.url = url
        self.name = f"webhook:{url}"
        self.secret = secret
        self.timeout = timeout
        self._client = client
        self._owns_client = client is None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout)
        return self._client

    async def add(self, message: IntentMessage) -> None:
        """One signed POST of the message; SinkError if it was not accepted."""
        body = message_body(message)
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: sign(body, self.secret),
            MESSAGE_ID_HEADER: message.message_id,
            "User-Agent": "foldmem-webhook/1",
        }
        try:
            response = await self.client.post(self.url, content=body, headers=headers)
        except httpx.TransportError as exc:
            raise SinkError(f"{type(exc).__name__}: {exc}") from exc
        if response.is_success:
            log.debug("webhook_delivered", message_id=message.message_id)
            return
        raise SinkError(
            f"HTTP {response.status_code}",
            retryable=response.status_code in _RETRY_STATUSES,
            retry_after=_retry_after(response.headers.get("Retry-After")),
        )

    async def flush(self) -> None:
        return None  # each add waited for its answer

    async def close(self) -> None:
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
