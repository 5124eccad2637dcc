"""The batch-sweep page (pages/sweep.py) through Streamlit's AppTest, and its batch-list
share-link parameter. Numbers are checked against engine.sweep, never hard-coded."""

import base64
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from hypothesis import given
from hypothesis import strategies as hs
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import chart_spec
from ui.links import custom
from ui.links.link_params import batches as batches_param
from ui.words.format import MISSING, fmt

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = [1, 2, 4, 8, 16, 32, 64, 128, 256]
CROSS = "Crossover batch (exact, samples)"
LISTED = "Crossover batch (first in your list)"
CHIP = "name=Test chip;fp16=400 TFLOP/s;fp32=50 TFLOP/s;bandwidth=1.5 TB/s;capacity=64 GiB"


def run(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.switch_page("pages/sweep.py").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def charts(at: AppTest) -> list[dict]:
    return [chart_spec(c) for c in at.get("plotly_chart")]


def trace(fig: dict, prefix: str) -> dict:
    return next(t for t in fig["data"] if t.get("name", "").startswith(prefix))


def arr(value) -> np.ndarray:
    """A figure array from the chart JSON: a list, or plotly's base64 typed array."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    return np.asarray(value)


def expected_crossover(*args, **kwargs) -> str:
    """The first compute-bound batch of the list, as the caption under the card shows it."""
    df = engine.sweep(*args, **kwargs)
    value = engine.crossover_batch(df)["crossover_batch"].iloc[0]
    return "first in your list: " + ("never in sweep" if pd.isna(value) else f"{int(value):,}")


def exact(model, hardware, **kw) -> str:
    value = engine.compute_bound_batch(model, hardware, **kw)
    return "never" if value is None else f"{value:,}"


def listed(at: AppTest) -> str:
    return next(c.value for c in at.caption if c.value.startswith("first in your list"))


def plain_text(elements) -> str:
    """Element text with markdown escapes removed (user text is backslash-escaped)."""
    return " ".join(e.value for e in elements).replace("\\", "")


def test_default_run_shows_crossover_charts_and_table_from_the_engine():
    at = run()
    assert listed(at) == expected_crossover("ResNet-50", "A100", DEFAULT, ["fp16"])
    # the engine's exact crossover: ResNet-50 on A100 at fp16 turns compute-bound at batch 2
    assert metric(at, CROSS) == exact("ResNet-50", "A100") == "2"
    figs = charts(at)
    assert len(figs) == 4
    titles = [f["layout"]["title"]["text"] for f in figs]
    assert titles[0] == "Throughput" and titles[1] == "Latency per batch"
    assert titles[2].startswith("Arithmetic intensity vs batch")
    assert titles[3].startswith("Roofline trajectory")
    table = at.dataframe[0].value
    expected = engine.marginal_gain(
        engine.sweep(models="ResNet-50", hardware="A100", batch_sizes=DEFAULT, precisions=["fp16"])
    )
    assert list(table["Batch size"]) == DEFAULT
    gain = "Marginal throughput gain vs previous batch"
    assert table[gain].iloc[0] == MISSING  # no previous batch: "—", never "None"
    assert list(table[gain].iloc[1:]) == [
        fmt(v, "%") for v in expected["marginal_throughput_gain_pct"].iloc[1:]
    ]
    assert at.query_params["batches"] == "1,2,4,8,16,32,64,128,256"
    assert at.download_button(key="sweep_csv") is not None


def test_intensity_chart_marks_the_engines_ridges_and_crossover():
    at = run({"batches": "1..64"})
    df = engine.sweep(
        models="ResNet-50", hardware="A100", batch_sizes=list(range(1, 65)), precisions=["fp16"]
    )
    cross = int(engine.crossover_batch(df)["crossover_batch"].iloc[0])
    fig = charts(at)[2]
    ridge_eff = trace(fig, "Effective ridge")["y"]
    assert ridge_eff == pytest.approx([df["effective_ridge_flop_per_byte"].iloc[0]] * 2)
    assert trace(fig, "Theoretical ridge")["y"][0] == pytest.approx(df["ridge_flop_per_byte"][0])
    assert trace(fig, "Crossover: batch")["x"] == [cross]
    assert listed(at) == f"first in your list: {cross}"


def test_changing_the_accelerator_changes_the_numbers():
    at = run()
    before = metric(at, "Best throughput (images/s)")
    at.selectbox(key="sweep:hardware").set_value("H100").run()
    assert not at.exception
    df = engine.sweep(models="ResNet-50", hardware="H100", batch_sizes=DEFAULT, precisions=["fp16"])
    assert metric(at, "Best throughput (images/s)") != before
    best = fmt(df["throughput_per_s"].max())  # 97,244 images/s -> 4 figures: 97,240
    assert metric(at, "Best throughput (images/s)") == best
    assert listed(at) == expected_crossover("ResNet-50", "H100", DEFAULT, ["fp16"])
    assert metric(at, CROSS) == exact("ResNet-50", "H100")
    assert at.query_params["hardware"] == "H100"


def test_query_string_sets_the_widgets_and_explains_a_missing_crossover():
    at = run({"model": "Llama-3.1-8B", "hardware": "H100", "batches": "1,2,4", "view": "tutorial"})
    assert at.selectbox(key="sweep:model").value == "Llama-3.1-8B"
    assert at.selectbox(key="sweep:hardware").value == "H100"
    assert at.text_input(key="sweep:batches").value == "1,2,4"
    assert list(at.dataframe[0].value["Batch size"]) == [1, 2, 4]
    assert listed(at) == expected_crossover("Llama-3.1-8B", "H100", [1, 2, 4])
    assert listed(at) == "first in your list: never in sweep"
    assert metric(at, CROSS) == exact("Llama-3.1-8B", "H100") == "never"
    info = " ".join(i.value for i in at.info)
    assert "Never compute-bound within this sweep" in info and "never crosses" in info
    assert at.query_params["view"] == "tutorial"


def test_a_crossover_beyond_the_list_is_predicted_at_the_engines_batch():
    at = run({"batches": "1"})
    first = engine.compute_bound_batch("ResNet-50", "A100")
    assert listed(at) == "first in your list: never in sweep"
    assert metric(at, CROSS) == f"{first:,}"
    assert f"batch ≥ {first:,} would cross it" in " ".join(i.value for i in at.info)


def test_invalid_query_string_warns_and_uses_defaults():
    at = run({"batches": "abc", "hardware": "NOPE,A100", "efficiency": "nan", "budget_ms": "-3"})
    text = plain_text(at.warning)
    for name in ("batches", "hardware", "efficiency", "budget_ms"):
        assert f"ignored '{name}'" in text
    assert at.selectbox(key="sweep:hardware").value == "A100"
    assert list(at.dataframe[0].value["Batch size"]) == DEFAULT
    assert listed(at) == expected_crossover("ResNet-50", "A100", DEFAULT, ["fp16"])


def test_typed_batch_text_that_does_not_parse_keeps_the_last_valid_list():
    at = run()
    at.text_input(key="sweep:batches").set_value("1,2,x").run()
    assert not at.exception
    assert "'x' is not a number" in at.error[0].value
    assert len(at.dataframe[0].value) == len(DEFAULT)  # the default
    at.text_input(key="sweep:batches").set_value("3..7").run()
    assert not at.error and list(at.dataframe[0].value["Batch size"]) == [
        3,
        4,
        5,
        6,
        7,
    ]
    at.text_input(key="sweep:batches").set_value("1..5000").run()
    assert "more than 4096" in at.error[0].value
    assert list(at.dataframe[0].value["Batch size"]) == [3, 4, 5, 6, 7]
    assert at.query_params["batches"] == "3..7"


def test_generator_buttons_make_a_2000_point_sweep_and_powers_of_two():
    at = run()
    at.number_input(key="sweep:batches.up_to").set_value(2000).run()
    at.button(key="sweep:batches.all").click().run()
    assert not at.exception
    assert at.text_input(key="sweep:batches").value == "1..2000"
    assert len(at.dataframe[0].value) == 2000
    assert at.query_params["batches"] == "1..2000"
    roofline = charts(at)[3]
    assert len(arr(trace(roofline, "Achieved")["x"])) == 2000
    assert len(roofline["layout"]["annotations"]) == 1  # 2,000 points: only the largest gap
    at.number_input(key="sweep:batches.up_to").set_value(1000).run()
    at.button(key="sweep:batches.pow2").click().run()
    assert list(at.dataframe[0].value["Batch size"]) == [2**k for k in range(10)]


def test_latency_budget_answers_largest_batch_and_best_throughput():
    df = engine.sweep(models="ResNet-50", hardware="A100", batch_sizes=DEFAULT, precisions=["fp16"])
    budget = float(df["latency_ms"].iloc[5]) * 1.01  # batch 32 fits, 64 does not
    at = run({"budget_ms": f"{budget:.6g}"})
    ok = df[df["latency_ms"] <= budget]
    labels = [m.label for m in at.metric]
    largest = next(m for m in at.metric if m.label.startswith("Largest batch within"))
    assert largest.value == f"{int(ok['batch_size'].max()):,}" == "32"
    assert any(label.startswith("Best throughput within") for label in labels)
    budget_line = trace(charts(at)[1], "Latency budget")
    assert budget_line["y"][0] == pytest.approx(float(f"{budget:.6g}"))
    at.number_input(key="sweep:budget_ms").set_value(0.01).run()
    assert any("No batch meets 10 µs" in w.value for w in at.warning)  # 0.01 ms


def test_csv_download_is_the_engines_sweep_with_marginal_gain(monkeypatch):
    captured = {}
    original = st.download_button

    def spy(label, data, **kwargs):
        captured["data"] = data
        return original(label, data, **kwargs)

    monkeypatch.setattr(st, "download_button", spy)
    run({"batches": "1..16", "efficiency": "0.6"})
    data = captured["data"]
    csv = pd.read_csv(io.StringIO(data() if callable(data) else data))
    expected = engine.marginal_gain(
        engine.sweep(
            models="ResNet-50",
            hardware="A100",
            batch_sizes=list(range(1, 17)),
            precisions=["fp16"],
            efficiency=0.6,
        )
    )
    assert list(csv["batch_size"]) == list(range(1, 17))
    assert list(csv["latency_ms"]) == pytest.approx(list(expected["latency_ms"]))
    assert "marginal_throughput_gain_pct" in csv and "compute_efficiency_fraction" in csv
    assert set(csv["compute_efficiency_fraction"]) == {0.6}


def test_custom_accelerator_from_the_link_is_swept():
    chip = CHIP + ";dispatch=0.01 ms;tdp=350 W"
    at = run({"custom_hw": chip, "hardware": "Custom-HW"})
    spec = custom.hardware_from(custom.decode(chip, custom.HW_FIELDS))
    assert "Test chip" in at.title[0].value
    assert listed(at) == expected_crossover("ResNet-50", spec, DEFAULT, ["fp16"])
    assert metric(at, CROSS) == exact("ResNet-50", spec)


@given(hs.lists(hs.integers(1, 1_000_000), min_size=1, max_size=300))
def test_batch_list_parameter_round_trips(values):
    param = batches_param(max_items=4096)
    text = param.write(sorted(set(values)))
    assert param.read(text) == sorted(set(values))
    assert len(text) <= len(",".join(map(str, sorted(set(values)))))


def test_batch_list_parameter_reads_ranges_compactly():
    param = batches_param(max_items=4096)
    assert param.read("1..2000") == list(range(1, 2001))
    assert param.read("8..32:8, 1") == [1, 8, 16, 24, 32]
    assert param.write(list(range(1, 2001))) == "1..2000"
    assert param.write([1, 2, 4, 8, 16]) == "1,2,4,8,16"
    for bad, why in [("5..1", "runs backwards"), ("1..9000", "more than 4096"), ("0", "from 1 to")]:
        with pytest.raises(ValueError, match=why):
            param.read(bad)


def test_user_text_in_names_is_shown_inert_not_as_markdown():
    chip = CHIP.replace("Test chip", "Chip [x](http://e.example)")
    at = run({"custom_hw": chip + ";dispatch=0.01 ms;tdp=350 W", "hardware": "Custom-HW"})
    assert "Chip \\[x\\]\\(http\u2060://e.example\\)" in at.title[0].value


def test_the_table_shows_each_batchs_regime_beside_its_roofline_bound():
    at = run()
    table = at.dataframe[0].value
    df = engine.sweep(models="ResNet-50", hardware="A100", batch_sizes=DEFAULT, precisions=["fp16"])
    assert list(table["Regime"]) == list(df["regime"].astype(str))
    # batch 1: fixed overhead 0.515 ms is 94.9 % of 0.543 ms -> overhead-bound; roofline: memory
    assert (table["Regime"].iloc[0], table["Bound"].iloc[0]) == ("overhead", "memory")


# --- the profile picker -----------------------------------------------------------------------
def csvs(monkeypatch, query: dict[str, str]) -> dict[str, pd.DataFrame]:
    """Every CSV download of the page opened with `query`, by the button's key."""
    captured, original = {}, st.download_button

    def spy(label, data, **kwargs):
        captured[kwargs.get("key")] = data
        return original(label, data, **kwargs)

    monkeypatch.setattr(st, "download_button", spy)
    run(query)
    return {k: pd.read_csv(io.StringIO(d() if callable(d) else d)) for k, d in captured.items()}


def test_the_profile_is_named_beside_the_results_and_in_the_csv(monkeypatch):
    at = run()
    assert at.selectbox(key="sweep:profile").value == "tutorial"
    assert any(c.value == "Profile tutorial: its assumptions, unedited." for c in at.caption)
    assert metric(at, "Latency at batch 256") == "7.24 ms"  # one figure per card
    assert "543 µs at batch 1" in [c.value for c in at.caption]  # the tutorial's 0.5426 ms
    csv = csvs(monkeypatch, {"profile": "trtllm", "efficiency": "0.3"})["sweep_csv"]
    assert set(csv["profile"]) == {"trtllm, edited"}
    assert list(csv["compute_efficiency_fraction"].unique()) == pytest.approx([0.3])


def test_choosing_a_profile_seeds_the_assumptions_and_the_llm_views_reserve():
    at = run({"model": "Llama-3.1-8B"})
    at.selectbox(key="sweep:profile").set_value("trtllm").run()
    # data/profiles/trtllm-1.0.toml (trtllm): efficiency 0.866565, memory_reserve 0.05
    assert at.number_input(key="sweep:efficiency").value == pytest.approx(0.866565)
    assert at.number_input(key="sweep:memory_reserve").value == pytest.approx(0.05)
    assert any(c.value == "Profile trtllm: its assumptions, unedited." for c in at.caption)
    value = at.query_params["profile"]  # a str, or a list when the page wrote it
    assert (value if isinstance(value, str) else value[-1]) == "trtllm"
    at.number_input(key="sweep:memory_reserve").set_value(0.2).run()
    edited = "Profile trtllm, edited: memory_reserve 0.2 (profile: 0.05)."
    assert any(c.value == edited for c in at.caption)


def test_a_profile_chosen_on_solve_follows_to_the_sweep_with_all_its_values():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.switch_page("pages/solve.py").run()
    at.selectbox(key="solve:model").set_value("Llama-3.1-8B").run()
    at.selectbox(key="solve:profile").set_value("trtllm").run()
    at.query_params.clear()  # as the sidebar's page link opens it: no query string
    at.switch_page("pages/sweep.py").run()
    assert not at.exception
    assert at.selectbox(key="sweep:profile").value == "trtllm"
    # efficiency from Solve's widget; memory_reserve (no widget on Solve) from trtllm-1.0.toml
    assert at.number_input(key="sweep:efficiency").value == pytest.approx(0.866565)
    assert at.number_input(key="sweep:memory_reserve").value == pytest.approx(0.05)
    assert any(c.value == "Profile trtllm: its assumptions, unedited." for c in at.caption)
