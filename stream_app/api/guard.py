"""The gate in front of every API route (pure ASGI middleware, so it covers routes added later).

In order, for each HTTP request:

1. **Token.** With ``FOLDMEM_API_TOKEN`` set, every path but the open ones (``/health``, the
   explorer page's static files under ``/ui``, which hold no data) needs
   ``Authorization: Bearer <token>``: the routes, ``/llm``, ``/openapi.json``, ``/docs``,
   ``/redoc`` and unknown paths alike (401, compared in constant time).
2. **Body size.** A body larger than the route's cap (``FOLDMEM_API_MAX_BODY_BYTES``, 2 MiB;
   ``FOLDMEM_API_MAX_INGEST_BYTES``, 8 MiB, for ``POST /tenants/{t}/events``) is refused with
   413: at once when ``Content-Length`` says so, else as soon as the streamed bytes pass the cap.
3. **Text.** A JSON body with a lone UTF-16 surrogate escape (``"\\ud800"``: no Unicode
   character, it cannot be stored or sent back) is refused with 422.

The body read here is handed on to the app unchanged.
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from fastapi import FastAPI
from starlette.middleware import Middleware

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

OPEN_PATHS = frozenset({"/health"})
# the explorer page and its static assets: no data in them; the page sends the token
OPEN_PREFIXES = ("/ui",)
_INGEST = re.compile(r"^/tenants/[^/]+/events/?$")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class RequestGuard:
    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None,
        max_body: int,
        max_ingest_body: int,
        open_paths: Iterable[str] = OPEN_PATHS,
    ) -> None:
        self.app = app
        self.token = token
        self.max_body = max_body
        self.max_ingest_body = max_ingest_body
        self.open_paths = frozenset(open_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v for k, v in scope.get("headers", [])}
        if not self._open(scope["path"]) and not self._authorized(headers):
            await _answer(send, 401, "missing or wrong bearer token",
                          [(b"www-authenticate", b"Bearer")])  # fmt: skip
            return
        limit = self._limit(scope)
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _answer(send, 413, _too_large(limit))
            return
        body, rest = await _read(receive, limit)
        if body is None:
            await _answer(send, 413, _too_large(limit))
            return
        problem = lone_surrogate(body) if b"json" in headers.get("content-type", b"") else None
        if problem is not None:
            await _answer(send, 422, [{"type": "unicode_invalid", "loc": ["body"],
                                       "msg": problem}])  # fmt: skip
            return
        await self.app(scope, _replay(body, rest, receive), send)

    def _open(self, path: str) -> bool:
        return path in self.open_paths or any(
            path == prefix or path.startswith(prefix + "/") for prefix in OPEN_PREFIXES
        )

    def _authorized(self, headers: dict[str, bytes]) -> bool:
        if self.token is None:
            return True
        scheme, _, given = headers.get("authorization", b"").decode("latin-1").partition(" ")
        expected = self.token.encode()
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), expected)

    def _limit(self, scope: Scope) -> int:
        if scope.get("method") == "POST" and _INGEST.match(scope["path"]):
            return self.max_ingest_body
        return self.max_body


def _too_large(limit: int) -> str:
    return f"request body larger than {limit} bytes (FOLDMEM_API_MAX_BODY_BYTES / _INGEST_BYTES)"


async def _read(receive: Receive, limit: int) -> tuple[bytes | None, Message | None]:
    """The whole body, or None once it passes ``limit``; and a non-body message met on the way."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), message  # e.g. http.disconnect
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None, None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), None


def _replay(body: bytes, rest: Message | None, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        if rest is not None:
            return rest
        return await receive()

    return replay


def lone_surrogate(body: bytes) -> str | None:
    """Why a JSON body holds text that is not Unicode (a lone surrogate), or None."""
    if not _SURROGATE_ESCAPE.search(body):
        return None
    try:
        value = json.loads(body)
    except ValueError:
        return None  # not JSON: the route's own validation says so
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(exc.object[exc.start])
        return f"text holds a lone surrogate (\\u{code:04x}): not valid Unicode"
    return None


async def _answer(
    send: Send, status: int, detail: Any, headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    """A JSON answer, ASCII-escaped: never a UnicodeEncodeError while answering."""
    body = json.dumps({"detail": detail}, ensure_ascii=True).encode("ascii")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def guard_middleware(token: str | None, max_body: int, max_ingest_body: int) -> Middleware:
    return Middleware(RequestGuard, token=token, max_body=max_body, max_ingest_body=max_ingest_body)


def guard_outermost(app: FastAPI) -> None:
    """Keep the guard in front of middleware added after ``create_app`` (the Kafka worker's)."""
    guards = [m for m in app.user_middleware if m.cls is RequestGuard]
    rest = [m for m in app.user_middleware if m.cls is not RequestGuard]
    app.user_middleware[:] = [*guards, *rest]  # the first is the outermost
