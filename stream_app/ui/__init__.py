"""The memory explorer page, served by the API at ``/ui``: static files shipped in the
package (no build step), reading the API's explore, query and intent routes from the browser.

The page and its assets hold no data, so they are served without a token
(:data:`stream_app.api.guard.OPEN_PREFIXES`); every call the page makes carries the bearer
token the person enters when the API asks for one.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).parent / "static"
UI_PATH = "/ui"


def mount_ui(app: FastAPI) -> None:
    """``/ui/`` serves index.html and its assets; ``/ui`` redirects there."""

    @app.get(UI_PATH, include_in_schema=False)
    async def ui_root() -> RedirectResponse:
        return RedirectResponse(f"{UI_PATH}/")

    app.mount(f"{UI_PATH}/", StaticFiles(directory=STATIC, html=True), name="ui")
