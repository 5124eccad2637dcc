"""What follows the user from page to page (ui/links/state.py `publish`), in AppTest.

A value the user set on one page is where the next page starts; a page's own default is never
another page's. Solve, Sweep and Compare start at the tutorial's profile and assumptions (the
tutorial's whole-model view); /decode, /load and /plan start at the calibrated profile. Opening
Solve first once turned the serving pages to the tutorial's profile, with its efficiency and
per-layer overhead as overrides on /decode, though the user had chosen nothing.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import ROOT


def open_page(page: str, at: AppTest | None = None) -> AppTest:
    """`page` as the sidebar's page link opens it (no query string), in `at`'s session if
    given (a user going on from the page `at` shows), else in a new one."""
    at = at or AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params.clear()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def link(at: AppTest) -> dict[str, str]:
    """The page's link as the address bar holds it (one value per name)."""
    return {k: v if isinstance(v, str) else v[-1] for k, v in at.query_params.items()}


# (page opened first, untouched; page opened next): before, 32 of the 90 ordered pairs of pages
# changed the second page, e.g. Solve -> Train planned in fp16 (Train's default: bf16) with the
# tutorial's efficiency 0.5 and 10 µs per layer as overrides, and /load -> Solve left ResNet-50
PAIRS = [("solve", "decode"), ("solve", "load"), ("solve", "plan"), ("sweep", "train")]
PAIRS += [("train", "load"), ("load", "solve"), ("decode", "compare")]


@pytest.mark.parametrize(("first", "then"), PAIRS)
def test_a_pages_defaults_do_not_become_the_next_pages(first, then):
    fresh = link(open_page(then))
    assert link(open_page(then, open_page(first))) == fresh


def test_the_serving_pages_start_at_the_calibrated_profile():
    for page in ("decode", "load", "plan"):
        assert link(open_page(page))["profile"] == engine.DEFAULT_PROFILE  # trtllm-1.0


def test_a_value_the_user_sets_follows_even_when_set_back_to_the_pages_default():
    at = open_page("solve")
    at.selectbox(key="solve:model").set_value("Llama-3.1-8B").run()
    at = open_page("load", at)  # /load's own default is Llama-3.1-70B
    assert at.selectbox(key="load:model").value == "Llama-3.1-8B"
    # on /load the user picks 70B, then its own default again: what the user holds follows
    at.selectbox(key="load:model").set_value("Llama-3.1-405B").run()
    at.selectbox(key="load:model").set_value("Llama-3.1-70B").run()
    at = open_page("decode", at)  # /decode's own default is Llama-3.1-8B
    assert at.selectbox(key="decode:model").value == "Llama-3.1-70B"
    assert link(at)["model"] == "Llama-3.1-70B"
