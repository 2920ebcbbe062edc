"""Screenshots of the explorer's views for the docs, from a running API:

    .venv/bin/foldmem run --once examples/sample_stream.jsonl --api-port 8765  # or make run
    .venv/bin/python -m tests.browser.screenshots --url http://127.0.0.1:8765 --out docs/img

With a token (``--token`` or FOLDMEM_API_TOKEN) the page's token prompt is answered first.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

import httpx

from tests.browser.chromium import chromium

SETTLE_S = 0.6  # let the last drawing finish before the picture


def _wait(driver: Any, css: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 30).until(ec.presence_of_element_located((By.CSS_SELECTOR, css)))
    time.sleep(SETTLE_S)


def shoot(url: str, token: str | None, out: Path, tenant: str, search: str) -> list[Path]:
    from selenium.webdriver.common.by import By

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with httpx.Client(base_url=url, headers=headers) as api:
        intents = api.get(f"/tenants/{tenant}/explore/intents").json()["items"]
    first = intents[0]["id"]
    out.mkdir(parents=True, exist_ok=True)
    page = f"{url}/ui/?tenant={tenant}"
    shots = [
        ("explorer-intents.png", f"#/intents/{first}", "[data-testid=intent-evidence] li"),
        ("explorer-search.png", f"#/search/{search}", "[data-testid=cited-events] li"),
        ("explorer-graph.png", f"#/graph/{first}", "[data-testid=graph-node]"),
        ("explorer-beliefs.png", "#/beliefs", "[data-testid=revision]"),
    ]
    written = []
    with chromium(1500, 950) as driver:
        driver.get(page)
        if token:
            _wait(driver, "[data-testid=token-input]")
            driver.find_element(By.CSS_SELECTOR, "[data-testid=token-input]").send_keys(token)
            driver.find_element(By.CSS_SELECTOR, "[data-testid=token-submit]").click()
        _wait(driver, "[data-testid=intent-card]")
        for name, fragment, ready in shots:
            driver.get(page + fragment)
            _wait(driver, ready)
            driver.save_screenshot(str(out / name))
            written.append(out / name)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8765")
    parser.add_argument("--token", default=os.environ.get("FOLDMEM_API_TOKEN"))
    parser.add_argument("--out", type=Path, default=Path("docs/img"))
    parser.add_argument("--tenant", default="alice")
    parser.add_argument("--search", default="water damage bathroom")
    args = parser.parse_args()
    for path in shoot(args.url.rstrip("/"), args.token, args.out, args.tenant, args.search):
        print(path)


if __name__ == "__main__":
    main()
