"""Shared fixtures: a real Streamlit server and Debian's headless Chromium (via Playwright).

The server is started from the repo root exactly as a user would (`streamlit run app.py`) on a
free loopback port; only the process started here is stopped. Playwright drives
/usr/bin/chromium (its own browser download is not reachable on these machines).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path(os.environ.get("ROOFLINE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(env_extra: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    """Start `streamlit run app.py` on a free port; returns (process, base URL) once healthy."""
    port = free_port()
    env = {**os.environ, "ROOFLINE_CATALOG": "", **(env_extra or {})}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as response:
                if response.read() == b"ok":
                    return proc, url
        except OSError:
            time.sleep(0.2)
    stop_server(proc)
    raise RuntimeError("server did not become healthy within 30 s")


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


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
