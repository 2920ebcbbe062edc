from __future__ import annotations

from pathlib import Path

import pytest

from schemas.errors import ConfigError, FoldmemError
from stream_app.settings import Settings, is_loopback, load_settings


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("FOLDMEM_DATA_DIR", "FOLDMEM_EMBEDDER", "FOLDMEM_API_PORT"):
        monkeypatch.delenv(var, raising=False)
    settings = Settings()
    assert settings.data_dir == Path(".foldmem")
    assert settings.api_host == "127.0.0.1"
    assert settings.api_port == 8765
    assert settings.embedder == "minilm"
    assert settings.db_path == Path(".foldmem") / "foldmem.db"


def test_env_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOLDMEM_API_PORT", "9911")
    monkeypatch.setenv("FOLDMEM_KAFKA_BROKERS", "a:9092, b:9093")
    settings = load_settings()
    assert settings.api_port == 9911
    assert settings.kafka_broker_list == ["a:9092", "b:9093"]


def test_token_required_off_loopback() -> None:
    with pytest.raises(ConfigError, match="FOLDMEM_API_TOKEN"):
        load_settings(api_host="0.0.0.0")
    assert issubclass(ConfigError, FoldmemError)
    settings = load_settings(api_host="0.0.0.0", api_token="s3cret")
    assert settings.token == "s3cret"
    assert "s3cret" not in repr(settings)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("0.0.0.0", False),
        ("10.1.2.3", False),
        ("example.org", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_engine_config_overrides() -> None:
    config = load_settings(
        merge_similarity=0.9,
        intent_threshold=4.5,
        intent_stale_days=10,
        intent_deadline_grace_days=2,
        context_knn=3,
        pool_size=77,
        ann_min_vectors=5000,
        ann_nprobe=32,
    ).engine_config()
    assert config.consolidation.merge_similarity == 0.9
    assert config.intents.initial_threshold == 4.5
    assert (config.intents.stale_after_days, config.intents.deadline_grace_days) == (10, 2)
    assert config.context.knn == 3
    assert config.pool_size == 77
    assert (config.ann.min_vectors, config.ann.nprobe) == (5000, 32)
    default = load_settings().engine_config()
    assert default.consolidation.decay_per_day == config.consolidation.decay_per_day


def test_invalid_value_is_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOLDMEM_API_PORT", "not-a-port")
    with pytest.raises(ConfigError, match="api_port"):
        load_settings()


def test_statements_are_embedded_in_context_unless_switched_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().engine_config().statements_in_context
    monkeypatch.setenv("FOLDMEM_STATEMENTS_IN_CONTEXT", "false")
    assert not load_settings().engine_config().statements_in_context
