"""Real-browser tests: headless Chromium against `streamlit run app.py`."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

import engine
from tests.conftest import ROOT, metric, start_fresh_server, stop_server, wait_idle, wait_until
from ui.words.format import fmt

pytestmark = pytest.mark.browser
REFERENCE = "/solve?model=ResNet-50&hardware=A100&batch=1&precision=fp16"
SHOTS = os.environ.get("ROOFLINE_SCREENSHOTS")  # e.g. docs/screenshots: refresh README images


@pytest.fixture(scope="module")
def fresh_server():
    """A server no browser has visited yet: the deep link below is its very first request."""
    proc, url = start_fresh_server()
    yield url
    stop_server(proc)


def test_deep_link_as_first_request_shows_the_reference_case(fresh_server, tab):
    page = tab
    page.set_viewport_size({"width": 1400, "height": 2200})
    page.goto(fresh_server + REFERENCE)
    wait_idle(page)
    r = engine.solve(model="ResNet-50", hardware="A100", batch_size=1, precision="fp16")
    assert "memory" in metric(page, "Bottleneck")
    assert metric(page, "Latency") == fmt(r.latency_s, "s") == "543 µs"  # 0.5426 ms
    assert "1,843" in metric(page, "Throughput")
    # the headline: the regime (overhead 0.515 ms is 94.9 % of 0.543 ms), the roofline bound
    heading = page.locator("[data-testid='stMain'] h3").first.inner_text()
    assert "Overhead-bound · roofline bound: memory" in heading
    # the entry file's setup ran: our navigation (readable labels) is in the sidebar
    sidebar = page.locator("[data-testid='stSidebar']").inner_text()
    assert "Overview" in sidebar and "Single solve" in sidebar
    if SHOTS:
        page.wait_for_timeout(4000)  # let the charts finish drawing
        page.screenshot(path=str(ROOT / SHOTS / "solve.png"), full_page=True)


def test_chart_has_roofs_achieved_point_and_overhead_gap(live_server, tab):
    page = tab
    page.set_viewport_size({"width": 1400, "height": 2000})
    page.goto(live_server + REFERENCE)
    wait_idle(page)
    title = page.locator(".gtitle", has_text="Roofline")
    chart = page.locator(".js-plotly-plot").filter(has=title).first
    chart.wait_for()
    legend = chart.locator(".legendtext").all_text_contents()
    for name in (
        "Memory roof",
        "Compute roof",
        "Effective compute roof",
        "Achieved",
        "Fixed-overhead gap",
    ):
        assert any(t.startswith(name) for t in legend), (name, legend)
    annotations = " ".join(chart.locator(".annotation-text").all_text_contents())
    assert "gap 515 µs (95%)" in annotations  # 0.5153 ms of fixed overhead


def test_csv_download_parses_and_matches_the_engine(live_server, tab, tmp_path):
    page = tab
    page.set_viewport_size({"width": 1400, "height": 2000})
    page.goto(live_server + REFERENCE)
    wait_idle(page)
    with page.expect_download() as info:
        page.get_by_role("button", name="Download CSV").first.click()
    target = tmp_path / "solve.csv"
    info.value.save_as(target)
    df = pd.read_csv(target)
    expected = engine.solve(model="ResNet-50", hardware="A100", batch_size=1, precision="fp16")
    assert len(df) == 1 and df["model"][0] == "ResNet-50"
    assert df["latency_ms"][0] == pytest.approx(expected.latency_s * 1e3)
    assert df["compute_efficiency_fraction"][0] == pytest.approx(0.5)
    assert "flop_convention" in df.columns and "dispatch_overhead_ms" in df.columns


def test_edited_scenario_link_reproduces_in_a_new_browser_context(live_server, tab, chromium):
    page = tab  # the worker's tab; the link is then opened in a browser context of its own
    page.set_viewport_size({"width": 1400, "height": 2000})
    page.goto(live_server + REFERENCE)
    wait_idle(page)
    batch = page.get_by_label("Batch size (samples)")
    batch.fill("64")
    batch.press("Enter")
    wait_idle(page)
    page.wait_for_function("() => location.search.includes('batch=64')", timeout=30_000)
    wait_idle(page)  # the rerun that wrote the link may still be drawing the share box
    page.get_by_text("Share this scenario").click()
    link = page.locator("[data-testid='stCode'] code").first.inner_text().strip()
    assert link.startswith(live_server + "/solve?") and "batch=64" in link
    assert "efficiency=0.5" in link and "flop_convention=catalog" in link
    shown = metric(page, "Latency")

    second = chromium.new_context(viewport={"width": 1400, "height": 2000})
    again = second.new_page()
    again.goto(link)
    wait_idle(again)
    assert metric(again, "Latency") == shown
    expected = engine.solve(model="ResNet-50", hardware="A100", batch_size=64, precision="fp16")
    assert metric(again, "Bottleneck").startswith(expected.bottleneck)
    # no waiting for the field: it is painted with the linked value first
    # (tests/test_browser_first_paint.py); it once said 1 beside batch 64's results under load
    assert again.get_by_label("Batch size (samples)").input_value() == "64"
    second.close()


def test_every_page_opens_from_the_sidebar_and_screenshots_for_the_readme(live_server, tab):
    """Every page opens from the sidebar's navigation, as a user goes from page to page:
    Streamlit switches the page in the same tab and session (no page load); each renders
    without an exception at its own address. With ROOFLINE_SCREENSHOTS, one screenshot per
    page (the README shows them; solve.png is the deep link's, above)."""
    out = ROOT / SHOTS if SHOTS else None
    page = tab
    page.set_viewport_size({"width": 1400, "height": 1800})
    page.goto(live_server + "/")
    wait_idle(page)
    titles = {page.title()}  # each page's script sets its own browser title first
    for stem in sorted(p.stem for p in (ROOT / "pages").glob("[!_]*.py")):
        page.locator(
            f"[data-testid='stSidebar'] a[data-testid='stPageLink-NavLink'][href='{stem}']"
        ).click()
        page.wait_for_function(f"() => location.pathname === '/{stem}'", timeout=60_000)
        wait_until(page, lambda: page.title() not in titles)  # this page's script has run
        wait_idle(page)
        assert page.title() not in titles, (stem, page.title())
        titles.add(page.title())
        assert page.locator("[data-testid='stException']").count() == 0, stem
        if out:
            Path(out).mkdir(parents=True, exist_ok=True)
            page.wait_for_timeout(4000)  # let tables and charts finish drawing
            if stem != "solve":
                page.screenshot(path=str(out / f"{stem}.png"), full_page=True)
