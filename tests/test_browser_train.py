"""Real-browser tests of the training planner: headless Chromium against `streamlit run app.py`,
whose very first request is a deep link. Expected numbers come from the engine, formatted as
the page does."""

from __future__ import annotations

import pandas as pd
import pytest

import engine
from tests.conftest import metric, start_fresh_server, stop_server, wait_idle, wait_until
from ui.words.format import fmt

pytestmark = pytest.mark.browser
QUERY = {"model": "Llama-3.1-8B", "hardware": "H100", "gpus": "16", "global_batch_size": "256"}
QUERY |= {"seq_len": "4096", "tp": "1,2,4", "pp": "1,2", "vp": "1", "micro_batch_size": "1,2"}
QUERY |= {"zero": "0,1", "recompute": "none,selective", "gpus_curve": "8,16,32"}
DEEP_LINK = "/train?" + "&".join(f"{k}={v}" for k, v in QUERY.items())
SEARCH = {"tp": [1, 2, 4], "pp": [1, 2], "cp": [1], "vp": [1], "ep": [1]}
SEARCH |= {"micro_batch_size": [1, 2], "zero": [0, 1], "recompute": ["none", "selective"]}
VIEWPORT = {"width": 1400, "height": 2400}
TIMEOUT_MS = 120_000


@pytest.fixture(scope="module")
def fresh_server():
    """A server no browser has visited yet: the deep link below is its very first request."""
    proc, url = start_fresh_server()
    yield url
    stop_server(proc)


def test_deep_link_first_request_draws_the_breakdowns_and_downloads_the_ranked_csv(
    fresh_server, tab, tmp_path
):
    page = tab
    page.set_viewport_size(VIEWPORT)
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(fresh_server + DEEP_LINK)
    wait_idle(page, TIMEOUT_MS)
    page.locator("[data-testid='stMetric']").first.wait_for()
    df = engine.train_search(
        "Llama-3.1-8B", "H100", gpus=16, global_batch_size=256, seq_len=4096, **SEARCH
    )
    wait_until(page, lambda: metric(page, "Tokens/s") == fmt(df["tokens_per_s"].iloc[0]))
    assert metric(page, "Tokens/s") == fmt(df["tokens_per_s"].iloc[0])
    title = page.locator(".gtitle", has_text="Memory per GPU")
    chart = page.locator(".js-plotly-plot").filter(has=title).first
    chart.wait_for()
    assert chart.locator(".bars path").count() >= 3  # weights, gradients, optimizer state, ...
    legend = " | ".join(chart.locator(".legendtext").all_text_contents())
    assert "usable:" in legend and "activations" in legend
    with page.expect_download() as info:
        page.get_by_role("button", name="Download the ranked configurations CSV").click()
    target = tmp_path / "ranked.csv"
    info.value.save_as(target)
    got = pd.read_csv(target)
    assert len(got) == len(df)
    assert got["tokens_per_s"].to_numpy() == pytest.approx(df["tokens_per_s"].to_numpy())
    loo = engine.get_training_profile("megatron").residuals["loo_row_mape_pct"]
    assert set(got["profile_loo_row_mape_pct"]) == {loo}
    assert got["hfu_fraction"].to_numpy() == pytest.approx(df["hfu"].to_numpy())  # unit said
    assert page.locator("[data-testid='stException']").count() == 0
