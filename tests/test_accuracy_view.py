"""The Accuracy page's pure builders (ui/accuracy/view.py, figures.py): tables, words, charts."""

import math
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

import engine
from ui.accuracy import figures
from ui.accuracy import view as av

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "data" / "measurements" / "trtllm-v0.6.1.csv"
TRT = engine.get_profile("trtllm-0.6.1")  # the profile fitted on SHIPPED
BY_HAND = engine.Message("by_hand", "by hand")  # a basis set by hand
ENGINES = {SHIPPED.name: Counter({"TensorRT-LLM 0.6.1": 29, "TensorRT-LLM 0.5": 28})}


def _frame() -> pd.DataFrame:
    rows = engine.read_measurements([SHIPPED])
    df = engine.validate([rows[0], rows[1], rows[44]], "tutorial")  # 2 throughput, 1 TTFT
    df.loc[0, "model"] = "<b>x</b>"  # user text must stay inert in the hover
    return df


def test_one_figure_per_metric_with_the_hover_escaped():
    figs = figures.metric_figures(_frame(), "<i>t</i>", engine.Band(10.0, BY_HAND))
    assert list(figs) == ["output_tokens_per_s_per_gpu", "ttft_ms"]
    fig = figs["output_tokens_per_s_per_gpu"]
    assert fig.layout.title.text.startswith("Output tokens/s per GPU<br><sup>profile &lt;i&gt;")
    points = [t for t in fig.data if t.mode == "markers"]
    hover = points[0].hovertext[0]
    assert "&lt;b&gt;x&lt;/b&gt;" in hover and "<b>x</b>" not in hover
    assert "batch 1,024, 128 in / 128 out tokens" in hover and "row 1" in hover
    assert fig.layout.xaxis.title.text == "measured (tokens/s per GPU)"
    assert figs["ttft_ms"].layout.yaxis.title.text == "predicted (ms)"


def test_equal_decade_axes_and_band_lines_by_hand():
    points = pd.DataFrame(
        {
            "measured": [30.0, 400.0],
            "predicted": [45.0, 380.0],
            "group": ["A100", "H100"],
            "hover": ["a", "b"],
        }
    )
    fig = figures.parity_figure(
        points=points, unit="ms", title="TTFT", band=engine.Band(20.0, BY_HAND)
    )
    # 30 to 400 spans the decades 10 to 1,000: both axes, ticks at decades only
    assert list(fig.layout.xaxis.range) == list(fig.layout.yaxis.range) == [1, 3]
    assert list(fig.layout.xaxis.tickvals) == [10, 100, 1000]
    assert list(fig.layout.xaxis.ticktext) == ["10", "100", "1k"]
    assert fig.layout.yaxis.scaleanchor == "x"
    diagonal, upper, lower = fig.data[:3]
    assert list(diagonal.x) == list(diagonal.y) == [10, 1000]
    assert [round(v, 9) for v in upper.y] == [12, 1200] and [round(v, 9) for v in lower.y] == [
        8,
        800,
    ]
    assert upper.showlegend and not lower.showlegend
    bare = figures.parity_figure(
        points=points, unit="ms", title="TTFT", band=engine.Band(None, BY_HAND)
    )
    assert [t.name for t in bare.data] == ["predicted = measured", "A100", "H100"]


def test_decades_cover_the_values_and_at_least_one_decade():
    assert figures.decades([30, 400]) == (1, 3)
    assert figures.decades([100, 100]) == (2, 3)
    assert figures.decades([0.004, float("nan"), -1]) == (-3, -2)
    assert figures.decades([]) == (0, 1)


def test_mape_by_metric_by_hand():
    df = pd.DataFrame(
        {"metric": ["a", "a", "b"], "ape_pct": [10.0, 30.0, 5.0], "reason": ["", "", ""]}
    )
    table = av.mape_by({"p": df}, "metric")
    # a: (10 + 30) / 2 = 20; b: 5
    assert table.to_dict("list") == {"metric": ["a", "b"], "p MAPE": ["20%", "5%"]}


def test_results_table_carries_units_and_reasons():
    table = av.results_table(_frame())
    assert {"unit", "measured_in_unit", "predicted_in_unit", "error_pct"} <= set(table.columns)
    assert table.loc[0, "unit"] == "tokens/s per GPU" and table.loc[2, "unit"] == "ms"
    # the tutorial profile was fitted on no row; trtllm-0.6.1 on every row of its file
    assert not table["in_sample"].any()
    rows = engine.read_measurements([SHIPPED])
    fitted = av.results_table(engine.validate(rows[:3], "trtllm-0.6.1"))
    assert fitted["in_sample"].tolist() == [True, True, True]


def test_the_one_formatter_for_percentages():
    assert av.pct(12.8137) == "12.8%" and av.pct(float("nan")) == "—"
    assert av.signed(4.5) == "+4.5%" and av.signed(-12.24) == "-12.2%"
    assert av.signed(-30.1, "") == "-30.1"


def test_profile_table_shows_every_assumption_and_what_unset_means():
    table = av.profile_table(engine.get_profile("tutorial")).set_index("assumption")["value"]
    assert table["efficiency"] == "0.5" and table["layer_overhead_us"] == "10"
    assert table["attention_efficiency"] == "the compute efficiency η"  # the registry's words
    assert table["link_latency_us"] == "the interconnect's catalogued figure"
    # every profile assumption, none hidden: 14, the number formats' fp4_efficiency and
    # dequant_overhead, the network's efficiency and latency, the MoE layouts'
    # expert_imbalance and grouped_gemm_tokens, kv_bandwidth_efficiency beside kv_reuse, and
    # the kernel transfer's curves and reference
    assert len(table) == len(engine.PROFILE_KEYS) == 23
    assert table["kernel_curves"] == "none" and table["kernel_reference"] == "H100"


