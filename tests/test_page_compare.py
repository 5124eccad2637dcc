"""The hardware-comparison page (pages/compare.py) through Streamlit's AppTest. Numbers are
checked against engine.sweep and engine.crossover_batch, never hard-coded."""

import base64
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import chart_spec
from ui.links import custom
from ui.words.format import fmt

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = [1, 8, 64, 256]
LISTED, EXACT = "Crossover batch (first in your list)", "Crossover batch (exact)"
CHIP = "name=Chip X;fp16=400 TFLOP/s;fp32=50 TFLOP/s;bandwidth=1.5 TB/s;capacity=64 GiB"


def run(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.switch_page("pages/compare.py").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def tables(at: AppTest) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(per-accelerator summary, speedup grid, all scenarios), in page order."""
    frames = [d.value for d in at.dataframe if "Deployment" not in d.value.columns]
    summary, speedup, scenarios = frames
    return summary, speedup, scenarios


def charts(at: AppTest) -> list[dict]:
    return [chart_spec(c) for c in at.get("plotly_chart")]


def arr(value) -> np.ndarray:
    """A figure array from the chart JSON: a list, or plotly's base64 typed array."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    return np.asarray(value)


def names(*ids: str) -> list[str]:
    cat = engine.default_catalog()
    return [cat.find_hardware(h).name for h in ids]


def test_default_run_compares_a100_and_h100_with_the_engines_numbers():
    at = run()
    df = engine.sweep(
        models="ResNet-50", hardware=["A100", "H100"], batch_sizes=DEFAULT, precisions=["fp16"]
    )
    cross = engine.crossover_batch(df)
    summary, speedup, scenarios = tables(at)
    a100, h100 = names("A100", "H100")
    assert list(summary["Accelerator"]) == [a100, h100]
    for hw, (_, row) in zip(["A100", "H100"], summary.iterrows(), strict=True):
        rows = df[df["hardware"] == hw]
        assert row["Ridge, theoretical (FLOP/byte)"] == fmt(rows["ridge_flop_per_byte"].iloc[0])
        ridge = rows["effective_ridge_flop_per_byte"].iloc[0]
        assert row["Ridge, effective (FLOP/byte)"] == fmt(ridge)
        first = int(cross.loc[cross["hardware"] == hw, "crossover_batch"].iloc[0])
        assert row[LISTED] == str(first)
        assert row[EXACT] == f"{engine.compute_bound_batch('ResNet-50', hw):,}"
    # exact: 2 on A100 and 3 on H100 (a higher ridge); the list 1, 8, ... first shows 8 on both
    assert list(summary[EXACT]) == ["2", "3"] and list(summary[LISTED]) == ["8", "8"]
    ratio = (
        df[df["hardware"] == "H100"]["throughput_per_s"].to_numpy()
        / df[df["hardware"] == "A100"]["throughput_per_s"].to_numpy()
    )
    assert list(speedup["Batch size"]) == DEFAULT
    assert list(speedup[h100]) == [f"{fmt(v)}×" for v in ratio]
    assert set(speedup[a100]) == {"1×"}
    assert len(scenarios) == 8
    assert len(charts(at)) == 3
    assert at.query_params["hardware"] == "A100,H100" and at.query_params["baseline"] == "A100"
    assert at.download_button(key="compare_csv") is not None


def test_rooflines_are_overlaid_with_labelled_operating_points():
    at = run()
    roofline = charts(at)[2]
    trace_names = [t["name"] for t in roofline["data"]]
    for hw in names("A100", "H100"):
        assert any(n.startswith(f"Memory roof {hw}") for n in trace_names)
        assert any(n.startswith(f"Trajectory {hw}") for n in trace_names)
    achieved = next(t for t in roofline["data"] if t["name"].startswith("Achieved"))
    assert len(arr(achieved["x"])) == 8
    h100 = names("H100")[0]
    assert any(f"{h100}, batch 8" in text for text in achieved["hovertext"])


def test_changing_the_baseline_changes_the_speedups():
    at = run()
    at.selectbox(key="compare:baseline").set_value("H100").run()
    assert not at.exception
    df = engine.sweep(
        models="ResNet-50", hardware=["A100", "H100"], batch_sizes=DEFAULT, precisions=["fp16"]
    )
    a100, h100 = names("A100", "H100")
    _, speedup, _ = tables(at)
    ratio = (
        df[df["hardware"] == "A100"]["throughput_per_s"].to_numpy()
        / df[df["hardware"] == "H100"]["throughput_per_s"].to_numpy()
    )
    assert list(speedup[a100]) == [f"{fmt(v)}×" for v in ratio]
    assert set(speedup[h100]) == {"1×"}
    assert at.query_params["baseline"] == "H100"
    assert f"Speedup vs {h100}" in charts(at)[1]["layout"]["title"]["text"]


def test_adding_an_accelerator_adds_it_everywhere():
    at = run()
    at.multiselect(key="compare:hardware").select("T4").run()
    assert not at.exception
    summary, speedup, scenarios = tables(at)
    t4 = names("T4")[0]
    assert t4 in list(summary["Accelerator"]) and t4 in speedup.columns
    assert len(scenarios) == 12
    df = engine.sweep(
        models="ResNet-50",
        hardware=["A100", "H100", "T4"],
        batch_sizes=DEFAULT,
        precisions=["fp16"],
    )
    cross = engine.crossover_batch(df)
    t4_cross = cross.loc[cross["hardware"] == "T4", "crossover_batch"].iloc[0]
    row = summary[summary["Accelerator"] == t4].iloc[0]
    assert row[LISTED] == ("never in sweep" if pd.isna(t4_cross) else str(t4_cross))
    assert at.query_params["hardware"] == "A100,H100,T4"


def test_query_string_sets_the_widgets():
    query = {"model": "Llama-3.1-8B", "hardware": "H100,MI300X,T4", "baseline": "T4"}
    at = run({**query, "batches": "1,2,4", "precision": "bf16", "view": "tutorial"})
    assert at.selectbox(key="compare:model").value == "Llama-3.1-8B"
    assert at.multiselect(key="compare:hardware").value == ["H100", "MI300X", "T4"]
    assert at.selectbox(key="compare:baseline").value == "T4"
    assert at.text_input(key="compare:batches").value == "1,2,4"
    assert at.selectbox(key="compare:precision").value == "bf16"
    summary, speedup, scenarios = tables(at)
    assert len(scenarios) == 9 and list(speedup["Batch size"]) == [1, 2, 4]
    assert set(speedup[names("T4")[0]]) == {"1×"}
    df = engine.sweep(
        models="Llama-3.1-8B",
        hardware=["H100", "MI300X", "T4"],
        batch_sizes=[1, 2, 4],
        precisions=["bf16"],
    )
    best = df.groupby("hardware", observed=True, sort=False)["throughput_per_s"].max()
    assert list(summary["Best throughput (tokens/s)"]) == [fmt(v) for v in best]


def test_invalid_query_string_warns_and_uses_defaults():
    at = run({"hardware": "NOPE,A100", "batches": "abc", "efficiency": "nan"})
    text = " ".join(w.value for w in at.warning).replace("\\", "")
    for name in ("hardware", "batches", "efficiency"):
        assert f"ignored '{name}'" in text
    assert at.multiselect(key="compare:hardware").value == ["A100", "H100"]
    assert len(tables(at)[2]) == 8


def test_a_baseline_outside_the_chosen_accelerators_falls_back_with_a_warning():
    at = run({"hardware": "A100,H100", "baseline": "T4"})
    assert at.selectbox(key="compare:baseline").value == "A100"
    assert any("Baseline T4 is not one of the chosen" in w.value for w in at.warning)
    assert at.query_params["baseline"] == "A100"


def test_more_than_eight_accelerators_is_refused_with_a_warning():
    nine = "A100,H100,H200,B200,V100,T4,MI300X,Gaudi3,TPUv5p"
    at = run({"hardware": nine})
    assert any("more than 8 items" in w.value for w in at.warning)
    assert at.multiselect(key="compare:hardware").value == ["A100", "H100"]


def test_fewer_than_two_accelerators_shows_an_info_not_an_exception():
    at = run({"hardware": "H100"})
    assert any("at least two accelerators" in i.value for i in at.info)
    assert not at.get("plotly_chart") and not at.dataframe
    at.multiselect(key="compare:hardware").select("A100").run()
    assert not at.exception and len(charts(at)) == 3
    at.multiselect(key="compare:hardware").set_value([]).run()
    assert not at.exception and any("at least two" in i.value for i in at.info)


def test_typed_batch_text_that_does_not_parse_keeps_the_last_valid_list():
    at = run()
    at.text_input(key="compare:batches").set_value("2,4,-1").run()
    assert not at.exception
    assert "whole number from 1 to 1,000,000, got -1" in at.error[0].value
    assert list(tables(at)[1]["Batch size"]) == DEFAULT


def test_csv_download_has_every_scenario_and_the_speedup(monkeypatch):
    captured = {}
    original = st.download_button

    def spy(label, data, **kwargs):
        captured["data"] = data
        return original(label, data, **kwargs)

    monkeypatch.setattr(st, "download_button", spy)
    run({"hardware": "A100,H100", "baseline": "H100", "batches": "1,16"})
    data = captured["data"]
    csv = pd.read_csv(io.StringIO(data() if callable(data) else data))
    df = engine.sweep(
        models="ResNet-50", hardware=["A100", "H100"], batch_sizes=[1, 16], precisions=["fp16"]
    )
    assert list(csv["hardware"]) == ["A100", "A100", "H100", "H100"]
    assert list(csv["throughput_per_s"]) == pytest.approx(list(df["throughput_per_s"]))
    assert set(csv["baseline_hardware"]) == {"H100"}
    ratio = df["throughput_per_s"].to_numpy() / np.tile(df["throughput_per_s"].to_numpy()[2:], 2)
    np.testing.assert_allclose(csv["speedup_vs_baseline_ratio"], ratio)
    assert "compute_efficiency_fraction" in csv and "flop_convention" in csv


def test_a_custom_accelerator_from_the_link_is_compared_and_dropped_when_switched_off():
    chip = CHIP + ";dispatch=0.01 ms;tdp=350 W"
    at = run({"hardware": "A100,Custom-HW", "custom_hw": chip, "baseline": "Custom-HW"})
    summary, speedup, _ = tables(at)
    assert list(summary["Accelerator"]) == [names("A100")[0], "Chip X"]
    assert set(speedup["Chip X"]) == {"1×"}
    spec = custom.hardware_from(custom.decode(chip, custom.HW_FIELDS))
    df = engine.sweep(models="ResNet-50", hardware=spec, batch_sizes=DEFAULT, precisions=["fp16"])
    assert summary["Ridge, effective (FLOP/byte)"].iloc[1] == fmt(
        df["effective_ridge_flop_per_byte"].iloc[0]
    )
    at.toggle(key="compare:custom_hw.on").set_value(False).run()
    assert not at.exception
    assert any("Dropped the custom accelerator" in w.value for w in at.warning)
    assert at.multiselect(key="compare:hardware").value == ["A100"]
    assert any("at least two" in i.value for i in at.info)


def test_user_text_in_names_is_shown_inert_not_as_markdown():
    chip = CHIP.replace("Chip X", "Chip [x](http://e.example)")
    query = {"custom_hw": chip + ";dispatch=0.01 ms;tdp=350 W", "baseline": "Custom-HW"}
    at = run({**query, "hardware": "A100,Custom-HW"})
    inert = "Chip \\[x\\]\\(http\u2060://e.example\\)"  # a word joiner stops the autolink
    assert inert in at.caption[0].value and inert in at.subheader[1].value
    assert "Chip [x](http://e.example)" in list(tables(at)[0]["Accelerator"])  # a table cell


# --- multi-device deployments (LLMs) and the profile -------------------------------------------
def link(at: AppTest, key: str) -> str | None:
    value = at.query_params.get(key)
    return value if value is None or isinstance(value, str) else value[-1]


def deploy_table(at: AppTest) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "Deployment" in d.value.columns)


