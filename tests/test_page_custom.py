"""The custom accelerator editor (ui/widgets/editors.py) and the datasheet unit spellings it
accepts.

A typo never switches the page to another chip: the last valid custom chip stays in use, the
error (with the right spelling) is in the main area, and the link keeps the valid chip. The
editor's "Use it" switch is one state for the session, so off on one page is off on all."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.catalog.units import UnitError, to_si
from ui.links import custom

ROOT = Path(__file__).resolve().parent.parent
CHIP = "name=Lab chip;fp16=400 TFLOP/s;fp32=50 TFLOP/s;bandwidth=1.5 TB/s;capacity=64 GiB"
CHIP += ";dispatch=0.01 ms;tdp=350 W"


@pytest.mark.parametrize(
    "text, unit, si",
    [
        ("3.2 TBps", "byte/s", 3.2e12),  # datasheets' "TBps"
        ("3.2 TB/s", "byte/s", 3.2e12),
        ("900 GB/s", "byte/s", 9e11),
        ("900 GBps", "byte/s", 9e11),
        ("80GB", "byte", 80e9),
        ("80 GiB", "byte", 80 * 2**30),  # 85,899,345,920 bytes
        ("989 TFLOPS", "flop/s", 989e12),
        ("1979 TOPS", "flop/s", 1979e12),  # int8 datasheet figures count operations
        ("67 TFLOP/s", "flop/s", 67e12),
        ("4.1 GFLOPs", "flop", 4.1e9),  # a count where a count is asked for
    ],
)
def test_datasheet_spellings_are_accepted(text, unit, si):
    assert to_si(text, unit) == pytest.approx(si, rel=1e-12)


@pytest.mark.parametrize(
    "text, unit, suggestion",
    [
        ("3.2 TBs", "byte/s", "'3.2 TB/s'"),
        ("2 GB/z", "byte/s", "'2 GB/s'"),
        ("80 GIB", "byte", "'80 GiB'"),
    ],
)
def test_a_near_miss_spelling_gets_a_suggestion(text, unit, suggestion):
    with pytest.raises(UnitError, match=f"did you mean {suggestion}"):
        to_si(text, unit)


def test_powers_are_still_refused():
    with pytest.raises(UnitError, match="powers"):
        to_si("9**9**9 TB/s", "byte/s")


def test_the_editor_asks_for_fp32_and_refuses_a_chip_without_it():
    assert "fp32" in [field for field, _, _ in custom.HW_FIELDS]
    values = custom.decode(CHIP.replace("fp32=50 TFLOP/s;", ""), custom.HW_FIELDS)
    with pytest.raises(ValueError, match="fp32"):
        custom.hardware_from(values)


def open_solve(query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params.update(query)
    at.switch_page("pages/solve.py").run()
    assert not at.exception
    return at


def link(at: AppTest, key: str) -> str | None:
    value = at.query_params.get(key)
    return value[-1] if isinstance(value, list) else value


def test_the_editors_stay_as_the_link_opened_them_after_a_change():
    """Closed when the link brings no spec, open when it brings one, and still so after the
    user's next change (opening by itself drew both editors' 14 fields after every first
    change: the example spec the closed editor checks counted as a linked one)."""
    at = open_solve({"model": "Llama-3.1-8B", "hardware": "H100"})
    assert not at.toggle  # closed: no editor field drawn
    for batch in (150, 9):
        at.number_input(key="solve:batch").set_value(batch).run()
        assert not at.exception and not at.toggle, batch
    assert link(at, "custom_hw") is None and link(at, "custom_model") is None
    at = open_solve({"hardware": "Custom-HW", "custom_hw": CHIP})
    assert at.toggle(key="solve:custom_hw.on").value is True
    assert "solve:custom_model.name" not in {w.key for w in at.text_input}  # no model: closed
    at.number_input(key="solve:batch").set_value(150).run()
    assert at.toggle(key="solve:custom_hw.on").value is True  # still open
    assert "Lab chip" in at.title[0].value


def test_a_typo_keeps_the_last_valid_chip_and_shows_the_error_in_the_main_area():
    at = open_solve({"hardware": "Custom-HW", "custom_hw": CHIP})
    assert "Lab chip" in at.title[0].value and not at.main.error
    at.text_input(key="solve:custom_hw.bandwidth").set_value("3.2 TBs").run()
    assert not at.exception
    assert at.selectbox(key="solve:hardware").value == "Custom-HW"  # not A100
    assert "Lab chip" in at.title[0].value
    error = at.main.error[0].value.replace("\\", "")
    assert "did you mean '3.2 TB/s'" in error and "Still using the last valid one" in error
    assert link(at, "custom_hw") == CHIP  # the link keeps the valid chip
    at.text_input(key="solve:custom_hw.bandwidth").set_value("3.2 TBps").run()
    assert not at.main.error and "bandwidth=3.2 TBps" in link(at, "custom_hw")
    at.session_state["solve:table.open"] = True  # the user opens the table of every figure
    at.run()
    bandwidth = at.dataframe[0].value.set_index(at.dataframe[0].value.columns[0])
    assert "3.2 TB/s" in bandwidth.iloc[:, 0].to_dict()["Memory bandwidth"]


def test_switching_the_chip_off_on_one_page_keeps_it_off_on_the_others():
    at = open_solve({"hardware": "Custom-HW", "custom_hw": CHIP})
    at.toggle(key="solve:custom_hw.on").set_value(False).run()
    assert at.selectbox(key="solve:hardware").value == "A100"
    assert link(at, "custom_hw") is None
    at.switch_page("pages/sweep.py").run()
    assert not at.exception
    assert at.toggle(key="sweep:custom_hw.on").value is False
    assert at.selectbox(key="sweep:hardware").value != "Custom-HW"
    assert link(at, "custom_hw") is None
    at.switch_page("pages/solve.py").run()  # and back: still off
    assert at.toggle(key="solve:custom_hw.on").value is False
    at.toggle(key="solve:custom_hw.on").set_value(True).run()
    at.switch_page("pages/compare.py").run()
    assert at.toggle(key="compare:custom_hw.on").value is True
    assert link(at, "custom_hw") == CHIP


def test_a_typo_after_switching_on_keeps_the_example_chip_and_suggests_the_spelling():
    at = open_solve({})
    assert not at.toggle  # closed and lazy: no editor field drawn until it is opened
    at.session_state["solve:custom_hw.open"] = True  # the user opens the editor
    at.run().toggle(key="solve:custom_hw.on").set_value(True).run()
    assert "My accelerator" in at.selectbox(key="solve:hardware").options  # the example is valid
    at.text_input(key="solve:custom_hw.capacity").set_value("80 GIB").run()
    error = at.main.error[0].value.replace("\\", "")
    assert "did you mean '80 GiB'" in error and "the last valid one (My accelerator)" in error
    assert "My accelerator" in at.selectbox(key="solve:hardware").options
