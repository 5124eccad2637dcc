"""Real-browser tests of the LLM decode page: headless Chromium against `streamlit run app.py`.
Expected numbers come from the engine, formatted as the page does."""

from __future__ import annotations

import pandas as pd
import pytest

import engine
from tests.conftest import metric, start_server, stop_server, wait_idle
from ui.format import fmt

pytestmark = pytest.mark.browser
REFERENCE = "/decode?model=Llama-3.1-8B&hardware=A100&batch=1&context=4096"
VIEWPORT = {"width": 1400, "height": 2400}
TIMEOUT_MS = 90_000  # per action: these 2-core machines run other test suites alongside


def open_page(owner, url: str, **options):
    """A page of `owner` (a browser or a context) at `url`, with the script run finished."""
    page = owner.new_page(**options)
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url)
    wait_idle(page, TIMEOUT_MS)
    page.locator("[data-testid='stMetric']").first.wait_for()  # the main area is drawn
    return page


@pytest.fixture(scope="module")
def fresh_server():
    """A server no browser has visited yet: the deep link below is its very first request."""
    proc, url = start_server()
    yield url
    stop_server(proc)


def test_deep_link_as_first_request_shows_the_engines_tpot(fresh_server, chromium):
    r = engine.decode("Llama-3.1-8B", "A100", 1, 4096, prompt=1024)
    context = chromium.new_context(viewport=VIEWPORT)
    page = open_page(context, fresh_server + REFERENCE)
    assert metric(page, "TPOT") == fmt(r.tpot_s, "s") == "8.47 ms"  # 8.4747 ms
    assert metric(page, "Decode bottleneck") == "memory"
    assert metric(page, "Prefill bottleneck") == r.prefill.bottleneck
    assert metric(page, "Max batch at this context") == f"{r.max_batch_at_context:,}"
    sidebar = page.locator("[data-testid='stSidebar']").inner_text()
    assert "Overview" in sidebar and "LLM decode" in sidebar  # the page's own setup ran
    title = page.locator(".gtitle", has_text="Roofline")
    chart = page.locator(".js-plotly-plot").filter(has=title).first
    chart.wait_for()
    legend = " | ".join(chart.locator(".legendtext").all_text_contents())
    assert "Attainable" in legend and "Achieved" in legend and "Fixed-overhead gap" in legend
    notes = " ".join(chart.locator(".annotation-text").all_text_contents())
    assert "prefill" in notes and "decode" in notes
    assert page.locator("[data-testid='stException']").count() == 0
    context.close()


def test_edited_scenario_link_reproduces_in_a_new_browser_context(live_server, chromium):
    first = chromium.new_context(viewport=VIEWPORT)
    page = open_page(first, live_server + "/decode")
    page.get_by_role("combobox", name="Model (decoder LLMs)").click()
    page.get_by_role("option", name="Mistral-7B-v0.1").click()
    wait_idle(page, TIMEOUT_MS)
    box = page.get_by_label("Context (tokens per sequence)")
    box.fill("8192")
    box.press("Enter")
    wait_idle(page, TIMEOUT_MS)
    page.wait_for_function(
        "() => location.search.includes('model=Mistral-7B') && "
        "location.search.includes('context=8192')",
        timeout=TIMEOUT_MS,
    )
    page.get_by_text("Share this scenario").click()
    link = page.locator("[data-testid='stCode'] code").first.inner_text().strip()
    assert link.startswith(live_server + "/decode?") and "context=8192" in link
    tpot = metric(page, "TPOT")
    first.close()

    r = engine.decode("Mistral-7B", "A100", 1, 8192, prompt=1024)
    assert tpot == fmt(r.tpot_s, "s")
    second = chromium.new_context(viewport=VIEWPORT)
    again = open_page(second, link)
    assert metric(again, "TPOT") == tpot
    assert metric(again, "Decode bottleneck") == r.decode.bottleneck
    model = again.get_by_role("combobox", name="Model (decoder LLMs)")
    assert model.input_value() == "Mistral-7B-v0.1"
    assert again.get_by_label("Context (tokens per sequence)").input_value() == "8192"
    second.close()


def test_csv_download_parses_and_matches_the_engine(live_server, chromium, tmp_path):
    page = open_page(chromium, live_server + REFERENCE, accept_downloads=True, viewport=VIEWPORT)
    with page.expect_download() as info:
        page.get_by_role("button", name="Download CSV").first.click()
    target = tmp_path / "decode.csv"
    info.value.save_as(target)
    df = pd.read_csv(target)
    assert len(df) == 9 * 4  # batches 1..256 (powers of two) × contexts 1k, 4k, 16k, 64k
    assert {"tpot_ms", "aggregate_tokens_per_s", "kv_cache_bytes", "ttft_ms"} <= set(df.columns)
    assert {"compute_efficiency_fraction", "layer_overhead_us", "dispatch_overhead_ms"} <= set(
        df.columns
    )
    row = df[(df["context_tokens"] == 4096) & (df["batch_size"] == 1)].iloc[0]
    r = engine.decode("Llama-3.1-8B", "A100", 1, 4096, prompt=1024)
    assert row["tpot_ms"] == pytest.approx(r.tpot_s * 1e3)
    assert row["kv_cache_bytes"] == r.kv_cache_bytes == 536_870_912
    assert row["decode_bottleneck"] == "memory" and row["model"] == "Llama-3.1-8B"
    page.close()
