"""Credentials never reach the log: a structlog processor that masks them in every event.

Masked, anywhere in an event (its message, values, nested dicts and lists, a formatted
traceback): the values of keys that name a credential (``authorization``, ``api_key``,
``*_token``, ``*_secret``, ``password``, ...; counters such as ``tokens_in`` are not), the
credential of an ``Authorization``-style ``Bearer``/``Basic`` string, ``token=`` / ``key=`` /
``signature=`` query parameters and the password of ``user:password@host`` in URLs, and every
literal secret the settings hold (API token, LLM and embedding API keys, webhook secret, IMAP
password).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, MutableMapping
from typing import Any

MASK = "***"
_SECRET_KEY = re.compile(
    r"^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|api[-_]?key|apikey|token|"
    r"access[-_]token|refresh[-_]token|secret|password|passwd|signature)$"
    r"|[-_](token|secret|password|api[-_]?key|signature)$",
    re.IGNORECASE,
)
_PATTERNS = (
    (
        re.compile(r"\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/=:-]{4,}", re.IGNORECASE),
        rf"\1\2{MASK}",
    ),
    (
        re.compile(
            r"([?&](?:access_token|refresh_token|token|api_key|apikey|key|secret|password|sig|"
            r"signature)=)[^&\s#'\"]+",
            re.IGNORECASE,
        ),
        rf"\1{MASK}",
    ),
    (re.compile(r"(://[^/\s:@'\"]+:)[^@\s/'\"]+@"), rf"\1{MASK}@"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"), f"sk-{MASK}"),
)
MIN_SECRET = 4  # shorter literal secrets are not searched for (they would mask ordinary text)


class Redactor:
    """structlog processor: ``Redactor(secrets)(logger, method, event_dict)``."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        found = {s for s in secrets if s and len(s) >= MIN_SECRET}
        self.secrets = sorted(found, key=len, reverse=True)

    def __call__(self, logger: Any, method: str, event: MutableMapping[str, Any]) -> Any:
        for key in list(event):
            event[key] = self.value(key, event[key])
        return event

    def value(self, key: str, value: Any) -> Any:
        if _SECRET_KEY.search(key) and value not in (None, ""):
            return MASK
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bytes):
            return self.text(value.decode("utf-8", "replace"))
        if isinstance(value, dict):
            return {k: self.value(str(k), v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value("", v) for v in value]
        return value

    def text(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        for pattern, replacement in _PATTERNS:
            text = pattern.sub(replacement, text)
        return text
