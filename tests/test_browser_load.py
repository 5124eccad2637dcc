"""Real-browser tests of the serving-under-load page: headless Chromium against
`streamlit run app.py`, whose very first request is a deep link. Expected numbers come from the
engine, formatted as the page does."""

from __future__ import annotations

import pandas as pd
import pytest

import engine
from tests.conftest import metric, start_fresh_server, stop_server, wait_idle
from ui.words.format import fmt

pytestmark = pytest.mark.browser
QUERY = {"model": "Llama-3.1-8B", "hardware": "H100", "tp": "1", "profile": "tutorial"}
QUERY |= {"input_tokens": "512", "output_tokens": "128", "requests": "400", "rate": "5"}
DEEP_LINK = "/load?" + "&".join(f"{k}={v}" for k, v in QUERY.items())
RUN = {"input_tokens": 512, "output_tokens": 128, "requests": 400, "profile": "tutorial"}
VIEWPORT = {"width": 1400, "height": 2400}
TIMEOUT_MS = 120_000  # these 2-core machines run other test suites alongside


@pytest.fixture(scope="module")
def fresh_server():
    """A server no browser has visited yet: the deep link below is its very first request."""
    proc, url = start_fresh_server()
    yield url
    stop_server(proc)


def test_deep_link_first_request_draws_the_curves_and_downloads_the_curve_csv(
    fresh_server, tab, tmp_path
):
    page = tab
    page.set_viewport_size(VIEWPORT)
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(fresh_server + DEEP_LINK)
    wait_idle(page, TIMEOUT_MS)
    page.locator("[data-testid='stMetric']").first.wait_for()
    r = engine.serve_load("Llama-3.1-8B", "H100", rate=5.0, **RUN)
    assert metric(page, "TTFT p90") == fmt(r["ttft_ms_p90"] * 1e-3, "s")
    title = page.locator(".gtitle", has_text="Time to first token")
    chart = page.locator(".js-plotly-plot").filter(has=title).first
    chart.wait_for()
    # drawn first from the fast path, then again with the simulated points and the max rate
    chart.locator(".legendtext", has_text="max rate").first.wait_for()
    legend = " | ".join(chart.locator(".legendtext").all_text_contents())
    assert "SLO p90 ≤ 2 s" in legend and "max rate" in legend and "saturation" in legend
    assert chart.locator("path.js-line").count() >= 3  # the p50, p90 and p99 curves drawn
    # the tables and their CSVs wait in an expander, drawn when it opens
    page.get_by_text("Tables: the curve, the simulated rates and the search").click()
    with page.expect_download() as info:
        page.get_by_role("button", name="Download the curve CSV").click()
    target = tmp_path / "curve.csv"
    info.value.save_as(target)
    df = pd.read_csv(target)
    top = df["saturation_rate_per_s"].iloc[0]
    grid = engine.load_grid(
        ["Llama-3.1-8B"],
        ["H100"],
        rates=df["rate_per_s"].tolist(),
        input_tokens=512,
        output_tokens=128,
        profile="tutorial",
    )
    steady = df["stable"].to_numpy(dtype=bool)
    assert steady.any() and not steady.all()
    assert df.loc[steady, "ttft_ms_p99"].to_numpy() == pytest.approx(
        grid.loc[steady, "ttft_ms_p99"].to_numpy()
    )
    assert df.loc[~steady, "ttft_ms_p99"].isna().all()  # past saturation: empty, not inf
    assert df["rate_per_s"].max() == pytest.approx(1.1 * top)  # the sweep runs past saturation
    assert set(df["error_band_pct"]) == {engine.error_band(engine.get_profile("tutorial")).pct}
    assert page.locator("[data-testid='stException']").count() == 0
    assert "Serving under load" in page.locator("[data-testid='stSidebar']").inner_text()
