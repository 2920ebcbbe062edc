"""The foldmem CLI (typer CliRunner in-process; the crash test drives the real binary)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import orjson

from tests.app.conftest import invoke, make_stream, write_jsonl


def test_run_once_status_intents(data_dir: Path, tmp_path: Path) -> None:
    stream = write_jsonl(tmp_path / "s.jsonl", make_stream(10))
    code, _, err = invoke("run", "--once", "--no-api", str(stream))
    assert code == 0, err
    assert "folded 10" in err
    code, out, _ = invoke("status")
    assert code == 0 and "tenant alice: 10 events folded" in out and "EVENT 10" in out
    code, out, _ = invoke("status", "--json")
    assert orjson.loads(out)["tenants"]["alice"]["events"] == {"folded": 10}
    code, out, _ = invoke("intents", "--tenant", "alice", "--json")
    assert code == 0


def test_intents_and_resolve(sample_dir: Path) -> None:
    code, out, _ = invoke("intents", "--json", "--status", "pending")
    assert code == 0
    intents = [orjson.loads(line) for line in out.splitlines()]
    assert intents and {i["status"] for i in intents} == {"pending"}
    target = intents[0]["id"]
    code, out, err = invoke("intent", "resolve", "alice", target, "--note", "done")
    assert code == 0, err
    assert "pending -> resolved" in out
    code, out, _ = invoke("intents", "--status", "resolved")
    assert target in out
    assert target in (sample_dir / "intents.jsonl").read_text().splitlines()[-1]
    code, _, err = invoke("intent", "defer", "alice", target)
    assert code == 2 and "cannot go from resolved" in err and "Traceback" not in err


def test_graph_export_json_and_graphml(sample_dir: Path, tmp_path: Path) -> None:
    code, out, _ = invoke("graph", "export", "--tenant", "alice", "--format", "json")
    assert code == 0
    graph = orjson.loads(out)
    assert set(graph) >= {"nodes", "edges"}
    assert all({"id", "kind"} <= set(n) for n in graph["nodes"])
    events = [n for n in graph["nodes"] if n["kind"] == "EVENT"]
    assert events and all(n["source_event_id"] for n in events)
    out_file = tmp_path / "g.graphml"
    code, _, err = invoke(
        "graph", "export", "--tenant", "alice", "--format", "graphml", "--out", str(out_file)
    )
    assert code == 0, err
    root = ET.parse(out_file).getroot()
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    assert len(root.findall(".//g:node", ns)) == len(graph["nodes"])
    assert len(root.findall(".//g:edge", ns)) == len(graph["edges"])


def test_sweep(sample_dir: Path) -> None:
    code, out, err = invoke("sweep")
    assert code == 0, err
    assert out.startswith("alice:")


def test_errors_are_one_line(data_dir: Path, monkeypatch: object) -> None:
    code, _, err = invoke("graph", "export", "--tenant", "nobody")
    assert code == 2 and "error:" in err and "Traceback" not in err
    code, _, err = invoke("run", "--once", "--no-api", "/no/such/file.jsonl")
    assert code == 2 and "does not exist" in err


def test_bad_config_is_one_line(data_dir: Path) -> None:
    import os

    os.environ["FOLDMEM_API_HOST"] = "0.0.0.0"
    try:
        code, _, err = invoke("status")
    finally:
        del os.environ["FOLDMEM_API_HOST"]
    assert code == 2 and "FOLDMEM_API_TOKEN" in err