def test_an_llm_compares_multi_device_deployments_through_the_serving_model():
    at = run({"model": "Llama-3.1-70B", "batches": "1,8"})
    table = deploy_table(at)
    assert (
        table["Deployment"].tolist()
        == ["8× NVIDIA H100 SXM TP8"] * 2 + ["4× AMD Instinct MI300X TP4"] * 2
    )
    r = engine.serve(  # Compare's default profile: the tutorial's (a whole-model page)
        "Llama-3.1-70B",
        "H100",
        tp=8,
        batch_size=8,
        input_tokens=1024,
        output_tokens=256,
        profile="tutorial",
    ).as_dict()
    row = table.iloc[1]
    assert row["TTFT"] == fmt(r["ttft_ms"] * 1e-3, "s") and row["TPOT"] == fmt(
        r["tpot_ms"] * 1e-3, "s"
    )
    assert row["Output tokens/s per GPU"] == fmt(r["output_tokens_per_s_per_gpu"], "tokens/s")
    assert row["Memory per device"] == fmt(r["memory_per_device_bytes"], "B")
    # H100 at the catalogue's $6.16 per hour × 8 devices
    assert row["Price (USD per hour, all devices)"] == "49.3 USD/h"
    assert link(at, "deployments") == "8xH100/tp8,4xMI300X/tp4"
    assert link(at, "input_tokens") == "1024" and link(at, "output_tokens") == "256"
    assert any(t["name"] == "8× NVIDIA H100 SXM TP8" for t in charts(at)[0]["data"])


