"""JSON extraction, config mapping, the factory and the usage ledger."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.llm.factory import build_planner, llm_status
from schemas.errors import LLMError
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.llm.config import LLMConfig
from topologies.llm.jsontext import extract_json_object
from topologies.llm.planner import LLMPlanner
from topologies.llm.usage import EventUsage, UsageLedger


@pytest.mark.parametrize(
    "text",
    [
        '{"ops": []}',
        '<think>maybe {"ops": [1]}</think>{"ops": []}',
        'Reasoning here...</think>\n{"ops": []}',
        '```json\n{"ops": []}\n```',
        'Sure! Here is the plan:\n{"ops": []}\nHope it helps {smile}',
        '<think>\nlong thought without end {"a": 1}\n{"ops": []}',
    ],
)
def test_extract_json_object(text: str) -> None:
    assert extract_json_object(text) == {"ops": []}


def test_a_raw_line_break_inside_a_string_is_read() -> None:
    """Small models write control characters inside strings (strict JSON refuses them)."""
    raw = '{"notes": "two\nlines", "facts": ["a\tb"], "ops": []}'  # a real break and tab
    assert "\n" in raw and extract_json_object(raw)["notes"] == "two\nlines"


@pytest.mark.parametrize("text", ["", "no json at all", "[1, 2]", '{"ops": [}'])
def test_extract_json_object_fails_clearly(text: str) -> None:
    with pytest.raises(LLMError):
        extract_json_object(text)


class _Heuristic:
    name = "heuristic"

    async def plan(self, request: Any) -> Any:  # pragma: no cover - not called
        raise AssertionError


def test_factory_without_endpoint_returns_heuristic(embedder: HashingEmbedder) -> None:
    heuristic = _Heuristic()
    planner = build_planner(
        {"llm_model": "x", "llm_api_key": ""}, embedder, EngineConfig(), heuristic
    )
    assert planner is heuristic
    assert llm_status(planner)["enabled"] is False


def test_factory_with_endpoint_maps_flat_settings(embedder: HashingEmbedder) -> None:
    class Settings:
        llm_base_url = "http://127.0.0.1:8089/v1"
        llm_model = "local"
        llm_api_key = None
        llm_concurrency = 4
        llm_daily_token_budget = 1000
        unrelated = 1

    planner = build_planner(Settings(), embedder, EngineConfig(), _Heuristic())
    assert isinstance(planner, LLMPlanner)
    assert planner.config.concurrency == 4 and planner.ledger.daily_token_budget == 1000
    status = llm_status(planner)
    assert status["enabled"] and status["model"] == "local" and "key" not in str(status).lower()


def test_config_secret_is_hidden() -> None:
    config = LLMConfig(api_key="sk-secret")  # type: ignore[arg-type]
    assert config.enabled and "sk-secret" not in repr(config) and config.key() == "sk-secret"


def test_ledger_accounting_snapshot_and_listener() -> None:
    rows: list[tuple[str, str, dict[str, int]]] = []
    ledger = UsageLedger(
        daily_token_budget=100,
        listener=lambda t, d, c: rows.append((t, d, c)),
        clock=lambda: "2026-11-02",
    )
    ledger.record(EventUsage("alice", "e1", "llm", calls=1, tokens_in=60, tokens_out=20))
    ledger.record(EventUsage("alice", "e2", "skipped_duplicate"))
    assert ledger.budget_left("alice") == 20 and not ledger.over_budget("alice")
    ledger.record(EventUsage("alice", "e3", "repaired", calls=2, tokens_in=30, tokens_out=5))
    assert ledger.over_budget("alice") and ledger.budget_left("bob") == 100
    summary = ledger.summary()
    assert summary["totals"]["events"] == 3 and summary["tokens_per_event"] == round(115 / 3, 1)
    assert summary["share_without_call"] == round(1 / 3, 3)
    assert rows[-1][0:2] == ("alice", "2026-11-02") and rows[-1][2]["tokens_in"] == 90
    copy = UsageLedger(clock=lambda: "2026-11-02")
    copy.restore(ledger.snapshot())
    assert copy.tenant("alice") == ledger.tenant("alice")
    other = UsageLedger(clock=lambda: "2026-11-02")
    other.restore_row(*rows[-1])
    assert other.tenant("alice")["tokens"] == 115
