"""Real HTTP receivers on loopback for the webhook sink, `foldmem notify` and the embedded
webhook output tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from connectors.sinks.webhook import MESSAGE_ID_HEADER, SIGNATURE_HEADER


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler], path: str) -> Iterator[str]:
    """Serve `handler` on a free loopback port; yields the URL of `path`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}{path}"
    finally:
        server.shutdown()
        server.server_close()


class WebhookReceiver:
    """Answers `fail_status` (503) to the first `fail_first` requests and 400 to the message
    ids in `refuse`; records what it accepted as (message id, body, signature). `recover()`
    ends a failure run at once."""

    def __init__(
        self, fail_first: int = 0, refuse: frozenset[str] = frozenset(), fail_status: int = 503
    ) -> None:
        self.fail_first = fail_first
        self.fail_status = fail_status
        self.refuse = refuse
        self.requests = 0
        self.delivered: list[tuple[str, bytes, str]] = []
        self.lock = threading.Lock()

    def ids(self) -> list[str]:
        with self.lock:
            return [m for m, _, _ in self.delivered]

    def answer(self, message_id: str, body: bytes, signature: str) -> int:
        with self.lock:
            self.requests += 1
            if self.requests <= self.fail_first:
                return self.fail_status
            if message_id in self.refuse:
                return 400
            self.delivered.append((message_id, body, signature))
            return 204

    def recover(self) -> None:
        with self.lock:
            self.fail_first = self.requests


@contextmanager
def receiving(receiver: WebhookReceiver, path: str = "/hook") -> Iterator[str]:
    """A loopback webhook endpoint answered by `receiver`; yields its URL."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            status = receiver.answer(
                self.headers[MESSAGE_ID_HEADER], body, self.headers[SIGNATURE_HEADER]
            )
            self.send_response(status)
            self.end_headers()

    with serving(Handler, path) as url:
        yield url
