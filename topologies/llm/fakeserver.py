"""A scriptable OpenAI-compatible fake model server on loopback (tests, benchmarks, demos).

Real HTTP (aiohttp.web) on 127.0.0.1 and a free port, serving ``POST /v1/chat/completions``.
Queue replies with :meth:`FakeOpenAI.push` (a status, content, headers, delay each); when the
queue is empty, ``handler`` (default :func:`default_plan_reply`: a valid plan for the event)
answers. Every request body is kept in ``requests``. Needs ``aiohttp`` (a dev dependency);
import this module only from tests and benchmarks.
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
_RELATED = re.compile(r"^(R\d+) CONCEPT .* sim=([0-9.]+)$", re.MULTILINE)


@dataclass
class Reply:
    status: int = 200
    content: str | None = None  # assistant message content (200 only)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering (a timeout when above the client's)
    error: str = "fake error"
    usage: bool = True  # False: omit the usage field (some local servers do)


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
    related = [(sid, float(sim)) for sid, sim in _RELATED.findall(prompt)]
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
        ops = [
            {
                "op": "ADD_NODE",
                "ref": "n1",
                "kind": "CONCEPT",
                "title": title,
                "text": "",
                "reasoning": "new theme",
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
        ]
    return Reply(content=json.dumps({"ops": ops, "notes": "fake"}))


class FakeOpenAI:
    def __init__(
        self,
        handler: Callable[[dict[str, Any]], Reply] = default_plan_reply,
        reject_json_schema: bool = False,
        latency: float = 0.0,
    ) -> None:
        self.handler = handler
        self.reject_json_schema = reject_json_schema
        self.reject_status = 400  # llama-cpp-python answers 500 with a validation error
        self.latency = latency
        self.script: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
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

    async def _completions(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            fmt = (body.get("response_format") or {}).get("type")
            if self.reject_json_schema and fmt == "json_schema":
                return self._error(
                    self.reject_status,
                    "1 validation error: ('body', 'response_format', 'type') literal_error: "
                    "Input should be 'text' or 'json_object' (json_schema is not supported)",
                )
            reply = self.script.popleft() if self.script else self.handler(body)
            delay = reply.delay + self.latency
            if delay:  # a slow model; wakes early when the server stops (fast teardown)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), timeout=delay)
            if reply.status != 200:
                return self._error(reply.status, reply.error, reply.headers)
            return self._ok(body, reply)
        finally:
            self.in_flight -= 1

    @staticmethod
    def _error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
        payload = {"error": {"message": message, "type": "fake_error", "code": status}}
        return web.json_response(payload, status=status, headers=headers or {})

    @staticmethod
    def _ok(body: dict[str, Any], reply: Reply) -> web.Response:
        content = reply.content or ""
        prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
        payload: dict[str, Any] = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": content},
                }
            ],
        }
        if reply.usage:
            tokens_in, tokens_out = max(1, prompt_chars // 4), max(1, len(content) // 4)
            payload["usage"] = {
                "prompt_tokens": tokens_in,
                "completion_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
            }
        return web.json_response(payload, headers=reply.headers)
