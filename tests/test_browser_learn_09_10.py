# ruff: noqa: RUF001 (Chinese text: full-width punctuation is right there)
"""Real-browser tests of lessons 09 and 10: each deep link, in English and in 中文, as the first
request of a fresh browser session on a fresh server; the chart drawn, no exception, the
chapter's figure and ours on the page, and no English words left in the Chinese main text
beyond names and units (tests/english_scan.py)."""

from __future__ import annotations

import pytest

from tests.conftest import start_fresh_server, stop_server, wait_idle
from tests.english_scan import catalogue_names, english_words

pytestmark = pytest.mark.browser
TITLES = {
    ("9", "en"): "Lesson 9: Where to Invest: Sensitivity Analysis",
    ("9", "zh"): "第 9 课：钱该花在哪里：敏感度分析",
    ("10", "en"): "Lesson 10: GPU vs. Wafer-Scale",
    ("10", "zh"): "第 10 课：GPU 与晶圆级芯片",
}
FIGURES = {  # the chapter's figure and ours, as the page writes them
    "9": ("−0.88", "-0.998"),
    "10": ("1.2 TB/s", "292 ms"),
}


@pytest.fixture(scope="module")
def fresh_server():
    proc, url = start_fresh_server()
    yield url
    stop_server(proc)


@pytest.mark.parametrize(("number", "lang"), list(TITLES))
def test_the_lesson_opens_from_its_deep_link(fresh_server, tab, number, lang):
    page = tab
    query = f"lesson={number}" + ("&lang=zh" if lang == "zh" else "")
    page.goto(f"{fresh_server}/learn?{query}")
    wait_idle(page, timeout_ms=180_000)  # a fresh server's first request imports everything
    page.locator(".js-plotly-plot").first.wait_for(timeout=90_000)
    assert page.locator("h1").first.inner_text() == TITLES[number, lang]
    assert page.locator("[data-testid='stException']").count() == 0
    main = page.locator("[data-testid='stMain']")
    for figure in FIGURES[number]:  # the figures render after the first chart: wait for each
        main.filter(has_text=figure).wait_for(timeout=60_000)
    text = main.inner_text()
    for figure in FIGURES[number]:
        assert figure in text, figure
    if lang == "zh":
        share = text.split("🔗")[0]  # the share box's URL and the footer's source are ids
        left = english_words(share, catalogue_names())
        assert not left, left
