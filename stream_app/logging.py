"""structlog set-up: key-value logs to stderr, as console lines or JSON.

Tracebacks are plain text without local variables (structlog's console renderer would show
every frame's locals through rich: request headers with the bearer token among them), and
every event passes :class:`stream_app.redact.Redactor`, which masks credentials."""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog

from stream_app.redact import Redactor
from stream_app.settings import Settings


class _CurrentStderr:
    """Writes to whatever sys.stderr is at the time (test runners swap and close it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return sys.stderr.isatty()


def configure_logging(settings: Settings, stream: TextIO | None = None) -> None:
    """Configure structlog and the stdlib root logger (uvicorn, faust) alike."""
    level = logging.getLevelName(settings.log_level.upper())
    out: Any = stream or _CurrentStderr()
    renderer: structlog.typing.Processor
    if settings.log_format == "json":
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(
            colors=out.isatty(), exception_formatter=structlog.dev.plain_traceback
        )
    redact = Redactor(_secrets(settings))
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[
            *shared,
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            redact,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(out)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,  # plain text, no locals
                redact,
                renderer,
            ],
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in ("uvicorn.access", "httpx", "httpcore", "faiss", "faiss.loader"):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))


def _secrets(settings: Settings) -> list[str | None]:
    """Every literal credential the settings hold."""
    found: list[str | None] = []
    for name in (
        "api_token",
        "llm_api_key",
        "embedding_api_key",
        "webhook_secret",
        "imap_password",
    ):
        value = getattr(settings, name, None)
        found.append(value.get_secret_value() if value is not None else None)
    return found