def test_stack_release_and_scheduler_in_words():
    assert av.stack(TRT, ENGINES) == "TensorRT-LLM 0.6.1 (29 rows), TensorRT-LLM 0.5 (28 rows)"
    assert av.stack(engine.get_profile("tutorial"), ENGINES).startswith("none: The tutorial")
    assert av.scheduler(TRT) == (
        "TensorRT-LLM (executor defaults): up to 2,048 sequences and 8,192 tokens per step, "
        "no chunked prefill, KV cache reserve"
    )
    assert av.scheduler(engine.get_profile("vllm")).startswith("vLLM (V1 engine")
    assert av.picker_label(TRT, ENGINES).startswith("trtllm-0.6.1 · TensorRT-LLM 0.6.1 · scheduler")


def test_error_cells_never_show_the_in_sample_error_alone():
    cells = av.error_cells(TRT)
    # trtllm-0.6.1.toml: 15.85 % in sample, 20.90 % leaving a model out, 21.18 % an accelerator
    assert cells["In sample (MAPE)"] == "15.8%" and cells["Leave one model out (MAPE)"] == "20.9%"
    assert cells["Error band"] == "±21.2%"
    team = replace(TRT, name="team", residuals={"mape_pct": 0.9}, rows=8)
    cells = av.error_cells(team)
    assert cells["In sample (MAPE)"] == "0.9%" and cells["Error band"] == "—"
    assert "not measured out of sample" in cells["Band basis"]
    assert "Out of sample: —" in av.in_sample_note(team)


def test_ground_lines_and_fitted_table():
    assert av.ground_lines(TRT)[:2] == ["Accelerators: H100, A100, L40S", "Precisions: fp8, fp16"]
    fitted = av.fitted_table(TRT).set_index("parameter")
    assert fitted.loc["layer_overhead_us", "fitted value"] == "15"  # at its cited bound
    assert fitted.loc["efficiency", "meaning"].startswith("Compute efficiency")


def test_per_file_table_marks_the_rows_a_profile_was_fitted_on():
    df = _frame().assign(ape_pct=[10.0, 20.0, 30.0], error=[0.1, -0.2, 0.3])
    table = av.per_file_table(
        {SHIPPED.name: {"trtllm": df.assign(in_sample=True)}, "x.csv": {"trtllm": df}}
    )
    # (10 + 20 + 30) / 3 = 20 %
    assert table["trtllm MAPE"].tolist() == ["20% (fitted on) (3 of 3)", "20% (3 of 3)"]


def test_per_file_table_splits_a_file_fitted_on_in_part():
    rows = engine.read_measurements([SHIPPED.parent / "trtllm-v1.0-perf-overview.csv"])
    frames = {p: engine.validate(rows, p) for p in ("tutorial", "trtllm-1.0")}
    table = av.per_file_table({"v1.csv": frames}).set_index("file")
    assert list(table.index) == ["v1.csv (fp8)", "v1.csv (fp4)"]
    assert table["rows"].tolist() == [112, 216]
    assert table.loc["v1.csv (fp8)", "trtllm-1.0 MAPE"].endswith("(fitted on) (112 of 112)")
    assert "fitted on" not in table.loc["v1.csv (fp4)", "trtllm-1.0 MAPE"]
    assert "fitted on" not in table.loc["v1.csv (fp8)", "tutorial MAPE"]
    note = av.part_sample_note(engine.get_profile("trtllm-1.0"), frames["trtllm-1.0"])
    assert note.startswith("trtllm-1.0 was fitted on 112 of these rows (fp8); the other 216 (fp4)")


def test_the_training_tables_and_chart():
    rows = engine.training_fit_rows("megatron")
    table = av.training_table(rows)
    assert len(table) == 22 and table.loc[0, "Measured (TFLOP/s per GPU)"] == "137"
    # 1.7B on 32 GPUs: measured 137, predicted 137.5 (docs/model.md)
    assert table.loc[0, "Error (in sample)"] == "+0.333%"
    cells = av.training_cells(engine.get_training_profile("megatron"))
    assert cells["Leave one table out (MAPE)"][0] == "21.9%"
    fig = figures.training_figure(
        rows, engine.Band(3.03, engine.Message("leave_one_row_out", "leave one row out"))
    )
    assert list(fig.layout.xaxis.range) == [1, 3]  # 44 to 171 TFLOP/s per GPU
    assert {t.name for t in fig.data} >= {"Table 1, PTD-P", "Table 2, ZeRO-3"}
    assert math.isclose(fig.data[1].y[1], 1000 * 1.0303)
    values = av.training_values(engine.get_training_profile("megatron"))
    assert dict(zip(values["assumption"], values["value"], strict=True))["efficiency"] == "0.702066"


@pytest.mark.parametrize("column", ["pp", "concurrency"])
def test_the_schema_table_marks_the_optional_columns(column):
    table = av.schema_table().set_index("column")
    assert table.loc[column, "required"] == "no" and table.loc["value", "required"] == "yes"
