"""Real-browser tests of the custom accelerator editor and inert chip names (headless Chromium).

Typing `3.2 TBps` (a datasheet spelling) is accepted; typing `3.2 TBs` shows the error with the
right spelling in the main area, even with the editor collapsed, and the page keeps the last
valid custom chip (not A100). A chip name with a markdown link and bare URLs renders as text.
"""

from __future__ import annotations

from urllib.parse import parse_qs, quote, urlsplit

import pytest

from tests.conftest import wait_idle, wait_until

pytestmark = pytest.mark.browser
CHIP = "name=Lab chip;fp16=400 TFLOP/s;fp32=50 TFLOP/s;bandwidth=1.5 TB/s;capacity=64 GiB"
CHIP += ";dispatch=0.01 ms;tdp=350 W"
MAIN = "[data-testid='stMain']"


def solve(base: str, chip: str) -> str:
    return f"{base}/solve?hardware=Custom-HW&custom_hw={quote(chip)}"


def bandwidth_field(page):
    sidebar = page.locator("[data-testid='stSidebar']")
    return sidebar.get_by_label("Memory bandwidth")


def chip_in_link(page) -> str:
    return parse_qs(urlsplit(page.url).query)["custom_hw"][0]


def type_into(page, field, text: str) -> None:
    field.fill(text)
    field.press("Enter")
    page.wait_for_timeout(300)
    wait_idle(page)


def test_a_datasheet_spelling_is_accepted_and_a_typo_keeps_the_last_valid_chip(live_server, tab):
    page = tab
    page.set_viewport_size({"width": 1400, "height": 1600})
    page.goto(solve(live_server, CHIP))
    wait_idle(page)
    title = page.locator(f"{MAIN} h1").first
    assert "Lab chip" in title.inner_text()

    type_into(page, bandwidth_field(page), "3.2 TBps")  # accepted as 3.2 TB/s
    wait_until(page, lambda: "bandwidth=3.2 TBps" in chip_in_link(page))
    assert not page.locator(f"{MAIN} [data-testid='stAlertContentError']").count()
    assert "bandwidth=3.2 TBps" in chip_in_link(page)
    assert "Lab chip" in title.inner_text()

    type_into(page, bandwidth_field(page), "3.2 TBs")  # a typo
    error = page.locator(f"{MAIN} [data-testid='stAlertContentError']").first
    error.wait_for()
    text = error.inner_text()
    assert "did you mean '3.2 TB/s'" in text and "Still using the last valid one" in text
    assert "Lab chip" in title.inner_text()  # not switched to A100
    accelerator = page.get_by_role("combobox", name="Accelerator")
    assert (
        "Lab chip" in accelerator.input_value()
        or "Lab chip"
        in page.locator("[data-testid='stSidebar'] [data-testid='stSelectbox']").nth(1).inner_text()
    )
    assert "bandwidth=3.2 TBps" in chip_in_link(page)  # the link keeps the last valid chip

    page.get_by_text("Custom accelerator").first.click()  # collapse the editor
    page.wait_for_timeout(300)
    assert error.is_visible()  # the error is in the main area, not in the editor


def test_a_chip_name_with_links_renders_as_text(live_server, tab):
    chip = CHIP.replace("Lab chip", "[x](http://e.example) www.e.example http://f.example")
    page = tab
    page.set_viewport_size({"width": 1400, "height": 1600})
    page.goto(solve(live_server, chip) + "&precision=fp8")  # fp8: a warning naming the chip
    wait_idle(page)
    main = page.locator(MAIN)
    assert "[x](http://e.example)" in main.inner_text().replace("\u2060", "")  # as typed
    hrefs = main.locator("a").evaluate_all("links => links.map(a => a.href)")
    outside = [h for h in hrefs if not h.startswith(live_server)]  # not the heading anchors
    assert not [h for h in outside if "e.example" in h or "f.example" in h], outside
