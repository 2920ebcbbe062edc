"""Headless Chromium from the system packages (Debian ``chromium`` and ``chromium-driver``),
driven by selenium: no browser is downloaded. :func:`missing` says why it cannot start here."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
DRIVER = ("/usr/bin/chromedriver",)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)
INSTALL = "apt-get install -y chromium chromium-driver (make test does it as root on Debian)"


def _first(paths: tuple[str, ...]) -> str | None:
    return next((p for p in paths if Path(p).exists()), None)


def missing() -> str | None:
    """Why no browser test can run here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (make install)"
    if _first(CHROMIUM) is None:
        return f"no Chromium at {' or '.join(CHROMIUM)}: {INSTALL}"
    if _first(DRIVER) is None:
        return f"no chromedriver at {DRIVER[0]}: {INSTALL}"
    return None


@contextmanager
def chromium(width: int = 1500, height: int = 950) -> Iterator[object]:
    """A headless Chromium with a fresh profile, closed and removed on the way out."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="foldmem-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(_first(CHROMIUM))
    for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=_first(DRIVER)))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