def test_deployments_from_the_link_and_the_field():
    at = run({"model": "Llama-3.1-8B", "deployments": "2xH100/tp1/pp2,h100", "batches": "4"})
    assert deploy_table(at)["Deployment"].tolist() == [
        "2× NVIDIA H100 SXM TP1 PP2",
        "1× NVIDIA H100 SXM TP1",
    ]
    assert link(at, "deployments") == "2xH100/tp1/pp2,1xH100/tp1"
    at.text_input(key="compare:deployments").set_value("4xMI300X/tp4").run()
    assert deploy_table(at)["Deployment"].tolist() == ["4× AMD Instinct MI300X TP4"]
    assert link(at, "deployments") == "4xMI300X/tp4"
    at.text_input(key="compare:deployments").set_value("8xH100/tp4").run()  # not tp·pp
    assert any("8 devices but tp 4 × pp 1 = 4" in e.value for e in at.error)
    assert deploy_table(at)["Deployment"].tolist() == ["4× AMD Instinct MI300X TP4"]


def test_a_deployment_the_model_cannot_use_is_left_out_with_why():
    at = run({"model": "Llama-3.1-8B", "deployments": "8xH100/tp8,3xH100/tp3"})
    assert any("3× H100 TP3: tp 3 does not divide Llama-3.1-8B's 32" in w.value for w in at.warning)
    assert set(deploy_table(at)["Deployment"]) == {"8× NVIDIA H100 SXM TP8"}
    at = run({"model": "Llama-3.1-8B", "deployments": "2xJetsonOrinNX/tp2"})
    assert any("no device-to-device link" in w.value for w in at.warning)


