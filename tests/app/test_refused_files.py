"""A file none of whose items can be read is reported once, with the reason, not line by line."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.app.conftest import invoke


def dead_letters(data_dir: Path) -> list[dict[str, str]]:
    path = data_dir / "deadletter.jsonl"
    return [orjson.loads(x) for x in path.read_bytes().splitlines()] if path.exists() else []


def chat_without_senders(path: Path, n: int) -> Path:
    """A chat export whose messages carry no sender under any known spelling."""
    with path.open("w") as fh:
        for i in range(n):
            line = {"channel": "team", "ts": f"2024-01-22T09:{i:02d}:00Z", "text": f"msg {i}"}
            fh.write(orjson.dumps(line).decode() + "\n")
    return path


def test_run_reports_a_refused_file_once(data_dir: Path, tmp_path: Path) -> None:
    source = chat_without_senders(tmp_path / "team.jsonl", 40)
    code, _, err = invoke("run", "--once", "--tenant", "alice", str(source))
    assert code == 0, err
    dead = dead_letters(data_dir)
    assert len(dead) == 1, dead
    assert dead[0]["location"] == "team.jsonl"
    assert "40" in dead[0]["reason"] and "sender" in dead[0]["reason"]
    assert "dead-lettered 1" in err

    invoke("run", "--once", "--tenant", "alice", str(source))  # a re-run does not repeat it
    assert len(dead_letters(data_dir)) == 1


def test_ingest_reports_a_refused_file_once(data_dir: Path, tmp_path: Path) -> None:
    source = chat_without_senders(tmp_path / "team.jsonl", 25)
    code, _, err = invoke("ingest", "--to", "embedded", "--tenant", "alice", str(source))
    assert code == 0, err
    dead = dead_letters(data_dir)
    assert len(dead) == 1 and dead[0]["location"] == "team.jsonl"
    assert "25" in dead[0]["reason"] and "sender" in dead[0]["reason"]
    assert "bad 1" in err


def test_a_file_with_some_good_lines_reports_each_bad_line(data_dir: Path, tmp_path: Path) -> None:
    source = chat_without_senders(tmp_path / "team.jsonl", 3)
    with source.open("a") as fh:
        fh.write('{"channel": "team", "user": "bo", "ts": "2024-01-22T10:00:00Z", "text": "ok"}\n')
    code, _, err = invoke("run", "--once", "--tenant", "alice", str(source))
    assert code == 0, err
    assert [d["location"] for d in dead_letters(data_dir)] == [
        "team.jsonl:line 1",
        "team.jsonl:line 2",
        "team.jsonl:line 3",
    ]


def test_an_event_file_of_which_no_line_is_valid_is_summarised(
    data_dir: Path, tmp_path: Path
) -> None:
    source = tmp_path / "events.jsonl"
    with source.open("w") as fh:
        for i in range(5):
            line = {"id": f"e{i}", "source": "note", "ts": "2024-01-22T09:00:00", "title": "x"}
            fh.write(orjson.dumps(line).decode() + "\n")
    code, _, err = invoke("run", "--once", "--tenant", "alice", str(source))
    assert code == 0, err
    dead = dead_letters(data_dir)
    summary = [d for d in dead if d["location"] == "events.jsonl"]
    assert len(summary) == 1 and "5" in summary[0]["reason"] and "timezone" in summary[0]["reason"]
