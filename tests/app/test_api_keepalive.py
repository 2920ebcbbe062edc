"""Regression: requests after the first on a keep-alive connection answered ~40 ms late (the
listening socket lacked TCP_NODELAY, so a response's second write waited for the client's
delayed ACK). A page makes many small calls on one connection."""

from __future__ import annotations

import asyncio
import http.client
import socket
import statistics
import time

from fastapi import FastAPI

from stream_app.api.server import ApiServer


def _timings(port: int, n: int) -> list[float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    took = []
    try:
        for _ in range(n):
            started = time.perf_counter()
            conn.request("GET", "/small")
            response = conn.getresponse()
            assert response.status == 200 and response.read()
            took.append(1000 * (time.perf_counter() - started))
    finally:
        conn.close()
    return took


async def test_keep_alive_requests_are_not_held_back_by_delayed_acks() -> None:
    app = FastAPI()

    @app.get("/small")
    async def small() -> dict[str, str]:
        return {"text": "x" * 2000}

    server = ApiServer(app, "127.0.0.1", 0)
    assert server._socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    server.start()
    await server.started()
    try:
        took = await asyncio.to_thread(_timings, server.port, 9)
    finally:
        await server.stop()
    # Linux delays an ACK at least 40 ms: each held-back answer took that long
    assert statistics.median(took[1:]) < 30, took
