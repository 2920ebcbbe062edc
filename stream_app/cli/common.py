"""What every ``foldmem`` command shares: options, settings with logging, and errors that
become one line (``error: ...``) and exit code 2, never a traceback."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar

import orjson
import typer
from pydantic import ValidationError

from schemas.errors import FoldmemError
from stream_app.factory import open_hub
from stream_app.hub import Hub
from stream_app.logging import configure_logging
from stream_app.settings import Settings, load_settings

P = ParamSpec("P")
R = TypeVar("R")

DataDir = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Data directory (default ./.foldmem or FOLDMEM_DATA_DIR)."),
]
TenantOpt = Annotated[str | None, typer.Option("--tenant", help="Only this tenant.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")]
BrokersOpt = Annotated[
    str | None,
    typer.Option(
        "--brokers", help="Kafka brokers, comma-separated host:port (FOLDMEM_KAFKA_BROKERS)."
    ),
]


def fail(message: str, code: int = 2) -> typer.Exit:
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    return typer.Exit(code)


def cli_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """FoldmemError or invalid arguments (a pydantic ValidationError) -> 'error: ...' on
    stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except FoldmemError as exc:
            raise fail(str(exc)) from None
        except ValidationError as exc:
            raise fail(validation_message(exc)) from None

    return wrapper


def validation_message(exc: ValidationError) -> str:
    """pydantic's errors in one line: ``as_of: must be timezone-aware ...; k: ...``."""
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"])
        message = str(err["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def settings_for(**overrides: Any) -> Settings:
    settings = load_settings(**overrides)
    configure_logging(settings)
    return settings


@contextlib.contextmanager
def data_dir_hub(data_dir: Path | None) -> Iterator[Hub]:
    """The embedded hub of a data dir, for one command (closed on the way out): the commands
    use the Hub contract only."""
    with open_hub(settings_for(data_dir=data_dir)) as hub:
        yield hub


def echo_json(value: Any) -> None:
    typer.echo(orjson.dumps(value, option=orjson.OPT_INDENT_2, default=str).decode())
