"""Shared fixtures: a real Streamlit server and Debian's headless Chromium (via Playwright),
and how the suite is shared out between parallel workers (pytest-xdist).

The server process and the browser settings live in tools/server.py (the benchmarks use them
too): `streamlit run app.py` from the repo root on a free loopback port; only the process
started there is stopped. Playwright drives /usr/bin/chromium (its own browser download is not
reachable on these machines).

pyproject.toml runs the suite on one worker process per core (`-n auto`). Each test goes to
whichever worker is free, except the tests of a `tests/test_browser*.py` module: they share
the module's server (and some need to be its first visitor), so a module's browser tests run
on one worker, in file order. Every worker has its own session fixtures (server, Chromium) and
its own tmp_path root; `-n 0` runs everything in one process.

A worker's AppTests share Streamlit's caches, as a server's sessions do: a test clears them only
when it changes something they are not keyed on (the team catalogue's environment variable).
Clearing them before every test of seven page modules made the rest of the worker's tests
compute the catalogue and every page's defaults again (31 CPU seconds of the suite's 380
without the browser tests); the modules pass with warm caches in file order and in reverse.
"""

from __future__ import annotations

import base64
import gc
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Collection, Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings
from xdist.scheduler import LoadScopeScheduling

from tools.server import CHROMIUM, CHROMIUM_ARGS, free_port, start_server, stop_server

# Compiled modules are kept (in the checkout's __pycache__ folders, which git ignores) even where
# the environment sets PYTHONDONTWRITEBYTECODE: the suite imports the app from source in both
# test workers, in every server the browser tests start and in every CLI run in a process of
# its own, and compiling it afresh in each took an eighth of a clean clone's run (7 min 41 s
# against 6 min 47 s on two cores). Set when pytest reads this file, before the workers start:
# they and every process they start inherit it.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

ROOT = Path(__file__).resolve().parent.parent
SKIP_DIRS = frozenset(  # folders no project file lives in
    {".venv", ".git", "node_modules", "__pycache__", ".hypothesis", ".pytest_cache"}
)
# Property tests check results, not speed (speed is measured in bench/): no per-example
# deadline, so a busy 2-core CI machine cannot fail them on timing.
settings.register_profile("repo", deadline=None)
settings.load_profile("repo")
__all__ = [
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "ROOT",
    "chart_spec",
    "free_port",
    "metric",
    "page_links",
    "repo_files",
    "start_fresh_server",
    "start_server",
    "stop_server",
]


# Browser modules whose tests share one server per worker (`shared_server`), so that each test
# is its own unit of work: the longest of them would otherwise hold one worker for minutes.
SPLIT_MODULES = frozenset({"test_browser_harden.py"})


class BrowserModulesTogether(LoadScopeScheduling):
    """xdist's load scheduling with one unit of work per test, except that each
    tests/test_browser*.py module is one unit (its tests share the module's server), but for
    SPLIT_MODULES.

    Units with more tests go out first (xdist's reordering), so the browser modules start early
    and none of them is left for the end. xdist's own `--dist loadgroup` would group by marks,
    but it renames node ids through an attribute that pytest 9 no longer reads, so its groups
    are silently ignored.
    """

    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        name = Path(module).name
        return module if name.startswith("test_browser") and name not in SPLIT_MODULES else nodeid


