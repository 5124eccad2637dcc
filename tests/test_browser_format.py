"""Real-browser checks of what people read: every metric through ui.words.format (no value with more
than 4 significant figures, no "None"/"nan" anywhere on a page), log axes labelled as numbers
(1, 10, 100, 1k: increasing, never "2 5 2 5"), and the light/dark preference of the browser
followed by the page and its charts. Headless Chromium against `streamlit run app.py`."""

from __future__ import annotations

import re

import pytest

from tests.conftest import wait_charts, wait_idle

pytestmark = pytest.mark.browser
LINKS = (
    "/",
    "/solve",
    "/solve?model=Llama-3.1-70B&hardware=H100&batch=64&precision=fp8",
    "/sweep",
    "/compare",
    "/decode",
    "/decode?model=Llama-3.1-70B&hardware=T4&batch=8&context=32768",
    "/catalogue?q=llama%2070",
)
# Exact whole counts (batch sizes, contexts) are shown in full: 131,072 tokens is not rounded.
EXACT_COUNTS = ("Max batch", "Max context", "Crossover", "Largest batch")
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
SUFFIX = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
FIGURES_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(el => ({
    font: el._fullLayout.font.color,
    ticks: Object.keys(el._fullLayout).filter(k => /^[xy]axis\\d*$/.test(k))
        .filter(k => el._fullLayout[k].type === 'log')
        .map(k => (el._fullLayout[k]._vals || []).map(v => v.text)),
}))"""


def significant(number: str) -> int:
    """Significant figures of '1,843' (4), '0.0276' (3), '12,340' (4), '7.50' (3)."""
    digits = number.replace(",", "").lstrip("-")
    if "." in digits:
        return len(digits.replace(".", "").lstrip("0"))
    return len(digits.strip("0")) or 1


def metrics(page) -> list[tuple[str, str]]:
    boxes = page.locator("[data-testid='stMetric']")
    return [
        (
            boxes.nth(i).locator("[data-testid='stMetricLabel']").inner_text(),
            boxes.nth(i).locator("[data-testid='stMetricValue']").inner_text(),
        )
        for i in range(boxes.count())
    ]


def tick_value(text: str) -> float:
    """'1k' -> 1000, '0.1' -> 0.1, '2' -> 2 (ui.words.format.tick_label's output)."""
    match = re.fullmatch(r"(\d[\d,]*(?:\.\d+)?)([kMGT]?)", text.strip())
    assert match, f"tick {text!r} does not read as a number"
    return float(match.group(1).replace(",", "")) * SUFFIX[match.group(2)]


def luminance(css: str) -> float:
    """0 (black) .. 1 (white) of an 'rgb(r, g, b)' / '#rrggbb' colour."""
    if css.startswith("#"):
        r, g, b = (int(css[i : i + 2], 16) for i in (1, 3, 5))
    else:
        r, g, b = (float(x) for x in re.findall(r"[\d.]+", css)[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


@pytest.fixture
def page(live_server, tab):
    """The worker's tab (tests/conftest.py `tab`) at 1440 × 1600 px, and the server."""
    tab.set_viewport_size({"width": 1440, "height": 1600})
    return tab, live_server


@pytest.mark.parametrize("link", LINKS)
def test_metrics_have_at_most_four_figures_and_no_page_says_none(page, link):
    browser, base = page
    browser.goto(base + link)
    wait_idle(browser)
    wait_charts(browser)
    text = browser.locator("[data-testid='stMain']").inner_text()
    assert not re.search(r"\bNone\b|\bnan\b|\bNaN\b|\binf\b", text), link
    assert browser.locator("[data-testid='stException']").count() == 0, link
    for label, value in metrics(browser):
        assert value.strip() and "None" not in value, (link, label)
        if label.startswith(EXACT_COUNTS):
            continue
        for number in NUMBER.findall(value):
            assert significant(number) <= 4, (link, label, value)
    figures = browser.evaluate(FIGURES_JS)
    assert len(figures) == browser.locator("[data-testid='stPlotlyChart']").count(), link
    for figure in figures:
        for ticks in figure["ticks"]:
            values = [tick_value(t) for t in ticks]
            assert values == sorted(set(values)), (link, ticks)  # never "2 5 2 5"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_page_and_charts_follow_the_browsers_colour_scheme(tab, live_server, scheme):
    browser = tab  # the worker's tab, set back to light for the next test (conftest `tab`)
    browser.set_viewport_size({"width": 390, "height": 1400})
    browser.emulate_media(color_scheme=scheme)  # what the page reads as the system's choice
    browser.goto(live_server + "/solve")
    wait_idle(browser)
    browser.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
    background = browser.evaluate(
        "() => getComputedStyle(document.querySelector('.stApp')).backgroundColor"
    )
    fonts = [f["font"] for f in browser.evaluate(FIGURES_JS)]
    assert (luminance(background) < 0.3) == (scheme == "dark"), background
    page_lum = luminance(background)
    assert fonts and all(abs(luminance(f) - page_lum) > 0.3 for f in fonts), (background, fonts)
