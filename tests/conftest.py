"""Shared fixtures: a real Streamlit server and Debian's headless Chromium (via Playwright).

The server process and the browser settings live in tools/server.py (the benchmarks use them
too): `streamlit run app.py` from the repo root on a free loopback port; only the process
started there is stopped. Playwright drives /usr/bin/chromium (its own browser download is not
reachable on these machines).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tools.server import CHROMIUM, CHROMIUM_ARGS, free_port, start_server, stop_server

ROOT = Path(__file__).resolve().parent.parent
# Property tests check results, not speed (speed is measured in bench/): no per-example
# deadline, so a busy 2-core CI machine cannot fail them on timing.
settings.register_profile("repo", deadline=None)
settings.load_profile("repo")
__all__ = [
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "ROOT",
    "free_port",
    "metric",
    "page_links",
    "start_server",
    "stop_server",
]


@pytest.fixture(scope="session")
def live_server() -> Iterator[str]:
    """Base URL of a fresh server; its first browser request is a test's deep link."""
    proc, url = start_server()
    yield url
    stop_server(proc)


@pytest.fixture(scope="session")
def chromium():
    """A Playwright Chromium browser (Debian's binary)."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's chromium "
            "(apt-get install -y chromium) to run the browser tests"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def wait_idle(page, timeout_ms: int = 60_000) -> None:
    """Wait until the script has run: content drawn, and no running-status widget for 0.5 s."""
    content = "[data-testid='stMainBlockContainer'] [data-testid='stElementContainer']"
    page.wait_for_selector(content, timeout=timeout_ms)
    for _ in range(2):
        page.wait_for_function(
            "() => !document.querySelector(\"[data-testid='stStatusWidget']\")",
            timeout=timeout_ms,
        )
        page.wait_for_timeout(250)


def metric(page, label: str) -> str:
    """The displayed value of the st.metric whose label is `label` (browser tests)."""
    box = (
        page.locator("[data-testid='stMetric']")
        .filter(has=page.locator("[data-testid='stMetricLabel']", has_text=label))
        .first
    )
    return box.locator("[data-testid='stMetricValue']").inner_text()


def page_links(cat, custom=None) -> dict:
    """Every scenario page's declared share link (ui/<page>/link.py), by URL path."""
    from ui.accuracy import link as accuracy
    from ui.catalogue import link as catalogue
    from ui.compare import link as compare
    from ui.decode import link as decode
    from ui.load import link as load
    from ui.plan import link as plan
    from ui.solve import link as solve
    from ui.sweep import link as sweep
    from ui.train import link as train

    return {
        "solve": solve.declare(cat, custom),
        "sweep": sweep.declare(cat, custom),
        "compare": compare.declare(cat, custom),
        "decode": decode.declare(cat),
        "plan": plan.declare(cat),
        "load": load.declare(cat),
        "train": train.declare(cat),
        "catalogue": catalogue.declare(cat),
        "accuracy": accuracy.declare(),
    }
