"""The structural benchmark end to end on a tiny scenario, the sample and a tiny LoCoMo file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import bench_locomo, structural_report
from benchmarks.bench_structural import main

TOPICS = {
    "c1": ("Passport renewal", "Passport renewal appointment at the Buergeramt, bring photo"),
    "c2": ("Dentist crown", "Dentist crown on tooth 36, treatment plan from the practice"),
}


def _scenario() -> dict[str, Any]:
    events = []
    for n in range(6):
        concept = "c1" if n % 2 == 0 else "c2"
        events.append(
            {
                "id": f"e{n + 1}",
                "ts": f"2026-11-0{n + 2}T09:00:00+01:00",
                "source": "note",
                "title": TOPICS[concept][0],
                "body": f"{TOPICS[concept][1]} (note {n + 1})",
                "gold_concept": concept,
                "chain": None,
            }
        )
    return {
        "scenario": "tiny",
        "gold": {
            "concepts": [
                {"id": c, "label": label, "description": text}
                for c, (label, text) in TOPICS.items()
            ],
            "intents": [
                {
                    "id": "i1",
                    "label": "Renew the passport before the trip",
                    "supporting": ["c1"],
                    "trigger": "passport expires",
                }
            ],
            "chains": [{"id": "ch1", "events": ["e1", "e3"]}],
        },
        "events": events,
    }


def _locomo() -> list[dict[str, Any]]:
    turns = [
        {"speaker": "Ann", "dia_id": f"D1:{i + 1}", "text": f"I trained for the marathon, day {i}"}
        for i in range(4)
    ]
    return [
        {
            "sample_id": "conv-x",
            "conversation": {"session_1": turns, "session_1_date_time": "1:56 pm on 8 May, 2023"},
            "qa": [],
        }
    ]


def test_one_command_writes_figures_names_and_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    (data / "cogeval").mkdir(parents=True)
    (data / "cogeval" / "tiny.json").write_text(json.dumps(_scenario()))
    (data / "locomo").mkdir()
    (data / "locomo" / "locomo10.json").write_text(json.dumps(_locomo()))
    monkeypatch.setattr(structural_report, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(bench_locomo, "EMBED_CACHE", tmp_path / "cache")
    out = tmp_path / "run.json"
    main(["--data-dir", str(data), "--embedder", "hashing", "--locomo", "--json", str(out)])

    run = json.loads(out.read_text())
    tiny = run["scenarios"]["tiny"]
    assert tiny["events"] == 6 and tiny["gold_concepts"] == 2 and tiny["gold_intents"] == 1
    assert 0.0 <= tiny["grounded_f1"] <= 1.0 and "label_f1@0.6" in run["mean"]
    assert run["sample"]["figures"]["events"] == 157
    assert [t["theme"] for t in run["sample"]["names"]["themes"]][:2] == ["launch", "trip"]
    sample = run["sample"]["figures"]  # a goal reached in the stream counts as its one intent
    assert sample["goal_themes_with_one_goal"] >= sample["goal_themes_with_one_pending"]
    assert all("resolved" in t for t in run["sample"]["names"]["themes"])
    assert run["locomo"]["conversations"]["conv-x"]["turns"] == 4
    assert "intent_evidence_precision" in run["definitions"]
    figures = (tmp_path / "results" / "structural.md").read_text()
    assert "Done when" in figures and "command: `.venv/bin/python -m" in figures
    names = (tmp_path / "results" / "structural_names.md").read_text()
    assert "## tiny" in names and "## Sample stream" in names and "Passport renewal" in names
    assert (tmp_path / "results" / "structural.png").stat().st_size > 0


def test_the_oracle_names_each_gold_group_from_its_own_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    (data / "cogeval").mkdir(parents=True)
    scenario = _scenario()
    scenario["gold"]["intents"][0]["deadline"] = "2026-12-18T08:00:00+01:00"
    (data / "cogeval" / "tiny.json").write_text(json.dumps(scenario))
    monkeypatch.setattr(structural_report, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(bench_locomo, "EMBED_CACHE", tmp_path / "cache")
    out = tmp_path / "run.json"
    main(["--data-dir", str(data), "--embedder", "hashing", "--oracle-only", "--json", str(out)])

    run = json.loads(out.read_text())
    assert run["scenarios"] == {}  # nothing folded: naming alone
    names = run["oracle"]["names"]["tiny"]
    assert [c["gold"] for c in names["concepts"]] == ["Passport renewal", "Dentist crown"]
    assert "passport" in names["concepts"][0]["name"].lower()
    for concept in names["concepts"]:  # the candidates it was picked from, the best listed
        assert concept["best_candidate"] in [*concept["candidates"], concept["name"]]
        assert concept["best_cosine"] >= concept["cosine"] - 1e-6
    assert names["intents"][0]["title"].endswith("(by 18 Dec)")
    figures = run["oracle"]["figures"]
    assert 0.0 <= figures["tiny"]["oracle_label_hit@0.6"] <= 1.0
    assert figures["tiny"]["oracle_label_reachable@0.6"] >= figures["tiny"]["oracle_label_hit@0.6"]
    assert figures["sample"]["oracle_title_hit@0.5"] >= 0.0  # the sample's goals too
    report = (tmp_path / "results" / "structural.md").read_text()
    assert "Naming on gold groups" in report and "mean (held out)" in report
