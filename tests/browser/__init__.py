"""A real headless browser for the pages kassign writes: Debian's Chromium, driven by Selenium.

``chromium`` and ``chromium-driver`` are Debian packages the Makefile installs (``APT_PACKAGES``);
Selenium drives them through the system ``chromedriver`` (never a downloaded one: the tests reach
no network). ``open_page`` loads a local file with the network turned off, so a page that needs
anything from outside shows it by failing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
WINDOW = (1400, 900)
"""A laptop's window: pages must lay out without horizontal overflow at this width."""


@contextmanager
def chromium(window: tuple[int, int] = WINDOW) -> Iterator[webdriver.Chrome]:
    """A headless Chromium with no network, closed (process and driver) on exit."""
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",  # tests run as root
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={window[0]},{window[1]}",
        "--proxy-server=127.0.0.1:9",  # any request for the network fails
        "--proxy-bypass-list=<-loopback>",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def open_page(driver: webdriver.Chrome, page: Path) -> None:
    """Load ``page`` (a local file) and wait until it has loaded."""
    driver.get(page.resolve().as_uri())
    driver.execute_script("return document.readyState")


def horizontal_overflow(driver: webdriver.Chrome) -> int:
    """How many CSS pixels the page is wider than the window (0: it fits)."""
    width: int = driver.execute_script(
        "return Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
        " - document.documentElement.clientWidth"
    )
    return max(0, width)
