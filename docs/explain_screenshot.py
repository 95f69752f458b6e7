"""Writes docs/explain.png and docs/explain-sample.html: ``kassign explain --html`` in Chromium;
and docs/explain-load.png, a consumer group balanced by load (issue 25).

Run from the repository root: ``.venv/bin/python docs/explain_screenshot.py``. The group is the
one the tests explain (tests/cli/explain_scenario.py: four clients in four racks over two zones
scale out to six); the screenshot is taken by the tests' headless Chromium (tests/browser) at a
laptop's width, after a click on a warm-up, so the story panel shows its reason. The load page is
examples/consumer/sticky-by-load.json's, after a click on its hot partition (moved by load).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from google.protobuf import json_format
from kassign.cli import main as cli
from selenium import webdriver
from selenium.webdriver.common.by import By

from tests.browser import WINDOW, chromium, open_page
from tests.cli.explain_scenario import scale_out

PAGE = ROOT / "docs" / "explain-sample.html"
PNG = ROOT / "docs" / "explain.png"
LOAD_PNG = ROOT / "docs" / "explain-load.png"
LOAD_EXAMPLE = ROOT / "examples" / "consumer" / "sticky-by-load.json"


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        request = Path(tmp) / "orders-app.json"
        request.write_text(json_format.MessageToJson(scale_out()))
        code = cli.main(["explain", str(request), "--html", str(PAGE)])
        load_page = Path(tmp) / "load.html"
        code = code or cli.main(
            ["explain", "--kind", "consumer", str(LOAD_EXAMPLE), "--html", str(load_page)]
        )
        if code:
            return code
        with chromium() as driver:
            _shoot(driver, PAGE, "#grid .cell.warm-up", PNG)
            _shoot(driver, load_page, '#grid .cell[data-task="clicks-0"]', LOAD_PNG)
    print(f"wrote {PAGE.relative_to(ROOT)}, {PNG.relative_to(ROOT)}, {LOAD_PNG.relative_to(ROOT)}")
    return 0


def _shoot(driver: webdriver.Chrome, page: Path, click: str, png: Path) -> None:
    """``page`` after a click on ``click``, the whole story panel in the picture."""
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})  # the last page's height
    open_page(driver, page)
    driver.find_element(By.CSS_SELECTOR, click).click()
    height = driver.execute_script(
        "const d = document.getElementById('detail');"
        "return Math.max(document.documentElement.scrollHeight,"
        " d.getBoundingClientRect().top + d.scrollHeight + 48)"
    )
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": WINDOW[0], "height": round(height), "deviceScaleFactor": 1, "mobile": False},
    )
    driver.save_screenshot(str(png))


if __name__ == "__main__":
    raise SystemExit(main())