def pytest_collection_finish(session: pytest.Session) -> None:
    """Take what the process holds once the tests are collected (the imports, the collected
    tests) out of the garbage collector's view: it lives until the process ends, and every full
    collection walked it again. The app's cache sweeps (ui/runtime/memo.py `purge`, in a
    thread) collect in full; in a worker holding the whole suite each took 0.5-0.8 CPU s (10 s
    of a run), in a server far less."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(optionalhook=True)  # a hook that xdist declares
def pytest_xdist_make_scheduler(config: pytest.Config, log) -> LoadScopeScheduling | None:
    """The scheduler for `-n N` (xdist's default `--dist load`); other `--dist` modes as asked."""
    return BrowserModulesTogether(config, log) if config.getvalue("dist") == "load" else None


@pytest.fixture(autouse=True, scope="session")
def one_component_scan() -> Iterator[None]:
    """Every AppTest of this process shares one scan of the installed packages for Streamlit
    components. AppTest makes a component manager per instance, and its first run reads the
    metadata of every installed distribution (about 320 here, with Ray and the Kubernetes
    tools): 0.4 s of a 0.7 s run of /load. The app registers no component of its own, so what
    the scan finds is the same for every AppTest."""
    from streamlit.components.v2.component_manager import BidiComponentManager
    from streamlit.testing.v1.app_test import AppTest

    shared = BidiComponentManager()
    shared.discover_and_register_components(start_file_watching=False)
    original = AppTest.__init__

    def init(self, *args, **kwargs) -> None:
        original(self, *args, **kwargs)
        # the attribute AppTest._run fills on its first run (if Streamlit renames it, fail here)
        assert self._bidi_component_manager is None
        self._bidi_component_manager = shared

    AppTest.__init__ = init
    yield
    AppTest.__init__ = original


_FRESH_PORT: list[int] = []  # this worker's port for the servers its tests start and stop


def start_fresh_server(
    env_extra: dict[str, str] | None = None, script: str = "app.py"
) -> tuple[subprocess.Popen, str]:
    """`start_server` on this worker's one port for the servers a test or a module starts and
    stops (one at a time in a worker): a new process no browser has visited, at the origin
    the worker's tab already holds the app's scripts for. On another origin the tab fetches
    and compiles them again, about 1.6 CPU s of its first page load there. The port taken,
    another is used (and kept)."""
    proc, url = start_server(env_extra, script, port=_FRESH_PORT[0] if _FRESH_PORT else None)
    _FRESH_PORT[:] = [int(url.rsplit(":", 1)[1])]
    return proc, url


@pytest.fixture(scope="session")
def shared_server() -> Iterator[str]:
    """Base URL of the worker's one long-lived server, for the browser tests that need no
    fresh server (the tests of SPLIT_MODULES are shared out one by one; a test whose deep
    link must be a server's first request starts its own: `start_fresh_server`)."""
    proc, url = start_server()
    yield url
    stop_server(proc)


@pytest.fixture(scope="session")
def live_server(shared_server: str) -> str:
    """The worker's long-lived server (`shared_server`): one process and one origin whose
    scripts the worker's tab has compiled, not two."""
    return shared_server


class QuietBrowser:
    """A Playwright browser whose new contexts and pages prefer reduced motion unless a test
    says otherwise: Streamlit's spinners and the skeletons of elements still to come are
    not animated, which takes most of the compositor's work off a page load (about a third of
    the browser's CPU per load on these machines); what a page lays out and says is the same."""

    def __init__(self, browser):
        self._browser = browser

    def new_context(self, **options):
        return self._browser.new_context(**({"reduced_motion": "reduce"} | options))

    def new_page(self, **options):
        return self._browser.new_page(**({"reduced_motion": "reduce"} | options))

    def __getattr__(self, name):
        return getattr(self._browser, name)


@pytest.fixture(scope="session")
def chromium():
    """A Playwright Chromium browser (Debian's binary), quiet (`QuietBrowser`)."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's chromium "
            "(apt-get install -y chromium) to run the browser tests"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield QuietBrowser(browser)
        browser.close()


TAB_VIEWPORT = {"width": 1440, "height": 2000}


@pytest.fixture(scope="session")
def _worker_tab(chromium):
    """The one English browser tab of this test worker (see `tab`)."""
    context = chromium.new_context(viewport=TAB_VIEWPORT, locale="en-US")
    yield context.new_page()
    context.close()


@pytest.fixture
def tab(_worker_tab):
    """An English browser tab at 1440 × 2000 px, light, reduced motion, Playwright's 30 s
    timeouts: the worker's one tab, reused from test to test and module to module. Each `goto`
    is a new page load and a new server session, as when a user opens the next link; what a
    test set on the tab before (its size, its colour scheme, its timeouts) is set back here.

    Measured on the two-core machines (whole machine's CPU, /solve): a fresh browser context
    and its first page load take about 4.1 CPU s, a new tab in a used context 2.9, the next
    link in a used tab 1.5 (1.6 more on a server the tab has not visited: another origin,
    so the app's scripts are fetched and compiled again)."""
    page = _worker_tab
    page.set_viewport_size(TAB_VIEWPORT)
    page.emulate_media(color_scheme="light", reduced_motion="reduce")
    page.set_default_timeout(30_000)
    page.set_default_navigation_timeout(30_000)
    yield page
    # leave the app: a page left open reconnects to the next server on its port (a fresh
    # server's first session would then be that page's, not the next test's deep link)
    page.goto("about:blank")


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


CHARTS_DRAWN_JS = """() => [...document.querySelectorAll("[data-testid='stPlotlyChart']")]
    .every(box => { const plot = box.querySelector('.js-plotly-plot');
                    return !!(plot && plot._fullLayout && plot.querySelector('.main-svg')); })"""


def wait_charts(page, timeout_ms: int = 60_000) -> None:
    """Wait until every chart the page placed is drawn (Plotly's code loads after the page's
    elements: a chart can still be an empty box when the script is idle)."""
    page.wait_for_function(CHARTS_DRAWN_JS, timeout=timeout_ms, polling=100)


def wait_until(page, condition: Callable[[], bool], timeout_ms: int = 60_000) -> None:
    """Poll `condition()` every 250 ms until it holds or `timeout_ms` has passed; the test's own
    assertion then reports what the page shows. For what an action changes: on a busy machine
    its rerun can start after `wait_idle` has already seen the page quiet, and the old result
    is still drawn."""
    deadline = time.monotonic() + timeout_ms / 1000
    while not condition() and time.monotonic() < deadline:
        page.wait_for_timeout(250)


def open_section(page, title: str, timeout_ms: int = 60_000) -> None:
    """Open the main area's expander titled `title` and wait for its rerun. A lazy section is
    drawn by a rerun its click starts; on a busy machine a click that lands while another rerun
    redraws the page can be lost, so a section still closed after the page went quiet is
    clicked again (at most three times; the test's own wait then reports what is missing)."""
    expander = page.locator("[data-testid='stMain'] [data-testid='stExpander']").filter(
        has=page.locator("summary", has_text=title)
    )
    details = expander.locator("details").first
    for _ in range(3):
        expander.locator("summary").first.click()
        wait_idle(page, timeout_ms)
        wait_until(page, lambda: details.get_attribute("open") is not None, 5_000)
        if details.get_attribute("open") is not None:
            return


def repo_files(suffixes: Collection[str], names: Collection[str] = ()) -> list[Path]:
    """The project's files ending in one of `suffixes` or named one of `names`, sorted, not
    looking inside the virtualenv, caches or git internals (SKIP_DIRS) at all: walking the
    virtualenv's files and dropping them after took 2 s of each worker's collection."""
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        found += [
            Path(folder, name)
            for name in files
            if name in names or any(name.endswith(suffix) for suffix in suffixes)
        ]
    return sorted(found)


def typed_arrays_as_lists(value):
    """A figure's JSON with plotly's typed arrays (`{"dtype": "f8", "bdata": base64}`, what a
    numpy column becomes) read back as lists of numbers, everything else as it is."""
    if isinstance(value, dict) and set(value) >= {"dtype", "bdata"}:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        return flat.reshape([int(n) for n in str(shape).split(",")] if shape else -1).tolist()
    if isinstance(value, dict):
        return {k: typed_arrays_as_lists(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed_arrays_as_lists(v) for v in value]
    return value


def chart_spec(chart) -> dict:
    """An AppTest plotly_chart's figure (its JSON), typed arrays as lists."""
    return typed_arrays_as_lists(json.loads(chart.proto.spec))


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
