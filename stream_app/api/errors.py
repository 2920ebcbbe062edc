"""Error answers of the API: short, ASCII-safe, never an echo of a large input.

FastAPI's 422 repeats each invalid ``input`` whole (a 50 MB body came back as a 52 MB error)
and renders with ``ensure_ascii=False`` (a lone surrogate in the input raised
UnicodeEncodeError while answering). Here every error detail is cut to a snippet
(:data:`SNIPPET` characters of a string, the size of an object or list) and the JSON is
ASCII-escaped.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

SNIPPET = 80  # characters of an offending input shown back
MESSAGE = 500  # characters of an error message
MAX_ERRORS = 10


class SafeJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def snippet(value: Any, limit: int = SNIPPET) -> Any:
    """A short stand-in for an input: strings cut, containers summarised, scalars as they are."""
    if isinstance(value, str):
        return value if len(value) <= limit else f"{value[:limit]}... ({len(value)} characters)"
    if isinstance(value, bytes):
        return snippet(value.decode("utf-8", "replace"), limit)
    if isinstance(value, dict):
        if len(json.dumps(value, default=str)) <= limit:
            return value
        return f"an object with {len(value)} key(s)"
    if isinstance(value, (list, tuple)):
        if len(json.dumps(value, default=str)) <= limit:
            return list(value)
        return f"a list of {len(value)} item(s)"
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return snippet(str(value), limit)


def trimmed_errors(errors: Any) -> list[dict[str, Any]]:
    out = []
    for error in list(errors)[:MAX_ERRORS]:
        item: dict[str, Any] = {
            "type": error.get("type"),
            "loc": [snippet(part, 40) for part in error.get("loc", ())],
            "msg": snippet(str(error.get("msg", "")), MESSAGE),
        }
        if "input" in error:
            item["input"] = snippet(error["input"])
        if error.get("ctx"):
            item["ctx"] = {k: snippet(v) for k, v in error["ctx"].items()}
        out.append(item)
    return out


async def validation_error(request: Request, exc: Exception) -> SafeJSONResponse:
    assert isinstance(exc, RequestValidationError)
    return SafeJSONResponse({"detail": trimmed_errors(exc.errors())}, status_code=422)


async def http_error(request: Request, exc: Exception) -> SafeJSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    detail = exc.detail if not isinstance(exc.detail, str) else snippet(exc.detail, MESSAGE)
    return SafeJSONResponse({"detail": detail}, status_code=exc.status_code, headers=exc.headers)


def register(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
