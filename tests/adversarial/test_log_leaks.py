"""Issue 12 item 8: a 500 logs a traceback without local variables, and credentials never
reach the log (bearer tokens, API keys, webhook secrets, tokens in URLs)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import structlog

from stream_app.embedded.hub import MemoryHub
from stream_app.logging import configure_logging
from tests.app.conftest import app_settings
from tests.app.test_api import LiveApi

TOKEN = "s3cret-token-4711"
LLM_KEY = "sk-live-abcdef0123456789"
WEBHOOK_SECRET = "whsec-0000-1111"


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    out = io.StringIO()
    yield out
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.reset_defaults()


@pytest.mark.parametrize("log_format", ["console", "json"])
def test_a_500_logs_no_locals_and_no_token(
    sample_dir: Path,
    captured: io.StringIO,
    monkeypatch: pytest.MonkeyPatch,
    log_format: str,
) -> None:
    settings = app_settings(
        sample_dir, api_token=TOKEN, llm_api_key=LLM_KEY, webhook_secret=WEBHOOK_SECRET,
        log_format=log_format, log_level="info",
    )  # fmt: skip
    configure_logging(settings, stream=captured)

    def broken(*args: Any, **kwargs: Any) -> Any:
        secret_in_a_local = f"Bearer {TOKEN}"  # noqa: F841  (a local a traceback could show)
        raise RuntimeError("the reader broke")

    monkeypatch.setattr(MemoryHub, "query", broken)
    with LiveApi(settings) as live, httpx.Client(base_url=live.url) as client:
        reply = client.post("/tenants/alice/query", json={"text": "dentist"},
                            headers={"Authorization": f"Bearer {TOKEN}"})  # fmt: skip
    assert reply.status_code == 500
    text = captured.getvalue()
    assert "the reader broke" in text  # the error is logged ...
    assert TOKEN not in text  # ... without the token
    assert "secret_in_a_local" not in text  # and without local variables
    assert len(text.splitlines()) < 400


def test_credentials_in_log_values_are_redacted(sample_dir: Path, captured: io.StringIO) -> None:
    settings = app_settings(
        sample_dir, api_token=TOKEN, llm_api_key=LLM_KEY, webhook_secret=WEBHOOK_SECRET,
        log_format="json", log_level="info",
    )  # fmt: skip
    configure_logging(settings, stream=captured)
    log = structlog.get_logger("test")
    log.info("calling", url=f"https://hooks.example.org/h?token={TOKEN}&x=1",
             headers={"Authorization": f"Bearer {TOKEN}", "X-Api-Key": LLM_KEY},
             api_key=LLM_KEY, webhook_secret=WEBHOOK_SECRET, tokens_in=12)  # fmt: skip
    log.warning("upstream", error=f"401 for https://user:{WEBHOOK_SECRET}@example.org/x")
    logging.getLogger("uvicorn.error").error("seen %s", f"authorization: bearer {TOKEN}")
    text = captured.getvalue()
    for secret in (TOKEN, LLM_KEY, WEBHOOK_SECRET):
        assert secret not in text
    assert '"tokens_in": 12' in text  # counters named like tokens are not secrets
    assert "hooks.example.org" in text  # the rest of the URL stays readable
