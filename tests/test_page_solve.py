"""AppTest of the overview and the single-solve page: defaults, widgets, share links, warnings."""

import json
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import engine
from ui.common import num

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_resource.clear()
    st.cache_data.clear()


def solve_page(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/solve.py")
    at.query_params.update(query or {})
    return at.run()


def param(at: AppTest, key: str) -> str:
    """The URL's value for `key` after the run (AppTest keeps lists for what the page wrote)."""
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_overview_runs_and_links_every_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert "Roofline Explorer" in at.title[0].value


def test_default_is_the_reference_case():
    at = solve_page()
    assert not at.exception
    m = metrics(at)
    assert m["Bottleneck"] == "memory" and m["Latency"] == "0.543 ms"
    assert m["MFU (% of peak)"] == "2.4%"
    assert m["Arithmetic intensity (FLOP/byte)"] == "72.8"
    assert not at.warning


def test_query_string_sets_the_widgets_and_the_numbers():
    at = solve_page(
        {
            "model": "llama-3.1-8b",
            "hardware": "h100",
            "batch": "16",
            "precision": "fp8",
            "efficiency": "0.7",
            "flop_convention": "mac2",
        }
    )
    assert not at.exception and not at.warning
    assert at.selectbox(key="solve:model").value == "Llama-3.1-8B"
    assert at.selectbox(key="solve:hardware").value == "H100"
    assert at.number_input(key="solve:batch").value == 16
    assert at.number_input(key="solve:efficiency").value == pytest.approx(0.7)
    expected = engine.solve(
        "Llama-3.1-8B", "H100", 16, "fp8", efficiency=0.7, flop_convention="mac2"
    )
    assert metrics(at)["Latency"] == f"{num(expected.latency_s * 1e3, 3)} ms"
    assert param(at, "model") == "Llama-3.1-8B" and param(at, "batch") == "16"


def test_changing_widgets_changes_the_result_and_the_url():
    at = solve_page()
    at.number_input(key="solve:batch").set_value(64).run()
    expected = engine.solve("ResNet-50", "A100", 64)
    assert metrics(at)["Bottleneck"] == expected.bottleneck == "compute"
    assert param(at, "batch") == "64"
    at.radio(key="solve:flop_convention").set_value("mac2").run()
    assert param(at, "flop_convention") == "mac2"
    doubled = engine.solve("ResNet-50", "A100", 64, flop_convention="mac2")
    assert metrics(at)["Latency"] == f"{num(doubled.latency_s * 1e3, 3)} ms"


def test_dispatch_override_is_applied_and_recorded():
    at = solve_page({"dispatch_overhead_ms": "0"})
    expected = engine.solve("ResNet-50", "A100", 1, dispatch_overhead_ms=0)
    assert metrics(at)["Latency"] == f"{num(expected.latency_s * 1e3, 3)} ms"
    assert param(at, "dispatch_overhead_ms") == "0"


@pytest.mark.parametrize(
    "query, fragment",
    [
        ({"batch": "abc"}, "batch"),
        ({"model": "NoSuchNet"}, "unknown model"),
        ({"hardware": "<script>alert(1)</script>"}, "hardware"),
        ({"efficiency": "nan"}, "efficiency"),
        ({"efficiency": "7"}, "efficiency"),
        ({"precision": "fp12"}, "precision"),
        ({"frobnicate": "1"}, "frobnicate"),
    ],
)
def test_invalid_query_warns_and_falls_back(query, fragment):
    at = solve_page(query)
    assert not at.exception
    text = " ".join(w.value for w in at.warning)
    assert fragment in text
    assert metrics(at)["Latency"] == "0.543 ms"  # the rest of the page uses the defaults


def test_precision_fallback_is_a_visible_warning():
    at = solve_page({"hardware": "A100", "precision": "fp8"})
    assert any("no fp8 peak" in w.value for w in at.warning)


def test_custom_accelerator_from_the_link_is_usable():
    at = solve_page(
        {
            "hardware": "Custom-HW",
            "custom_hw": "name=Lab chip;fp16=100 TFLOP/s;"
            "bandwidth=1 TB/s;capacity=16 GiB;dispatch=0.01 ms;tdp=100 W",
        }
    )
    assert not at.exception and not at.warning
    assert at.selectbox(key="solve:hardware").value == "Custom-HW"
    assert "Lab chip" in at.title[0].value
    assert param(at, "hardware") == "Custom-HW"


def test_bad_custom_accelerator_is_refused_with_the_field_named():
    at = solve_page(
        {
            "custom_hw": "name=X;fp16=100 TFLOP/s;bandwidth=3.35 TB/z;capacity=1 GiB;"
            "dispatch=0 ms;tdp=1 W"
        }
    )
    assert not at.exception
    assert any("custom_hw" in w.value and "memory_bandwidth" in w.value for w in at.warning)


def test_chart_is_a_log_log_roofline_with_the_gap():
    at = solve_page()
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    roof = next(s for s in specs if s["layout"]["title"]["text"].startswith("Roofline"))
    names = [t["name"] for t in roof["data"]]
    assert "Fixed-overhead gap" in names and "Achieved (with overhead)" in names
    assert roof["layout"]["xaxis"]["type"] == "log"
