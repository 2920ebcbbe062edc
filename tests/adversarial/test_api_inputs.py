"""Issue 12 items 7, 9 and 10: bad input gets a clean 4xx, never a 500; every route but /health
needs the token when one is set; bodies are capped and errors echo only a snippet."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from stream_app.api.app import create_app
from tests.app.conftest import app_settings, quiet_hub
from tests.app.test_api import LiveApi

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {"content-type": "application/json", **AUTH}


@pytest.fixture
def api(sample_dir: Path) -> Iterator[httpx.Client]:
    settings = app_settings(sample_dir, api_token=TOKEN)
    with LiveApi(settings) as live, httpx.Client(base_url=live.url, timeout=30) as client:
        yield client


# ------------------------------------------------------------------ item 7: no 500
@pytest.mark.parametrize("param", ["since", "until"])
@pytest.mark.parametrize("value", ["2026-11-05", "2026-11-05T10:00:00"])
def test_a_time_without_an_offset_is_a_clear_422(api: httpx.Client, param: str, value: str) -> None:
    reply = api.get("/tenants/alice/graph", params={param: value}, headers=AUTH)
    assert reply.status_code == 422, reply.text
    assert "timezone-aware" in reply.text and param in reply.text
    aware = api.get("/tenants/alice/graph", params={param: value + "T00:00:00Z"[len(value) - 10 :]},
                    headers=AUTH)  # fmt: skip
    assert aware.status_code == 200


LONE_SURROGATE = [
    ("POST", "/tenants/alice/query", '{"text": "\\ud800"}'),
    ("POST", "/tenants/alice/recall", '{"text": "\\ud800"}'),
    ("POST", "/tenants/alice/query", '{"text": "dentist", "kinds": ["\\udfff"]}'),
    ("POST", "/tenants/alice/intents/i_x/status", '{"status": "resolve", "note": "\\ud800"}'),
    ("PUT", "/tenants/alice/privacy/layers", '{"facts": true, "\\ud800": true}'),
    ("POST", "/tenants/alice/consolidate", '{"\\ud800": 1}'),
    (
        "POST",
        "/tenants/alice/events",
        '{"id": "x", "tenant": "alice", "source": "note", "ts": "2026-12-01T00:00:00Z", '
        '"title": "\\ud800 tooth"}',
    ),
]


@pytest.mark.parametrize(("method", "path", "body"), LONE_SURROGATE)
def test_a_lone_surrogate_is_a_clean_422(
    api: httpx.Client, method: str, path: str, body: str
) -> None:
    reply = api.request(method, path, content=body, headers=JSON)
    assert reply.status_code == 422, reply.text
    assert "surrogate" in reply.text


def test_a_surrogate_pair_is_valid_text(api: httpx.Client) -> None:
    reply = api.post("/tenants/alice/query", content='{"text": "tooth \\ud83e\\uddb7"}',
                     headers=JSON)  # fmt: skip
    assert reply.status_code == 200, reply.text


# ------------------------------------------------------------ item 9: open routes
def app_routes(routes: Any) -> Iterator[tuple[str, str]]:
    """(method, path) of every route, into included routers too (included without prefix)."""
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from app_routes(included.routes)
            continue
        for method in sorted(getattr(route, "methods", None) or {"GET"}):
            if method != "HEAD":
                yield method, route.path


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "x", path)


def test_every_route_but_health_needs_the_token(sample_dir: Path) -> None:
    settings = app_settings(sample_dir, api_token=TOKEN)
    hub, _ = quiet_hub(settings)
    app = create_app(hub, settings)
    routes = set(app_routes(app.routes))
    routes |= {(m.upper(), p) for p, ops in app.openapi()["paths"].items() for m in ops}
    hub.store.close()
    paths = {path for _, path in routes}
    assert {"/llm", "/openapi.json", "/docs", "/redoc", "/tenants/{tenant}/query"} <= paths
    with LiveApi(settings) as live, httpx.Client(base_url=live.url, timeout=30) as client:
        for method, path in sorted(routes):
            reply = client.request(method, _concrete(path))
            if path == "/ui" or path.startswith("/ui/"):  # the page's static files: no data
                assert reply.status_code in (200, 307), (method, path, reply.status_code)
                continue
            expected = 200 if path == "/health" else 401
            assert reply.status_code == expected, (method, path, reply.status_code)
        assert client.get("/no/such/route").status_code == 401
        assert client.get("/llm", headers=AUTH).status_code == 200
        assert client.get("/openapi.json", headers=AUTH).status_code == 200


# -------------------------------------------------------------- item 10: body size
def test_an_oversized_declared_body_is_refused_before_it_is_read(api: httpx.Client) -> None:
    url = httpx.URL(str(api.base_url))
    head = (
        f"POST /tenants/alice/query HTTP/1.1\r\nHost: {url.host}\r\n"
        f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {50 * 1024 * 1024}\r\n\r\n"
    )
    with socket.create_connection((url.host, url.port), timeout=10) as sock:
        sock.sendall(head.encode() + b'{"text": "')  # then nothing: the server must not wait
        status = sock.recv(4096).split(b"\r\n", 1)[0]
    assert b" 413 " in status, status


def test_an_oversized_streamed_body_is_cut_off(api: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"text": "'
        for _ in range(50):
            yield b"x" * (1024 * 1024)
        yield b'"}'

    reply = api.post("/tenants/alice/query", content=chunks(), headers=JSON)
    assert reply.status_code == 413


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/tenants/alice/query", {"text": "x" * 1_500_000}),
        ("POST", "/tenants/alice/recall", {"text": "dentist", "threshold": "y" * 1_500_000}),
        ("PUT", "/tenants/alice/privacy/layers", {"layers": {"facts": "x" * 1_500_000}}),
        ("POST", "/tenants/alice/intents/i_x/status", {"status": "z" * 1_500_000}),
    ],
)
def test_an_error_echoes_only_a_snippet_of_the_input(
    api: httpx.Client, method: str, path: str, body: dict[str, Any]
) -> None:
    reply = api.request(method, path, content=json.dumps(body), headers=JSON)
    assert 400 <= reply.status_code < 500, reply.status_code
    assert len(reply.content) < 4096, len(reply.content)
