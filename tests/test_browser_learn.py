# ruff: noqa: RUF001 (Chinese text: full-width punctuation is right there)
"""Real-browser tests of the lessons: deep links as the first request to a fresh server and as
new server sessions (one tab opening link after link, as a user does), the browser's language
as the default (fresh browser contexts in Chinese), an exercise checked in the page, and the
screenshots of two lessons in each language at 1440 and 390 px
(ROOFLINE_LEARN_SCREENSHOTS=docs/screenshots/learn refreshes them)."""

from __future__ import annotations

import os

import pytest

import engine
from tests.conftest import ROOT, start_fresh_server, stop_server, wait_idle, wait_until

pytestmark = pytest.mark.browser
SHOTS = os.environ.get("ROOFLINE_LEARN_SCREENSHOTS")  # e.g. docs/screenshots/learn
SHOT_LESSONS = ("0", "2")
WIDTHS = (1440, 390) if SHOTS else (390,)  # the phone width is always checked


@pytest.fixture(scope="module")
def fresh_server():
    """A server no browser has visited yet: the first test's deep link is its first request."""
    proc, url = start_fresh_server()
    yield url
    stop_server(proc)


def _open(chromium, url: str, locale: str) -> tuple:
    """A fresh browser context in `locale`, at `url`: (context, page)."""
    context = chromium.new_context(viewport={"width": 1440, "height": 2000}, locale=locale)
    return context, _goto(context.new_page(), url)


def _goto(page, url: str, width: int = 1440):
    page.set_viewport_size({"width": width, "height": 2000})
    page.goto(url)
    wait_idle(page)
    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)  # a chart is drawn
    return page


def _main(page) -> str:
    return page.locator("[data-testid='stMain']").inner_text()


def test_a_chinese_lesson_deep_link_is_the_servers_first_request(fresh_server, tab):
    page = _goto(tab, fresh_server + "/learn?lesson=3&lang=zh")
    assert page.locator("h1").first.inner_text().startswith("第 3 课：KV 缓存")
    text = _main(page)
    assert "KV 缓存（KV cache）" in text and "教程：" in text
    # the tutorial's per-token figure and ours, numbers written as in English
    assert "131,072" in text and "131 kB" in text
    sidebar = page.locator("[data-testid='stSidebar']").inner_text()
    assert "概览" in sidebar and "课程" in sidebar
    assert "lang=zh" in page.url and "lesson=3" in page.url


@pytest.mark.parametrize("number", ["1", "4", "6", "11", "12"])  # 0, 2, 3, 5: the other tests
def test_every_lesson_deep_link_opens_in_a_fresh_session(fresh_server, tab, number):
    page = _goto(tab, f"{fresh_server}/learn?lesson={number}")
    assert page.locator("h1").first.inner_text().startswith(f"Lesson {number}:")
    assert page.locator("[data-testid='stException']").count() == 0
    assert "The tutorial's figures and ours" in _main(page)


def test_lesson_12_in_chinese_from_its_deep_link(fresh_server, tab):
    page = _goto(tab, fresh_server + "/learn?lesson=12&lang=zh")
    assert page.locator("h1").first.inner_text().startswith("第 12 课：设计空间探索")
    assert page.locator("[data-testid='stException']").count() == 0
    text = _main(page)
    # the chapter's 48 configurations, none valid on 8,192 GPUs; ours on the front
    assert "教程：" in text and "48 个中的 0 个" in text and "帕累托前沿" in text


def test_lesson_11_in_chinese_from_its_deep_link(fresh_server, tab):
    page = _goto(tab, fresh_server + "/learn?lesson=11&lang=zh")
    assert page.locator("h1").first.inner_text().startswith("第 11 课：")
    assert page.locator("[data-testid='stException']").count() == 0
    text = _main(page)
    # the full-stack audit beside the chapter's: carbon Poland ÷ Quebec 61.1 × (PUE counts)
    assert "教程：" in text and "61.1 ×" in text


@pytest.mark.parametrize(("number", "lang"), [("7", "en"), ("7", "zh"), ("8", "en"), ("8", "zh")])
def test_the_cost_lessons_open_in_both_languages(fresh_server, tab, number, lang):
    query = f"lesson={number}" + ("&lang=zh" if lang == "zh" else "")
    page = _goto(tab, f"{fresh_server}/learn?{query}")
    title = f"第 {number} 课：" if lang == "zh" else f"Lesson {number}:"
    assert page.locator("h1").first.inner_text().startswith(title)
    assert page.locator("[data-testid='stException']").count() == 0
    text = _main(page)
    assert ("教程：" if lang == "zh" else "The tutorial's figures and ours") in text
    assert ("61.1 ×" if number == "7" else "6.41 ×") in text  # ours beside the chapter's


def test_the_browsers_language_is_the_default_and_goes_into_the_link(fresh_server, chromium):
    context, page = _open(chromium, fresh_server + "/learn?lesson=5", locale="zh-CN")
    assert page.locator("h1").first.inner_text().startswith("第 5 课：量化")
    page.wait_for_function("() => location.search.includes('lang=zh')", timeout=30_000)
    _goto(page, fresh_server + "/learn?lesson=5&lang=en")  # a new session, the same browser
    assert page.locator("h1").first.inner_text().startswith("Lesson 5: Quantization")
    context.close()


def test_an_exercise_is_checked_in_the_browser(fresh_server, tab):
    page = _goto(tab, fresh_server + "/learn?lesson=0")
    field = page.get_by_label("Exercise 2: at which batch", exact=False)
    field.fill("4")
    field.press("Enter")
    wait_idle(page)
    wait_until(page, lambda: "Not yet. Hint:" in _main(page))
    assert "Not yet. Hint:" in _main(page)
    field.fill(str(engine.compute_bound_batch("ResNet-50", "H100")))
    field.press("Enter")
    wait_idle(page)
    wait_until(page, lambda: "Right: the engine gives 3." in _main(page))
    assert "Right: the engine gives 3." in _main(page)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("number", SHOT_LESSONS)
def test_lesson_screenshots(fresh_server, tab, number, lang, width):
    url = f"{fresh_server}/learn?lesson={number}" + ("&lang=zh" if lang == "zh" else "")
    page = _goto(tab, url, width=width)
    # nothing wider than the screen at 390 px: no horizontal scrolling
    overflow = page.evaluate(
        "() => document.querySelector(\"[data-testid='stMain']\").scrollWidth"
        " - document.querySelector(\"[data-testid='stMain']\").clientWidth"
    )
    assert overflow <= 1, overflow
    if SHOTS:
        out = ROOT / SHOTS
        out.mkdir(parents=True, exist_ok=True)
        # the main block scrolls inside the page: make the window as tall as its content
        tall = page.evaluate(
            "() => document.querySelector(\"[data-testid='stMain']\").scrollHeight"
        )
        page.set_viewport_size({"width": width, "height": int(tall) + 40})
        wait_idle(page)
        page.wait_for_timeout(3000)  # let the charts finish drawing at the new size
        page.screenshot(path=str(out / f"lesson{number}_{lang}_{width}.png"), full_page=True)
