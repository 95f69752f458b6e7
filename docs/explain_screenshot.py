"""Writes docs/explain.png and docs/explain-sample.html: ``kassign explain --html`` in Chromium.

Run from the repository root: ``.venv/bin/python docs/explain_screenshot.py``. The group is the
one the tests explain (tests/cli/explain_scenario.py: four clients in four racks over two zones
scale out to six); the screenshot is taken by the tests' headless Chromium (tests/browser) at a
laptop's width, after a click on a warm-up, so the story panel shows its reason.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from google.protobuf import json_format
from kassign.cli import main as cli
from selenium.webdriver.common.by import By

from tests.browser import WINDOW, chromium, open_page
from tests.cli.explain_scenario import scale_out

PAGE = ROOT / "docs" / "explain-sample.html"
PNG = ROOT / "docs" / "explain.png"


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        request = Path(tmp) / "orders-app.json"
        request.write_text(json_format.MessageToJson(scale_out()))
        code = cli.main(["explain", str(request), "--html", str(PAGE)])
    if code:
        return code
    with chromium() as driver:
        open_page(driver, PAGE)
        driver.find_element(By.CSS_SELECTOR, "#grid .cell.warm-up").click()
        height = driver.execute_script(
            "const d = document.getElementById('detail');"
            "return Math.max(document.documentElement.scrollHeight,"
            " d.getBoundingClientRect().top + d.scrollHeight + 48)"
        )
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": WINDOW[0], "height": round(height), "deviceScaleFactor": 1, "mobile": False},
        )
        driver.save_screenshot(str(PNG))
    print(f"wrote {PAGE.relative_to(ROOT)} and {PNG.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
