"""Run the API with uvicorn inside an existing event loop (the runner's or `foldmem serve`'s)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Generator
from typing import Literal

import uvicorn
from starlette.types import ASGIApp

from schemas.errors import ConfigError


class _EmbeddedServer(uvicorn.Server):
    """A uvicorn server that leaves signal handling to its host."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


class ApiServer:
    """Binds first (clear error if the port is taken), then serves until :meth:`stop`."""

    def __init__(
        self,
        app: ASGIApp,
        host: str,
        port: int,
        log_level: str = "warning",
        hint: str = "choose another port with --api-port or FOLDMEM_API_PORT",
        lifespan: Literal["on", "off"] = "off",
    ) -> None:
        self.host = host
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # accepted connections inherit it: without it every request after the first on a
        # keep-alive connection waited ~40 ms (the response's second write held back by
        # Nagle until the client's delayed ACK), as a page's many small calls are
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            sock.close()
            raise ConfigError(
                f"cannot bind the API to {host}:{port}: {exc.strerror or exc}; {hint}"
            ) from exc
        sock.listen(128)
        sock.setblocking(False)
        self._socket = sock
        self.port = int(sock.getsockname()[1])
        config = uvicorn.Config(
            app, log_level=log_level, access_log=False, lifespan=lifespan, log_config=None
        )
        self._server = _EmbeddedServer(config)
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> asyncio.Task[None]:
        self._task = asyncio.create_task(self._server.serve(sockets=[self._socket]))
        return self._task

    async def started(self) -> None:
        while not self._server.started:
            if self._task is not None and self._task.done():
                await self._task
                return
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        self._server.should_exit = True
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._socket.close()
