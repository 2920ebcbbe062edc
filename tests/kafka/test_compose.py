"""docker-compose.yml: valid against the Compose Specification schema, consistent with the code.

There is no Docker engine here. The schema is ``compose/config/compose_spec.json`` as shipped in
the PyPI package docker-compose 1.29.2 (Apache-2.0), vendored beside this file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from stream_app.cli.app import build_app
from stream_app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
SCHEMA = Path(__file__).with_name("compose_spec.json")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    doc = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(doc, dict)
    return doc


def test_compose_file_matches_the_compose_specification(compose: dict[str, Any]) -> None:
    schema = json.loads(SCHEMA.read_text())
    validator = jsonschema.Draft7Validator(schema)
    errors = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(compose)]
    assert not errors, errors


def test_services_depend_on_services_that_exist(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert {"kafka", "kafka-init", "worker", "llm"} <= set(services)
    for name, service in services.items():
        for dep in service.get("depends_on", {}):
            assert dep in services, f"{name} depends on unknown service {dep}"
    assert "healthcheck" in services["kafka"]
    assert services["kafka"]["environment"]["KAFKA_PROCESS_ROLES"] == "broker,controller"  # KRaft
    assert services["worker"]["deploy"]["replicas"] == 2
    assert services["llm"]["profiles"] == ["llm"]
    for volume in services["kafka"].get("volumes", []):
        name = volume.split(":")[0]
        assert name in compose.get("volumes", {}) or name.startswith(".")


def test_every_foldmem_env_var_is_a_setting(compose: dict[str, Any]) -> None:
    fields = set(Settings.model_fields)
    env = compose["services"]["worker"]["environment"]
    for var in env:
        assert var.startswith("FOLDMEM_"), var
        assert var.removeprefix("FOLDMEM_").lower() in fields, f"{var} is not a Settings field"
    # the brokers the workers use are the kafka service's internal listener
    host, port = env["FOLDMEM_KAFKA_BROKERS"].split(":")
    assert host == "kafka"
    assert (
        f"INTERNAL://kafka:{port}"
        in compose["services"]["kafka"]["environment"]["KAFKA_ADVERTISED_LISTENERS"]
    )


def test_ports_and_command_match_the_code(compose: dict[str, Any]) -> None:
    worker = compose["services"]["worker"]
    api_port = int(worker["environment"]["FOLDMEM_API_PORT"])
    assert api_port == Settings.model_fields["api_port"].default
    assert any(str(p).endswith(f":{api_port}") for p in worker["ports"])
    assert worker["command"][:2] == ["foldmem", "worker"]
    names = {c.name for c in build_app().registered_commands}
    assert {"worker", "produce", "tail-intents"} <= names
    assert f"http://127.0.0.1:{api_port}/ready" in json.dumps(worker["healthcheck"])


def test_created_topics_match_the_settings(compose: dict[str, Any]) -> None:
    script = "\n".join(compose["services"]["kafka-init"]["command"])
    topics = dict(re.findall(r"--topic (\S+) --partitions (\d+)", script))
    defaults = {k: f.default for k, f in Settings.model_fields.items()}
    partitions = str(compose["services"]["worker"]["environment"]["FOLDMEM_KAFKA_PARTITIONS"])
    assert topics[defaults["kafka_events_topic"]] == partitions
    assert topics[defaults["kafka_intents_topic"]] == partitions
    assert defaults["kafka_deadletter_topic"] in topics
    changelog = f"{defaults['kafka_app_id']}-state-changelog"
    assert topics[changelog] == partitions  # co-partitioned with the events topic
    assert "cleanup.policy=compact" in script
