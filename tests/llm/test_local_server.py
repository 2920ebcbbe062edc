"""A single-request local server (llama.cpp, Ollama): a long timeout, no retry of a request the
server is still computing, and a streamed request closed at its deadline so the server stops
computing it (issue 13: the first event folded after 165 s behind abandoned requests)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest
from llm_helpers import Rig, fold, new_concept, plan_json

from foldmem_testing.fakeserver import FakeOpenAI, Reply
from stream_app.settings import Settings
from topologies.llm.config import SERVER_POLICIES, LLMConfig

VALID = plan_json(*new_concept("Flux tariffs"))
# the deadline of the tests' requests: generous (a loaded machine must not turn a reply that
# is on its way into a timeout); a request meant to time out is far slower than it
TIMEOUT_S = 5.0
SLOW_S = 30.0  # a request the server computes for longer than any deadline here
LOCAL = {"server": "llamacpp", "timeout_s": TIMEOUT_S}


@pytest.fixture
async def single() -> Any:
    async with FakeOpenAI(one_at_a_time=True) as server:
        yield server


async def served_both(server: FakeOpenAI, within_s: float) -> None:
    """Wait until the single-request server is done with both requests (the first computed
    to its end, the second taken from the queue), at most ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while server.wasted + server.skipped < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)


def rig_on(single: FakeOpenAI, make_rig: Callable[..., Rig], **overrides: Any) -> Rig:
    rig: Rig = make_rig(single, **{**LOCAL, **overrides})
    return rig


async def test_a_timed_out_stream_is_cancelled_and_not_sent_again(
    single: FakeOpenAI, make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = rig_on(single, make_rig)
    single.push(Reply(delay=SLOW_S, content=VALID), Reply(content=VALID))
    started = time.perf_counter()
    await fold(rig, make_event("Launch sync", "Flux tariffs launch"))  # slower than the timeout
    assert single.calls == 1 and rig.heuristic.calls == 1  # no retry: the heuristic plan
    assert rig.ledger.tenant("alice")["fallback_error"] == 1
    await fold(rig, make_event("Flux tariffs launch", "sync"))
    elapsed = time.perf_counter() - started
    # the server stopped computing the abandoned request: the next one is served within its
    # deadline, long before the abandoned one would have been computed
    assert single.calls == 2 and rig.ledger.tenant("alice")["llm"] == 1
    assert elapsed < SLOW_S
    assert single.cancelled == 1 and single.wasted == 0
    assert rig.planner.client.cancelled == 1
    assert all(body["stream"] for body in single.requests)


async def test_without_streaming_the_server_computes_for_nobody(
    single: FakeOpenAI, make_rig: Callable[..., Rig], make_event: Any
) -> None:
    """Why streaming: a non-streamed request keeps the single-request server busy after its
    client gave up, and the next request waits behind it."""
    rig = rig_on(single, make_rig, stream=False, timeout_s=0.3)
    # both requests time out (a short deadline cannot fail that); the first is computed long
    # enough for the second to reach the server and wait behind it, however loaded the machine
    single.push(Reply(delay=5.0, content=VALID), Reply(content=VALID))
    await fold(rig, make_event("Launch sync", "Flux tariffs launch"))
    await fold(rig, make_event("Flux tariffs launch", "sync"))
    assert single.calls == 2  # neither sent again, but the second waited behind the first
    assert rig.ledger.tenant("alice")["fallback_error"] == 2
    await served_both(single, within_s=60.0)
    assert single.wasted == 1 and single.skipped == 1  # computed for nobody; then skipped


async def test_hosted_timeouts_are_retried(make_rig: Callable[..., Rig], make_event: Any) -> None:
    rig = make_rig(server="hosted", timeout_s=TIMEOUT_S, max_retries=1)
    rig.fake.push(Reply(delay=SLOW_S, content=VALID), Reply(content=VALID))
    result = await fold(rig, make_event("Launch sync", "Flux tariffs launch"))
    assert rig.fake.calls == 2 and result.planner == "llm"


async def test_a_streamed_reply_is_parsed_and_its_tokens_counted(
    single: FakeOpenAI, make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = rig_on(single, make_rig)
    single.push(Reply(content=VALID, usage=False))  # llama-cpp-python streams no usage
    result = await fold(rig, make_event("Launch sync", "Flux tariffs launch"))
    assert result.planner == "llm"
    row = rig.ledger.tenant("alice")
    assert row["estimated_calls"] == 1 and row["tokens_out"] == (len(VALID) + 3) // 4
    single.push(Reply(content=VALID))  # a server that sends a usage chunk
    await fold(rig, make_event("Flux tariffs launch", "sync"))
    assert rig.ledger.tenant("alice")["estimated_calls"] == 1


async def test_a_streamed_reply_cut_at_the_cap_is_flagged(
    single: FakeOpenAI, make_rig: Callable[..., Rig], make_event: Any
) -> None:
    rig = rig_on(single, make_rig, max_output_tokens=100)
    long_title = {"op": "ADD_NODE", "ref": "n1", "kind": "CONCEPT", "title": "Flux " * 200}
    single.push(Reply(content=plan_json(long_title)), Reply(content=VALID))
    await fold(rig, make_event("Launch sync", "Flux tariffs launch"))
    assert rig.ledger.tenant("alice")["truncated"] == 1
    assert rig.ledger.recent(1)[0].outcome == "repaired"


def test_server_kinds_set_the_policy_and_settings_override_it() -> None:
    local = LLMConfig(base_url="http://127.0.0.1:8089/v1", model="local")
    assert local.policy == SERVER_POLICIES["llamacpp"]
    assert local.policy.stream and not local.policy.retry_timeouts
    assert local.policy.concurrency == 1 and local.policy.timeout_s >= 300
    assert LLMConfig(api_key="sk-x").policy.kind == "hosted"  # type: ignore[arg-type]
    assert LLMConfig(base_url="https://api.together.xyz/v1").policy.kind == "hosted"
    vllm = LLMConfig(base_url="http://10.0.0.5:8000/v1", server="vllm")
    assert vllm.policy.concurrency > 1 and vllm.policy.stream
    settings = Settings(
        llm_base_url="http://localhost:11434/v1",
        llm_server="ollama",
        llm_timeout_s=1200,
        llm_max_output_tokens=400,
        llm_repair_rounds=0,
        llm_facts="call",
    )
    config = settings.llm_config()
    assert config.policy.kind == "ollama" and config.policy.timeout_s == 1200
    assert config.max_output_tokens == 400 and config.repair_rounds == 0 and config.facts == "call"
