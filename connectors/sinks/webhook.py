"""POST intents to a webhook: HMAC-SHA256 signature, retries with backoff, dead-letter file."""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import hmac
import random
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Attempt:
    """One delivery attempt: delivered, or why not and whether trying again can help."""

    ok: bool
    retryable: bool
    reason: str
    retry_after: float | None = None  # the receiver's Retry-After, in seconds


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

    async def attempt(self, message: IntentMessage) -> Attempt:
        """One signed POST of the message, and what became of it (no retry, no dead letter)."""
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
            return Attempt(False, True, f"{type(exc).__name__}: {exc}")
        if response.is_success:
            return Attempt(True, False, f"HTTP {response.status_code}")
        return Attempt(
            False,
            response.status_code in _RETRY_STATUSES,
            f"HTTP {response.status_code}",
            _retry_after(response.headers.get("Retry-After")),
        )

    async def add(self, message: IntentMessage) -> None:
        for number in range(1, self.max_attempts + 1):
            outcome = await self.attempt(message)
            if outcome.ok:
                self.delivered += 1
                log.debug("webhook_delivered", message_id=message.message_id, attempt=number)
                return
            if not outcome.retryable:
                break
            if number < self.max_attempts:
                delay = self._delay(number, outcome.retry_after)
                log.info(
                    "webhook_retry",
                    message_id=message.message_id,
                    attempt=number,
                    reason=outcome.reason,
                    delay=round(delay, 3),
                )
                await asyncio.sleep(delay)
        await self._dead_letter(message, outcome.reason, number)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        base = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        delay = base / 2 + random.uniform(0, base / 2)  # jitter spreads retries
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_backoff))
        return delay

    async def _dead_letter(self, message: IntentMessage, reason: str, attempts: int) -> None:
        self.dead_lettered += 1
        if self.dead_letter_path is not None:
            write_dead_letter(self.dead_letter_path, self.url, message, reason, attempts)
        else:
            log.warning(
                "webhook_dead_letter",
                message_id=message.message_id,
                reason=reason,
                attempts=attempts,
            )

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


def write_dead_letter(
    path: Path, url: str, message: IntentMessage, reason: str, attempts: int
) -> None:
    """Append a message given up on to the webhook dead-letter file (JSON line)."""
    log.warning(
        "webhook_dead_letter", message_id=message.message_id, reason=reason, attempts=attempts
    )
    record = {
        "message_id": message.message_id,
        "url": url,
        "reason": reason,
        "attempts": attempts,
        "failed_at": datetime.now(UTC).isoformat(),
        "message": orjson.loads(message_body(message)),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # a replay may be rewriting the file
        fh.write(orjson.dumps(record) + b"\n")
