"""A scriptable OpenAI-compatible fake model server on loopback (tests, benchmarks, demos).

Real HTTP (aiohttp.web) on 127.0.0.1 and a free port, serving ``POST /v1/chat/completions``.
Queue replies with :meth:`FakeOpenAI.push` (a status, content, headers, delay each); when the
queue is empty, ``handler`` (default :func:`default_plan_reply`: a valid plan for the event)
answers. Every request body is kept in ``requests``. Needs ``aiohttp`` (a dev dependency);
import this module only from tests and benchmarks.

Like a local llama.cpp server it can compute one request at a time (``one_at_a_time``: the
others queue), keep computing a non-streamed request its client abandoned (counted in
``wasted``), stop a streamed one when the client closes the stream (``cancelled``), stream
replies as server-sent events (``"stream": true``), and cut a reply at the request's
``max_tokens`` (4 characters a token) with ``finish_reason: "length"``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

_EVENT = re.compile(r"<event_data>\s*(\{.*?\})\s*</event_data>", re.DOTALL)
_CONCEPT = re.compile(r"^(C\d+) CONCEPT .* sim=([0-9.]+)$", re.MULTILINE)
CHARS_PER_TOKEN = 4


@dataclass
class Reply:
    status: int = 200
    content: str | None = None  # assistant message content (200 only)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering (a timeout when above the client's)
    error: str = "fake error"
    usage: bool = True  # False: omit the usage field (some local servers do)
    finish_reason: str = "stop"


def event_of(body: dict[str, Any]) -> dict[str, Any]:
    """The event JSON the planner put in the prompt."""
    for message in body.get("messages", []):
        match = _EVENT.search(str(message.get("content", "")))
        if match:
            return dict(json.loads(match.group(1)))
    return {}


def default_plan_reply(body: dict[str, Any]) -> Reply:
    """Reinforce a related concept when one is close, else a new concept grounded by E."""
    event = event_of(body)
    prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    related = [(sid, float(sim)) for sid, sim in _CONCEPT.findall(prompt)]
    if related and max(sim for _, sim in related) >= 0.5:
        best = max(related, key=lambda r: r[1])[0]
        ops: list[dict[str, Any]] = [
            {
                "op": "ADD_EDGE",
                "src": "E",
                "dst": best,
                "kind": "REINFORCES",
                "reasoning": "same theme",
                "grounded_in": ["E"],
            }
        ]
    else:
        title = " ".join(str(event.get("title") or event.get("body") or "note").split()[:6])
        ops = list(new_concept_ops(title, "new theme"))
    return Reply(content=json.dumps({"ops": ops, "notes": "fake"}))


def new_concept_ops(title: str, reasoning: str = "theme") -> tuple[dict[str, Any], ...]:
    """The two ops of a valid reply: a concept `n1` titled `title`, grounded in the event."""
    return (
        {
            "op": "ADD_NODE",
            "ref": "n1",
            "kind": "CONCEPT",
            "title": title,
            "text": "",
            "reasoning": reasoning,
            "grounded_in": ["E"],
        },
        {
            "op": "ADD_EDGE",
            "src": "E",
            "dst": "n1",
            "kind": "GROUNDS",
            "reasoning": "evidence",
            "grounded_in": ["E"],
        },
    )


class FakeOpenAI:
    def __init__(
        self,
        handler: Callable[[dict[str, Any]], Reply] = default_plan_reply,
        reject_json_schema: bool = False,
        latency: float = 0.0,
        one_at_a_time: bool = False,
    ) -> None:
        self.handler = handler
        self.reject_json_schema = reject_json_schema
        self.reject_status = 400  # llama-cpp-python answers 500 with a validation error
        self.latency = latency
        self.one_at_a_time = one_at_a_time
        self.script: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.cancelled = 0  # streamed requests stopped because the client closed the stream
        self.wasted = 0  # non-streamed requests computed to the end for a client that left
        self.skipped = 0  # queued requests whose client left before their turn
        self._busy = asyncio.Lock()
        self._runner: web.AppRunner | None = None
        self._closing = asyncio.Event()
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def calls(self) -> int:
        return len(self.requests)

    def push(self, *replies: Reply) -> None:
        self.script.extend(replies)

    async def start(self) -> FakeOpenAI:
        self._closing = asyncio.Event()
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completions)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = int(server.sockets[0].getsockname()[1])  # type: ignore[attr-defined]
        return self

    async def stop(self) -> None:
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAI:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        fmt = (body.get("response_format") or {}).get("type")
        if self.reject_json_schema and fmt == "json_schema":
            return self._error(
                self.reject_status,
                "1 validation error: ('body', 'response_format', 'type') literal_error: "
                "Input should be 'text' or 'json_object' (json_schema is not supported)",
            )
        reply = self.script.popleft() if self.script else self.handler(body)
        turn = self._busy if self.one_at_a_time else contextlib.nullcontext()
        async with turn:
            if _gone(request):  # the client left while queued (llama.cpp checks this too)
                self.skipped += 1
                return self._error(400, "Client closed request")
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                if reply.status != 200:
                    await self._compute(reply.delay + self.latency)
                    return self._error(reply.status, reply.error, reply.headers)
                content, finish = _capped(reply, body)
                if body.get("stream"):
                    return await self._stream(request, body, reply, content, finish)
                await self._compute(reply.delay + self.latency)
                if _gone(request):
                    self.wasted += 1
                return self._ok(body, reply, content, finish)
            finally:
                self.in_flight -= 1

    async def _compute(self, seconds: float) -> None:
        """A slow model; wakes early when the server stops (fast teardown)."""
        if seconds > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), timeout=seconds)

    async def _stream(
        self, request: web.Request, body: dict[str, Any], reply: Reply, content: str, finish: str
    ) -> web.StreamResponse:
        """Server-sent events, one chunk per token; stops when the client closes the stream."""
        headers = {"Content-Type": "text/event-stream", **reply.headers}
        response = web.StreamResponse(headers=headers)
        await response.prepare(request)
        pieces = [content[i : i + CHARS_PER_TOKEN] for i in range(0, len(content), CHARS_PER_TOKEN)]
        pause = (reply.delay + self.latency) / max(1, len(pieces))
        model = body.get("model", "fake")
        try:
            for index, piece in enumerate(pieces or [""]):
                await self._compute(pause)
                last = index == len(pieces) - 1 or not pieces
                chunk = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"role": "assistant", "content": piece},
                            "finish_reason": finish if last else None,
                        }
                    ],
                }
                await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
            include_usage = (body.get("stream_options") or {}).get("include_usage")
            if reply.usage and include_usage:
                usage = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                         "model": model, "choices": [], "usage": _usage(body, content)}  # fmt: skip
                await response.write(f"data: {json.dumps(usage)}\n\n".encode())
            await response.write(b"data: [DONE]\n\n")
        except (ConnectionResetError, ConnectionError):
            self.cancelled += 1
            return response
        return response

    @staticmethod
    def _error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
        payload = {"error": {"message": message, "type": "fake_error", "code": status}}
        return web.json_response(payload, status=status, headers=headers or {})

    @staticmethod
    def _ok(body: dict[str, Any], reply: Reply, content: str, finish: str) -> web.Response:
        payload: dict[str, Any] = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": finish,
                    "message": {"role": "assistant", "content": content},
                }
            ],
        }
        if reply.usage:
            payload["usage"] = _usage(body, content)
        return web.json_response(payload, headers=reply.headers)


def _gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


def _capped(reply: Reply, body: dict[str, Any]) -> tuple[str, str]:
    """The reply's content cut at the request's max_tokens, and its finish reason."""
    content = reply.content or ""
    limit = body.get("max_tokens")
    if isinstance(limit, int) and len(content) > limit * CHARS_PER_TOKEN:
        return content[: limit * CHARS_PER_TOKEN], "length"
    return content, reply.finish_reason


def _usage(body: dict[str, Any], content: str) -> dict[str, int]:
    prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
    tokens_in = max(1, prompt_chars // CHARS_PER_TOKEN)
    tokens_out = max(1, len(content) // CHARS_PER_TOKEN)
    return {"prompt_tokens": tokens_in, "completion_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out}  # fmt: skip
