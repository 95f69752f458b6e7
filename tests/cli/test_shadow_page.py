"""``kassign shadow-report --html`` as a reader sees it: the page in a real headless Chromium
with the network off (tests/browser), at a laptop's window."""

from __future__ import annotations

from pathlib import Path

import pytest
from kassign.cli import main as cli
from selenium.webdriver.common.by import By

from tests.browser import chromium, horizontal_overflow, open_page
from tests.cli.shadow_journal import write_journal

pytestmark = pytest.mark.slow


def test_the_shadow_page_shows_every_group_and_its_plots_and_fits_the_window(
    tmp_path: Path,
) -> None:
    journal = write_journal(tmp_path / "journal")
    page = tmp_path / "shadow.html"
    assert cli.main(["shadow-report", str(journal), "--html", str(page)]) == 0
    with chromium() as driver:
        open_page(driver, page)
        sections = driver.find_elements(By.CSS_SELECTOR, "section.group")
        shown = {s.get_attribute("data-group"): s for s in sections if s.is_displayed()}
        assert sorted(shown) == ["orders", "payments"]
        for section in shown.values():
            plots = section.find_elements(By.TAG_NAME, "svg")
            assert plots and all(p.size["width"] > 50 and p.size["height"] > 20 for p in plots)
            # each rebalance's point of both answers is on screen (a flat line's box has no
            # height, which Selenium calls hidden: the points are what a reader sees)
            points = section.find_elements(By.CSS_SELECTOR, "g[data-series] circle")
            assert points and all(point.is_displayed() for point in points)
            series = {
                g.get_attribute("data-series")
                for g in section.find_elements(By.CSS_SELECTOR, "g[data-series]")
            }
            assert series == {"kafka", "kassign"}
            assert section.find_element(By.CSS_SELECTOR, 'tr[data-figure="moved"]').is_displayed()
        assert horizontal_overflow(driver) == 0
