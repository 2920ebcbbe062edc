"""The memory explorer (/ui) in headless Chromium over the folded sample stream: the board
lists the sample's intents, an intent opens its evidence, a search shows cited hits, a node's
neighbourhood is drawn, a belief's chain is a timeline, and resolving an intent changes its
status through the API. The API asks for its token, so the page must ask for it too."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.app.conftest import app_settings
from tests.app.test_api import LiveApi
from tests.browser.chromium import chromium, missing

REASON = missing()
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(REASON is not None, reason=f"browser tests skipped: {REASON}"),
]

TOKEN = "browser-secret"
WAIT_S = 30


@pytest.fixture(scope="module")
def api(folded_sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApi]:
    data = tmp_path_factory.mktemp("browser") / "data"
    shutil.copytree(folded_sample_dir, data)
    with LiveApi(app_settings(data, api_token=TOKEN)) as live:
        yield live


@pytest.fixture(scope="module")
def rest(api: LiveApi) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=api.url, headers=headers) as client:
        yield client


@pytest.fixture(scope="module")
def page(api: LiveApi) -> Iterator[Any]:
    """The page, opened once, with the token entered when the API asked for it."""
    from selenium.webdriver.common.by import By

    with chromium() as driver:
        driver.get(f"{api.url}/ui/")
        wait(driver, visible("[data-testid=token-input]")).send_keys(TOKEN)
        driver.find_element(By.CSS_SELECTOR, "[data-testid=token-submit]").click()
        wait(driver, present("[data-testid=intent-card]"))
        yield driver


def present(css: str) -> Any:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    return ec.presence_of_element_located((By.CSS_SELECTOR, css))


def visible(css: str) -> Any:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    return ec.visibility_of_element_located((By.CSS_SELECTOR, css))


def wait(driver: Any, condition: Any) -> Any:
    """Wait for the condition; an element the page re-rendered meanwhile is looked up again
    at the next poll (a board redrawn after a status change), not an error."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    waiting = WebDriverWait(driver, WAIT_S, ignored_exceptions=[StaleElementReferenceException])
    return waiting.until(condition)


def texts(driver: Any, css: str) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, css)]


def go(driver: Any, api: LiveApi, hash_: str) -> None:
    driver.get(f"{api.url}/ui/#{hash_}")  # the token stays in the tab's session storage


def test_board_lists_the_sample_intents(page: Any, rest: httpx.Client) -> None:
    intents = rest.get("/tenants/alice/intents").json()
    assert intents, "the sample stream yields intents"
    titles = texts(page, "[data-testid=intent-card] .title")
    assert sorted(titles) == sorted(i["title"] for i in intents)
    assert (
        "pending" in page.find_element("css selector", "[data-testid=column-pending]").text.lower()
    )


def test_clicking_an_intent_shows_its_evidence(page: Any, rest: httpx.Client) -> None:
    from selenium.webdriver.common.by import By

    card = page.find_elements(By.CSS_SELECTOR, "[data-testid=intent-card]")[0]
    intent_id = card.get_attribute("data-intent")
    card.click()
    wait(page, present("[data-testid=intent-evidence] li"))
    detail = rest.get(f"/tenants/alice/explore/intents/{intent_id}").json()
    shown = texts(page, "[data-testid=intent-evidence] li")
    assert len(shown) == len(detail["evidence"]) > 0
    assert all(
        event["title"] in line for event, line in zip(detail["evidence"], shown, strict=True)
    )
    assert page.find_element(By.CSS_SELECTOR, "[data-testid=intent-why]").text == detail["why"]


def test_a_search_shows_cited_hits(page: Any, api: LiveApi) -> None:
    from selenium.webdriver.common.by import By

    go(page, api, "/search")
    box = wait(page, visible("[data-testid=search-input]"))
    box.clear()
    box.send_keys("water damage bathroom ceiling")
    page.find_element(By.CSS_SELECTOR, "[data-testid=search-submit]").click()
    wait(page, present("[data-testid=hit] [data-testid=cited-events] li"))
    hits = page.find_elements(By.CSS_SELECTOR, "[data-testid=hit]")
    assert hits
    first = hits[0]
    assert first.find_elements(By.CSS_SELECTOR, "[data-testid=cited-events] li")
    assert first.find_element(By.CSS_SELECTOR, "[data-testid=why-ranked]").text.startswith("why:")
    assert "water" in hits[0].text.lower() or "leak" in hits[0].text.lower()


def test_a_node_neighbourhood_is_drawn(page: Any, api: LiveApi, rest: httpx.Client) -> None:
    intent = rest.get("/tenants/alice/intents").json()[0]
    found = rest.get(
        f"/tenants/alice/explore/nodes/{intent['id']}/neighbourhood", params={"limit": 24}
    ).json()
    go(page, api, f"/graph/{intent['id']}")
    wait(page, present(f"[data-testid=graph-node][data-node='{intent['id']}']"))
    drawn = page.find_elements("css selector", "[data-testid=graph-node]")
    assert len(drawn) == 1 + len(found["neighbours"])
    labels = " ".join(texts(page, "[data-testid=edge-label]"))
    assert "TRIGGERS" in labels or "GROUNDS" in labels


def test_a_belief_chain_is_a_timeline(page: Any, api: LiveApi) -> None:
    go(page, api, "/beliefs")
    wait(page, present("[data-testid=revision]"))
    revisions = texts(page, "[data-testid=revision]")
    assert len(revisions) >= 2
    assert "holds now" in revisions[-1] and not any("holds now" in r for r in revisions[:-1])


def test_resolving_an_intent_changes_its_status_through_the_api(
    page: Any, api: LiveApi, rest: httpx.Client
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    pending = rest.get("/tenants/alice/intents", params={"status": "pending"}).json()
    target = pending[0]["id"]
    go(page, api, f"/intents/{target}")
    opened = f"[data-testid=intent-detail][data-intent='{target}']"
    button = f"{opened} [data-testid=action-resolve]"
    # the detail may be drawn again as its data arrives: find the button anew until a click lands
    wait(page, lambda d: d.find_element(By.CSS_SELECTOR, button).click() or True)
    wait(
        page,
        ec.text_to_be_present_in_element(
            (By.CSS_SELECTOR, f"{opened} [data-testid=intent-status]"), "resolved"
        ),
    )
    now = {i["id"]: i["status"] for i in rest.get("/tenants/alice/intents").json()}
    assert now[target] == "resolved"
    resolved = "[data-testid=column-resolved]"
    wait(page, lambda d: pending[0]["title"] in d.find_element(By.CSS_SELECTOR, resolved).text)
