"""The engine (topologies/) is pure: no network client, no environment, no wall clock.

Every module of the package is parsed (never imported) and each import and call is checked:
a model client, the settings and the clock are the runtime's (adapters/, stream_app/) and
reach the engine as arguments. Timers that measure a duration (perf_counter, monotonic,
process_time) are allowed: they say how long something took, never what time it is.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "topologies"

# network clients, the environment and settings loaders, process control (a module and its
# submodules; urllib.parse, a pure parser, is fine)
BANNED_MODULES = frozenset(
    {
        "aiohttp",
        "dotenv",
        "http.client",
        "http.server",
        "httpx",
        "openai",
        "os",
        "pydantic_settings",
        "requests",
        "socket",
        "subprocess",
        "urllib.request",
        "urllib3",
    }
)
# calls that read the wall clock or the environment: (object, attribute)
BANNED_CALLS = frozenset(
    {
        ("datetime", "now"),
        ("datetime", "utcnow"),
        ("datetime", "today"),
        ("date", "today"),
        ("time", "time"),
        ("time", "time_ns"),
        ("time", "localtime"),
        ("time", "gmtime"),
        ("os", "getenv"),
        ("environ", "get"),
    }
)


def engine_modules() -> list[Path]:
    return sorted(ENGINE.rglob("*.py"))


def imported_modules(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def is_banned(module: str) -> bool:
    return any(module == b or module.startswith(b + ".") for b in BANNED_MODULES)


def banned_calls(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        owner = node.value
        name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", None)
        if (name, node.attr) in BANNED_CALLS or node.attr == "environ":
            found.append(f"{name}.{node.attr} (line {node.lineno})")
    return found


def test_the_walk_covers_the_engine() -> None:
    names = {p.relative_to(ENGINE).as_posix() for p in engine_modules()}
    assert {"engine.py", "read/reader.py", "privacy.py", "llm/planner.py"} <= names


@pytest.mark.parametrize("path", engine_modules(), ids=lambda p: p.relative_to(ENGINE).as_posix())
def test_engine_module_imports_no_client_and_reads_no_environment_or_clock(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    banned = sorted(m for m in imported_modules(tree) if is_banned(m))
    assert not banned, f"{path.name} imports {banned}"
    assert not banned_calls(tree), f"{path.name} reads {banned_calls(tree)}"


def test_the_checks_catch_what_they_look_for() -> None:
    tree = ast.parse(
        "import httpx\nfrom openai import AsyncOpenAI\nimport os\n"
        "def f():\n    from datetime import datetime\n    return datetime.now(), os.environ\n"
    )
    assert {"httpx", "openai", "os"} <= {m for m in imported_modules(tree) if is_banned(m)}
    assert not is_banned("urllib.parse") and is_banned("urllib.request")
    assert sorted(c.split(" ")[0] for c in banned_calls(tree)) == ["datetime.now", "os.environ"]
