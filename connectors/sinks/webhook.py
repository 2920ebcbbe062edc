"""POST intents to a webhook: HMAC-SHA256 signature, retries with backoff, dead-letter file."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import random
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path

import httpx
import orjson
import structlog

from connectors.sinks.base import message_body
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
    """Deliver each message as a signed JSON POST; after `max_attempts` failures (or a
    non-retryable 4xx) it is appended to `dead_letter_path` with the reason.

    Retries on connection errors, timeouts, 408/425/429 and 5xx, with exponential backoff
    (`backoff * 2**(n-1)`, capped at `max_backoff`) plus jitter; Retry-After is honoured.
    Receivers dedup on the X-Foldmem-Message-Id header (a retry after a lost response
    repeats it).
    """

    def __init__(
        self,
        url: str,
        secret: str,
        *,
        max_attempts: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        dead_letter_path: str | Path | None = None,
        timeout: float = 10.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.url = url
        self.secret = secret
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.dead_letter_path = Path(dead_letter_path) if dead_letter_path else None
        self._client = client
        self._owns_client = client is None
        self.timeout = timeout
        self.delivered = 0
        self.dead_lettered = 0

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout)
        return self._client

    async def add(self, message: IntentMessage) -> None:
        body = message_body(message)
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: sign(body, self.secret),
            MESSAGE_ID_HEADER: message.message_id,
            "User-Agent": "foldmem-webhook/1",
        }
        reason = ""
        for attempt in range(1, self.max_attempts + 1):
            retry_after: float | None = None
            try:
                response = await self.client.post(self.url, content=body, headers=headers)
            except httpx.TransportError as exc:
                reason = f"{type(exc).__name__}: {exc}"
            else:
                if response.is_success:
                    self.delivered += 1
                    log.debug("webhook_delivered", message_id=message.message_id, attempt=attempt)
                    return
                reason = f"HTTP {response.status_code}"
                if response.status_code not in _RETRY_STATUSES:
                    break
                retry_after = _retry_after(response.headers.get("Retry-After"))
            if attempt < self.max_attempts:
                delay = self._delay(attempt, retry_after)
                log.info(
                    "webhook_retry",
                    message_id=message.message_id,
                    attempt=attempt,
                    reason=reason,
                    delay=round(delay, 3),
                )
                await asyncio.sleep(delay)
        await self._dead_letter(message, reason, attempt)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        base = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        delay = base / 2 + random.uniform(0, base / 2)  # jitter spreads retries
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_backoff))
        return delay

    async def _dead_letter(self, message: IntentMessage, reason: str, attempts: int) -> None:
        self.dead_lettered += 1
        log.warning(
            "webhook_dead_letter", message_id=message.message_id, reason=reason, attempts=attempts
        )
        if self.dead_letter_path is None:
            return
        record = {
            "message_id": message.message_id,
            "url": self.url,
            "reason": reason,
            "attempts": attempts,
            "failed_at": datetime.now(UTC).isoformat(),
            "message": orjson.loads(message_body(message)),
        }
        self.dead_letter_path.parent.mkdir(parents=True, exist_ok=True)
        with self.dead_letter_path.open("ab") as fh:
            fh.write(orjson.dumps(record) + b"\n")

    async def flush(self) -> None:
        return None

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
