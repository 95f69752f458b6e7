"""The browser harness itself: it renders a local page, runs its script, and sees no network."""

from __future__ import annotations

import time
from pathlib import Path

from selenium.webdriver.common.by import By

from tests.browser import chromium, horizontal_overflow, open_page


def test_renders_a_local_page_and_runs_its_script(tmp_path: Path) -> None:
    page = tmp_path / "p.html"
    page.write_text(
        "<!doctype html><p id=a>1</p><button id=b onclick=\"a.textContent='2'\">b</button>"
        "<div style='width:3000px'>wide</div>"
    )
    with chromium() as driver:
        open_page(driver, page)
        driver.find_element(By.ID, "b").click()
        assert driver.find_element(By.ID, "a").text == "2"
        assert horizontal_overflow(driver) > 1000


def test_reaches_no_network(tmp_path: Path) -> None:
    page = tmp_path / "p.html"
    page.write_text(
        "<!doctype html><p id=r>pending</p><script>"
        "fetch('http://example.com/').then(() => r.textContent='reached',"
        " () => r.textContent='refused')</script>"
    )
    with chromium() as driver:
        open_page(driver, page)
        for _ in range(50):
            if driver.find_element(By.ID, "r").text != "pending":
                break
            time.sleep(0.1)
        assert driver.find_element(By.ID, "r").text == "refused"
