"""The model client: one JSON object per request, over any OpenAI-compatible server.

- Structured-output ladder: ``json_schema`` (strict) -> ``json_object_schema``
  (``{"type": "json_object", "schema": ...}``, grammar-constrained on llama.cpp servers) ->
  ``json_object`` -> plain text with the JSON object extracted; a refused ``response_format``
  moves one rung down. The rung that worked is remembered per endpoint
  (:class:`CapabilityMemory`), so later calls start there.
- Timeouts (``ServerPolicy``, by server kind): one deadline per request, from sending it to
  the last token. A streamed request that misses it is cancelled by closing the stream (the
  server stops generating); a timed-out request is sent again only when the policy allows
  it (not to a single-request local server, which would queue the retry behind the request
  it is still computing).
- Retries: 429, 5xx and connection errors are retried with jittered exponential backoff; a
  Retry-After (or retry-after-ms) header is respected, and one longer than
  ``retry_after_max_s`` ends the attempt at once (the caller falls back instead of blocking).
- Concurrency: at most ``concurrency`` requests in flight (the semaphore is held only during
  a request, not while backing off).
- A reply cut at ``max_output_tokens`` comes back with ``truncated`` set.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import openai
import structlog

from schemas.errors import LLMError, TransientLLMError
from topologies.llm.completer import LLMReply
from topologies.llm.config import LADDER, LLMConfig, StructuredMode
from topologies.llm.jsontext import extract_json_object

log = structlog.get_logger(__name__)

Message = dict[str, str]


class CapabilityMemory:
    """Which structured-output rung works, per endpoint (server URL + model)."""

    def __init__(self) -> None:
        self._modes: dict[str, StructuredMode] = {}
        self._lock = threading.Lock()

    def get(self, endpoint: str) -> StructuredMode | None:
        with self._lock:
            return self._modes.get(endpoint)

    def remember(self, endpoint: str, mode: StructuredMode) -> None:
        with self._lock:
            previous = self._modes.get(endpoint)
            self._modes[endpoint] = mode
        if previous != mode:
            log.info("llm_capability", endpoint=endpoint, mode=mode, previous=previous)

    def snapshot(self) -> dict[str, str]:
        with self._lock:
            return dict(self._modes)

    def restore(self, data: dict[str, str]) -> None:
        with self._lock:
            for endpoint, mode in data.items():
                for rung in LADDER:
                    if mode == rung:
                        self._modes[endpoint] = rung


_SHARED_CAPABILITIES: CapabilityMemory | None = None


def shared_capabilities() -> CapabilityMemory:
    """The process-wide capability memory (created on first use)."""
    global _SHARED_CAPABILITIES
    if _SHARED_CAPABILITIES is None:
        _SHARED_CAPABILITIES = CapabilityMemory()
    return _SHARED_CAPABILITIES


def _rejects_format(exc: openai.APIStatusError) -> bool:
    """The server refused the response_format we sent (whatever status it used to say so)."""
    text = f"{exc.message} {exc.body}".lower()
    return "response_format" in text and any(
        word in text for word in ("json_schema", "json_object", "literal_error", "not supported")
    )


def _retry_after(exc: openai.APIStatusError) -> float | None:
    headers = exc.response.headers
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def _estimate_tokens(chars: int) -> int:
    return max(1, chars // 4)


class LLMClient:
    """Thin, resilient wrapper over ``openai.AsyncOpenAI().chat.completions.create``."""

    def __init__(
        self,
        config: LLMConfig,
        capabilities: CapabilityMemory | None = None,
        http_client: Any | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.policy = config.policy
        self.capabilities = capabilities or shared_capabilities()
        self._http_client = http_client
        self._sleep = sleep
        self._clock = clock
        self._client: openai.AsyncOpenAI | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self.requests = 0  # HTTP requests sent (all attempts)
        self.cancelled = 0  # streamed requests closed at their deadline

    # ------------------------------------------------------------------ setup
    @property
    def client(self) -> openai.AsyncOpenAI:
        if self._client is None:
            kwargs: dict[str, Any] = {
                "api_key": self.config.key() or "sk-no-key",
                "timeout": self.policy.timeout_s,
                "max_retries": 0,  # retries are ours: jitter, Retry-After, breaker
            }
            if self.config.base_url:
                kwargs["base_url"] = self.config.base_url
            if self._http_client is not None:
                kwargs["http_client"] = self._http_client
            self._client = openai.AsyncOpenAI(**kwargs)
        return self._client

    @property
    def semaphore(self) -> asyncio.Semaphore:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.policy.concurrency)
        return self._semaphore

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    def _first_mode(self) -> StructuredMode:
        if self.config.structured_output != "auto":
            return self.config.structured_output
        return self.capabilities.get(self.config.endpoint) or LADDER[0]

    @staticmethod
    def _response_format(
        mode: StructuredMode, name: str, schema: dict[str, Any], grammar: dict[str, Any]
    ) -> Any:
        if mode == "json_schema":
            return {
                "type": "json_schema",
                "json_schema": {"name": name, "strict": True, "schema": schema},
            }
        if mode == "json_object_schema":
            return {"type": "json_object", "schema": grammar}
        if mode == "json_object":
            return {"type": "json_object"}
        return openai.NOT_GIVEN

    def _step_down(self, mode: StructuredMode) -> StructuredMode | None:
        lower = LADDER.index(mode) + 1
        if self.config.structured_output == "auto" and lower < len(LADDER):
            return LADDER[lower]
        return None

    # ------------------------------------------------------------------- call
    async def complete_json(
        self,
        messages: list[Message],
        schema_name: str,
        schema: dict[str, Any],
        log_ctx: dict[str, Any] | None = None,
        grammar_schema: dict[str, Any] | None = None,
    ) -> LLMReply:
        """One completion parsed to a JSON object. ``schema`` goes to servers that take a
        strict ``json_schema``; ``grammar_schema`` (default ``schema``) to servers that take
        ``{"type": "json_object", "schema": ...}`` (it may be stricter: no strict-mode rules).
        Raises TransientLLMError when retries are exhausted (or a request timed out that may
        not be sent again), LLMError on errors retrying will not fix. A reply without JSON
        comes back with ``error`` set (the caller may run a repair round)."""
        ctx = log_ctx or {}
        mode = self._first_mode()
        grammar = grammar_schema or schema
        transient_attempts = 0
        attempts = 0
        while True:
            attempts += 1
            response_format = self._response_format(mode, schema_name, schema, grammar)
            try:
                async with self.semaphore:
                    self.requests += 1
                    started = self._clock()
                    text, finish, usage = await self._request(messages, response_format, ctx)
                    seconds = self._clock() - started
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                lower = self._step_down(mode)
                if lower is not None:
                    log.info("llm_format_rejected", mode=mode, next=lower,
                             status=exc.status_code, **ctx)  # fmt: skip
                    mode = lower
                    continue
                raise LLMError(f"the model server rejected the request: {exc}") from exc
            except openai.APIStatusError as exc:
                lower = self._step_down(mode)
                if lower is not None and _rejects_format(exc):
                    # some servers (llama-cpp-python) answer an unknown response_format with
                    # a 500 validation error instead of a 400: that is a capability, not an outage
                    log.info("llm_format_rejected", mode=mode, next=lower,
                             status=exc.status_code, **ctx)  # fmt: skip
                    mode = lower
                    continue
                if exc.status_code == 429 or exc.status_code >= 500:
                    transient_attempts += 1
                    await self._backoff(
                        transient_attempts, f"HTTP {exc.status_code}", _retry_after(exc), ctx
                    )
                    continue
                raise LLMError(f"HTTP {exc.status_code} from the model server: {exc}") from exc
            except (openai.APITimeoutError, TimeoutError) as exc:
                if not self.policy.retry_timeouts:
                    log.warning("llm_timeout", timeout_s=self.policy.timeout_s,
                                retried=False, **ctx)  # fmt: skip
                    raise TransientLLMError(
                        f"no reply within {self.policy.timeout_s:g}s (not retried: the "
                        f"{self.policy.kind} server computes one request at a time)"
                    ) from exc
                transient_attempts += 1
                await self._backoff(transient_attempts, "timeout", None, ctx)
                continue
            except openai.APIConnectionError as exc:
                transient_attempts += 1
                await self._backoff(transient_attempts, type(exc).__name__, None, ctx)
                continue
            if self.config.structured_output == "auto":
                self.capabilities.remember(self.config.endpoint, mode)
            return self._reply(text, finish, usage, messages, mode, attempts, seconds)

    async def _request(
        self, messages: list[Message], response_format: Any, ctx: dict[str, Any]
    ) -> tuple[str, str | None, Any]:
        """(content, finish_reason, usage) of one request within the policy's deadline."""
        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_output_tokens,
            "response_format": response_format,
        }
        if not self.policy.stream:
            response = await self.client.chat.completions.create(**kwargs)
            text, finish = "", None
            if response.choices:
                text = response.choices[0].message.content or ""
                finish = response.choices[0].finish_reason
            return text, finish, getattr(response, "usage", None)
        parts: list[str] = []
        finish, usage, chunks = None, None, 0
        stream: Any = None
        try:
            async with asyncio.timeout(self.policy.timeout_s):
                stream = await self.client.chat.completions.create(
                    **kwargs, stream=True, stream_options={"include_usage": True}
                )
                async for chunk in stream:
                    usage = getattr(chunk, "usage", None) or usage
                    for choice in chunk.choices or ():
                        if choice.delta is not None and choice.delta.content:
                            parts.append(choice.delta.content)
                            chunks += 1
                        finish = choice.finish_reason or finish
        except TimeoutError:
            self.cancelled += 1
            log.warning("llm_stream_cancelled", timeout_s=self.policy.timeout_s,
                        tokens_so_far=chunks, **ctx)  # fmt: skip
            raise
        finally:
            if stream is not None:
                await stream.close()  # closing the connection tells the server to stop
        if usage is None:
            usage = _StreamUsage(None, chunks)
        return "".join(parts), finish, usage

    async def _backoff(
        self, attempt: int, reason: str, retry_after: float | None, ctx: dict[str, Any]
    ) -> None:
        cfg = self.config
        if attempt > self.policy.max_retries:
            raise TransientLLMError(f"{reason} after {attempt} attempts")
        if retry_after is not None:
            if retry_after > cfg.retry_after_max_s:
                raise TransientLLMError(
                    f"{reason}: Retry-After {retry_after:.1f}s exceeds {cfg.retry_after_max_s}s"
                )
            delay = retry_after + random.uniform(0.0, 0.1 * max(retry_after, cfg.backoff_base_s))
        else:
            ceiling = min(cfg.backoff_max_s, cfg.backoff_base_s * (2 ** (attempt - 1)))
            delay = random.uniform(ceiling / 2.0, ceiling)  # "equal jitter"
        log.info(
            "llm_retry",
            reason=reason,
            attempt=attempt,
            delay_s=round(delay, 3),
            retry_after=retry_after,
            **ctx,
        )
        await self._sleep(delay)

    def _reply(
        self,
        text: str,
        finish: str | None,
        usage: Any,
        messages: list[Message],
        mode: StructuredMode,
        attempts: int,
        seconds: float,
    ) -> LLMReply:
        prompt_tokens = getattr(usage, "prompt_tokens", None)
        completion_tokens = getattr(usage, "completion_tokens", None)
        estimated = prompt_tokens is None
        tokens_in = (
            int(prompt_tokens)
            if prompt_tokens is not None
            else _estimate_tokens(sum(len(m["content"]) for m in messages))
        )
        tokens_out = (
            int(completion_tokens) if completion_tokens is not None else _estimate_tokens(len(text))
        )
        try:
            data, error = extract_json_object(text), None
        except LLMError as exc:
            data, error = {}, str(exc)
        truncated = finish == "length"
        if truncated and error is not None:
            error = (
                f"the reply stopped at the limit of {self.config.max_output_tokens} tokens "
                f"before the JSON object was complete ({error})"
            )
        return LLMReply(
            data=data,
            text=text,
            mode=mode,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            estimated=estimated,
            attempts=attempts,
            error=error,
            truncated=truncated,
            seconds=seconds,
        )


@dataclass(frozen=True)
class _StreamUsage:
    """What a stream without a usage chunk tells: the content chunks (about one token each)."""

    prompt_tokens: int | None
    completion_tokens: int