def test_a_bad_deployments_link_warns():
    at = run({"model": "Llama-3.1-8B", "deployments": "8xNoChip/tp8"})
    assert any("deployments" in w.value and "NoChip" in w.value for w in at.warning)
    assert link(at, "deployments") == "8xH100/tp8,4xMI300X/tp4"  # the default, healed


def test_a_vision_model_keeps_the_single_device_comparison():
    at = run({"deployments": "8xH100/tp8"})
    assert not any("Deployment" in d.value.columns for d in at.dataframe)
    assert link(at, "deployments") is None and link(at, "input_tokens") is None
    summary, _, _ = tables(at)
    assert len(summary) == 2


def test_the_profile_reaches_the_deployments_and_both_csvs(monkeypatch):
    captured, original = {}, st.download_button

    def spy(label, data, **kwargs):
        captured[kwargs.get("key")] = data
        return original(label, data, **kwargs)

    monkeypatch.setattr(st, "download_button", spy)
    at = run(
        {"model": "Llama-3.1-8B", "profile": "trtllm", "deployments": "8xH100/tp8", "batches": "8"}
    )
    assert any(c.value == "Profile trtllm: its assumptions, unedited." for c in at.caption)
    read = {k: pd.read_csv(io.StringIO(d() if callable(d) else d)) for k, d in captured.items()}
    deploy = read["compare_deploy_csv"]
    r = engine.serve(
        "Llama-3.1-8B",
        "H100",
        tp=8,
        batch_size=8,
        input_tokens=1024,
        output_tokens=256,
        profile="trtllm",
    ).as_dict()
    assert deploy["ttft_ms"].iloc[0] == pytest.approx(r["ttft_ms"])
    assert set(deploy["profile"]) == {"trtllm"} and deploy["deployment"].iloc[0] == "8xH100/tp8"
    assert set(read["compare_csv"]["profile"]) == {"trtllm"}
    at.number_input(key="compare:efficiency").set_value(0.3).run()
    assert any(c.value.startswith("Profile trtllm, edited: efficiency 0.3") for c in at.caption)
    assert link(at, "profile") == "trtllm" and link(at, "efficiency") == "0.3"


def test_serving_warnings_name_their_deployment():
    # Llama-3.1-405B: 405e9 × 2 B = 810 GB of weights, more than 4 × 192 GB MI300X hold
    at = run({"model": "Llama-3.1-405B", "deployments": "8xH200/tp8,4xMI300X/tp4", "batches": "1"})
    fit = [w.value for w in at.warning if "does not fit" in w.value]
    # each warning names what it is about: the deployment, or (one accelerator each, where
    # 810 GB fits on neither of the page's default A100 and H100) the accelerator
    heads = ("4× AMD Instinct MI300X TP4: ", "NVIDIA A100 80GB SXM: ", "NVIDIA H100 SXM: ")
    assert all(w.startswith(heads) for w in fit), fit
    assert any(w.startswith(heads[0]) for w in fit)  # 8× H200 (1.1 TB) fits: no warning
