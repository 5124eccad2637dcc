"""Real-browser tests of the serving page: headless Chromium against `streamlit run app.py`.
Expected numbers come from the engine, formatted as the page does."""

from __future__ import annotations

import pandas as pd
import pytest

import engine
from tests.conftest import metric, open_section, start_fresh_server, stop_server, wait_idle
from ui.words.format import fmt

pytestmark = pytest.mark.browser
MUST_SHOW = "/decode?model=Llama-3.1-70B&hardware=H100&tp=2&input_tokens=8192&output_tokens=256"
VIEWPORT = {"width": 1400, "height": 2400}
TIMEOUT_MS = 90_000  # per action: these 2-core machines run other test suites alongside
# The operator points of every chart on the page: (trace name, operator names) per trace.
OPERATOR_TRACES = """() => [...document.querySelectorAll('.js-plotly-plot')]
    .flatMap(gd => (gd.data || []).filter(t => (t.name || '').startsWith('Operators'))
    .map(t => [t.name, [...t.text]]))"""


# A chart's legend entries that run past its left or right edge, or that Plotly cut short.
LEGEND_NOT_WHOLE = """(plot) => { const box = plot.getBoundingClientRect();
    return [...plot.querySelectorAll('.legendtext')].filter(t => {
        const r = t.getBoundingClientRect();
        return r.width > 0 && (r.right > box.right + 1 || r.left < box.left - 1
            || t.textContent.endsWith('…'));
    }).map(t => t.textContent); }"""


def open_page(tab, url: str, viewport: dict | None = None):
    """The worker's tab (tests/conftest.py `tab`) at `url`, with the script run finished."""
    page = tab
    if viewport:
        page.set_viewport_size(viewport)
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url)
    wait_idle(page, TIMEOUT_MS)
    page.locator("[data-testid='stMetric']").first.wait_for()  # the main area is drawn
    return page


@pytest.fixture(scope="module")
def fresh_server():
    """A server no browser has visited yet: the deep link below is its very first request."""
    proc, url = start_fresh_server()
    yield url
    stop_server(proc)


def test_deep_link_as_first_request_fits_and_shows_operator_points(fresh_server, tab):
    r = engine.serve("Llama-3.1-70B", "H100", tp=2, input_tokens=8192, output_tokens=256)
    assert r["fits_in_memory"]
    page = open_page(tab, fresh_server + MUST_SHOW, VIEWPORT)
    assert metric(page, "Fits in memory") == "yes"
    verdict = page.locator("[data-testid='stAlertContentSuccess']").first.inner_text()
    verdict = verdict.splitlines()[-1]  # after the icon
    assert verdict.startswith("Fits: ") and fmt(r["memory_per_device_bytes"], "B") in verdict
    assert metric(page, "TPOT") == fmt(r["tpot_ms"] * 1e-3, "s")
    sidebar = page.locator("[data-testid='stSidebar']").inner_text()
    assert "Overview" in sidebar and "LLM decode" in sidebar  # the page's own setup ran
    title = page.locator(".gtitle", has_text="Roofline per operator")
    chart = page.locator(".js-plotly-plot").filter(has=title).first
    chart.wait_for()
    legend = " | ".join(chart.locator(".legendtext").all_text_contents())
    assert "Operators: prefill (TTFT)" in legend and "Operators: decode step (TPOT)" in legend
    traces = dict(page.evaluate(OPERATOR_TRACES))
    for phase in ("prefill (TTFT)", "decode step (TPOT)"):
        names = traces[f"Operators: {phase}"]
        assert {"qkv_projection", "attention", "mlp", "lm_head"} <= set(names)
    assert chart.locator(".point").count() >= 14  # 7 operators per phase, drawn as markers
    assert page.locator("[data-testid='stException']").count() == 0
    # on a phone, the memory chart's legend is whole: no entry past the chart's edge or cut
    # short with an ellipsis (the usable line's ran 60 px past it; the max batch's was cut)
    page.set_viewport_size({"width": 390, "height": 2400})
    open_section(page, "Curves against batch and input tokens", TIMEOUT_MS)
    usable = page.locator(".legendtext", has_text="runtime")
    usable.first.wait_for()
    memory = page.locator(".js-plotly-plot").filter(has=usable).first
    assert page.evaluate(LEGEND_NOT_WHOLE, memory.element_handle()) == []


def test_one_device_says_it_does_not_fit(fresh_server, tab):
    page = open_page(tab, fresh_server + MUST_SHOW.replace("tp=2", "tp=1"))
    assert metric(page, "Fits in memory") == "NO"
    error = page.locator("[data-testid='stAlertContentError']").first.inner_text()
    error = error.splitlines()[-1]  # after the icon
    assert error.startswith("Does not fit: ") and "hypothetical" in error


def test_operators_csv_download_parses_and_sums_to_the_step_times(fresh_server, tab, tmp_path):
    url = fresh_server + MUST_SHOW + "&profile=trtllm"
    page = open_page(tab, url, VIEWPORT)
    open_section(page, "Operators (table, CSV)", TIMEOUT_MS)  # drawn only while open
    button = page.get_by_role("button", name="Download operators CSV")
    button.wait_for(timeout=TIMEOUT_MS)
    with page.expect_download(timeout=TIMEOUT_MS) as info:
        button.click()
    target = tmp_path / "operators.csv"
    info.value.save_as(target)
    df = pd.read_csv(target)
    r = engine.serve(
        "Llama-3.1-70B", "H100", tp=2, input_tokens=8192, output_tokens=256, profile="trtllm"
    )
    assert set(df["profile"]) == {"trtllm"} and set(df["phase"]) == {"prefill", "decode"}
    totals = df.groupby("phase")["total_time_ms"].sum()
    assert totals["prefill"] == pytest.approx(r["ttft_ms"], rel=1e-9)
    assert totals["decode"] == pytest.approx(r["tpot_ms"], rel=1e-9)
    assert {"flop_per_op", "bytes_per_op", "compute_efficiency_fraction"} <= set(df.columns)
