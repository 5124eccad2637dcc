"""The sweep and comparison figure builders and table reshapes (ui/charts/sweep.py), without a
browser: trace names, log axes, ridge lines and crossover at the engine's values, speedups equal
to the engine's throughput ratios. Builders skip plotly's validation for speed, so every figure
is re-validated here (`go.Figure(fig.to_dict())` raises on a bad property)."""

import numpy as np
import plotly.graph_objects as go
import pytest

import engine
from ui.charts import sweep as fs
from ui.charts import tables
from ui.words.format import fmt

BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256]
NAMES = {"A100": "NVIDIA A100", "H100": "NVIDIA H100", "T4": "NVIDIA T4"}


@pytest.fixture(scope="module")
def one():
    return engine.sweep(
        models="ResNet-50", hardware="A100", batch_sizes=BATCHES, precisions=["fp16"]
    )


@pytest.fixture(scope="module")
def three():
    return engine.sweep(
        models="ResNet-50",
        hardware=["A100", "H100", "T4"],
        batch_sizes=[1, 8, 64, 256],
        precisions=["fp16"],
    )


def traces(fig: go.Figure) -> dict[str, go.Scatter]:
    return {t.name: t for t in fig.data}


def valid(fig: go.Figure) -> go.Figure:
    go.Figure(fig.to_dict())  # raises ValueError on any invalid property
    return fig


def test_throughput_figure_has_a_line_per_accelerator_on_log_axes(three):
    fig = valid(fs.throughput_figure(three, NAMES))
    assert [t.name for t in fig.data] == ["NVIDIA A100", "NVIDIA H100", "NVIDIA T4"]
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    h100 = three[three["hardware"] == "H100"]
    assert list(traces(fig)["NVIDIA H100"].x) == [1, 8, 64, 256]
    np.testing.assert_allclose(traces(fig)["NVIDIA H100"].y, h100["throughput_per_s"])
    assert "images/s" in fig.layout.yaxis.title.text


def test_latency_figure_draws_the_budget_only_when_given(one):
    without = valid(fs.latency_figure(one, NAMES))
    assert [t.name for t in without.data] == ["NVIDIA A100"]
    np.testing.assert_allclose(without.data[0].y, one["latency_ms"])
    fig = valid(fs.latency_figure(one, NAMES, budget_ms=2.5))
    budget = traces(fig)["Latency budget 2.5 ms"]
    assert list(budget.y) == pytest.approx([2.5, 2.5])
    assert list(budget.x) == pytest.approx([1, 256])
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


def test_intensity_figure_ridges_and_crossover_are_the_engines(one):
    cross = int(engine.crossover_batch(one)["crossover_batch"].iloc[0])
    fig = valid(fs.intensity_figure(one, cross, "catalog"))
    by_name = traces(fig)
    eff = next(t for n, t in by_name.items() if n.startswith("Effective ridge"))
    theo = next(t for n, t in by_name.items() if n.startswith("Theoretical ridge"))
    assert list(eff.y) == pytest.approx([one["effective_ridge_flop_per_byte"].iloc[0]] * 2)
    assert list(theo.y) == pytest.approx([one["ridge_flop_per_byte"].iloc[0]] * 2)
    assert list(theo.y) == pytest.approx([312e12 / 2.039e12] * 2)  # A100 reference entry: Π / β
    mark = next(t for n, t in by_name.items() if n.startswith("Crossover: batch"))
    assert list(mark.x) == [cross]
    expected_ai = one.loc[one["batch_size"] == cross, "arithmetic_intensity_flop_per_byte"]
    assert list(mark.y) == pytest.approx(list(expected_ai))
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert "FLOPs as catalogued" in fig.layout.title.text
    memory = by_name["memory-bound batches"]
    assert list(memory.x) == list(one.loc[one["bottleneck"] == "memory", "batch_size"])


def test_intensity_figure_without_crossover_has_no_marker():
    df = engine.sweep(
        models="Llama-3.1-8B", hardware="H100", batch_sizes=[1, 2, 4], precisions=["fp16"]
    )
    assert engine.crossover_batch(df)["crossover_batch"].isna().all()
    fig = valid(fs.intensity_figure(df, None, "mac2"))
    assert not [t for t in fig.data if t.name.lower().startswith("crossover")]
    assert "normalised to 2 per multiply-accumulate" in fig.layout.title.text


def test_roofline_trajectories_label_every_point_and_add_one_line_per_accelerator(three):
    fig = valid(
        fs.roofline_trajectories(df=three, names=NAMES, convention="catalog", title="Rooflines")
    )
    names = [t.name for t in fig.data]
    for hw in NAMES.values():
        assert any(n.startswith(f"Memory roof {hw}") for n in names)
        assert f"Trajectory {hw} (batch 1 → 256)" in names
    achieved = traces(fig)["Achieved (with overhead)"]
    assert len(achieved.x) == len(three)
    assert any("NVIDIA H100, batch 8" in text for text in achieved.hovertext)
    h100 = three[three["hardware"] == "H100"]
    trajectory = traces(fig)["Trajectory NVIDIA H100 (batch 1 → 256)"]
    np.testing.assert_allclose(trajectory.y, h100["achieved_tflops"])
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


def test_roofline_trajectories_stay_one_trace_per_kind_for_2000_points():
    df = engine.sweep(
        models="ResNet-50", hardware="A100", batch_sizes=list(range(1, 2001)), precisions=["fp16"]
    )
    fig = fs.roofline_trajectories(df=df, names=NAMES, convention="catalog", title="t")
    assert len(fig.data) <= 10  # 4 roof traces + gap + attainable + achieved + trajectory
    assert len(fig.layout.annotations) == 1  # one accelerator: only its largest gap (batch 1)
    assert fig.layout.annotations[0].text == "gap 515 µs (95%)"
    achieved = traces(fig)["Achieved (with overhead)"]
    assert len(achieved.x) == 2000 and achieved.type == "scattergl"  # WebGL beyond 500


def test_speedup_is_the_engines_throughput_ratio(three):
    df = fs.with_speedup(three, "A100")
    a100 = three[three["hardware"] == "A100"]["throughput_per_s"].to_numpy()
    t4 = three[three["hardware"] == "T4"]["throughput_per_s"].to_numpy()
    got = df[df["hardware"] == "T4"]["speedup_vs_baseline_ratio"].to_numpy()
    np.testing.assert_allclose(got, t4 / a100)
    np.testing.assert_allclose(df[df["hardware"] == "A100"]["speedup_vs_baseline_ratio"], 1.0)
    assert set(df["baseline_hardware"]) == {"A100"}
    table = tables.speedup_table(df, NAMES)
    assert list(table.columns) == ["Batch size", "NVIDIA A100", "NVIDIA H100", "NVIDIA T4"]
    assert list(table["NVIDIA T4"]) == [f"{fmt(v)}×" for v in t4 / a100]
    assert list(table["NVIDIA A100"]) == ["1×"] * 4
    fig = valid(fs.speedup_figure(df, NAMES, "A100"))
    assert [t.name for t in fig.data] == list(NAMES.values())
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "linear"
    assert "NVIDIA A100" in fig.layout.title.text


def test_hardware_summary_matches_engine_ridges_and_crossovers(three):
    cross = engine.crossover_batch(three)
    summary = tables.hardware_summary(three, cross, NAMES)
    assert list(summary["Accelerator"]) == ["NVIDIA A100", "NVIDIA H100", "NVIDIA T4"]
    for row, hw in zip(summary.itertuples(index=False), ["A100", "H100", "T4"], strict=True):
        rows = three[three["hardware"] == hw]
        assert row[3] == fmt(rows["ridge_flop_per_byte"].iloc[0])
        assert row[4] == fmt(rows["effective_ridge_flop_per_byte"].iloc[0])
        expected = cross.loc[cross["hardware"] == hw, "crossover_batch"].iloc[0]
        assert row[5] == tables.crossover_text(expected)
        assert row[6] == fmt(rows["throughput_per_s"].max())
    assert summary["Peak"].iloc[0] == "312 TFLOP/s"  # A100 dense fp16
    assert summary["Bandwidth"].iloc[0] == "2.04 TB/s"  # 2.039 TB/s, 3 figures


def test_crossover_text_and_value():
    assert tables.crossover_text(1234) == "1,234" and tables.crossover_value(8) == 8
    df = engine.sweep(
        models="Llama-3.1-8B", hardware="H100", batch_sizes=[1, 2], precisions=["fp16"]
    )
    na = engine.crossover_batch(df)["crossover_batch"].iloc[0]
    assert tables.crossover_value(na) is None and tables.crossover_text(na) == "never in sweep"


def test_budget_rows_pick_within_budget(one):
    budget = float(one["latency_ms"].iloc[4]) + 1e-9  # batch 16 just fits
    largest, best = fs.budget_rows(one, budget)
    ok = one[one["latency_ms"] <= budget]
    assert largest["batch_size"] == ok["batch_size"].max() == 16
    assert best["throughput_per_s"] == pytest.approx(ok["throughput_per_s"].max())
    assert fs.budget_rows(one, float(one["latency_ms"].min()) * 0.99) is None


def test_display_table_headers_carry_units(three):
    df = fs.with_speedup(three, "H100")
    cols = ["hardware", "batch_size", "latency_ms", "throughput_per_s", "speedup_vs_baseline_ratio"]
    table = tables.display_table(df, NAMES, cols)
    expected = ["Accelerator", "Batch size", "Latency", "Throughput (images/s)"]
    assert list(table.columns) == [*expected, "Speedup vs baseline (×)"]
    assert table["Accelerator"].iloc[0] == "NVIDIA A100"
    assert list(table["Latency"]) == [fmt(v / 1e3, "s") for v in df["latency_ms"]]
    assert table["Latency"].iloc[0] == "543 µs"  # ResNet-50, A100, batch 1: 0.5426 ms
    assert list(table["Batch size"]) == list(df["batch_size"])  # numbers: they sort


def test_lines_stay_visible_for_a_single_batch():
    df = engine.sweep(models="ResNet-50", hardware="A100", batch_sizes=[8], precisions=["fp16"])
    fig = valid(fs.intensity_figure(df, 8, "catalog"))
    ridge = next(t for t in fig.data if t.name.startswith("Effective ridge"))
    assert ridge.x[0] < 8 < ridge.x[1]
    budget = traces(valid(fs.latency_figure(df, NAMES, 1.0)))["Latency budget 1 ms"]
    assert budget.x[0] < 8 < budget.x[1]


def test_log_axes_read_as_numbers_with_decade_ticks(three):
    fig = fs.throughput_figure(three, NAMES)
    assert fig.layout.xaxis.ticktext == ("1", "10", "100", "1k")  # batches 1 .. 256
    assert "1k" in fig.layout.yaxis.ticktext and fig.layout.yaxis.automargin
    hover = traces(fig)["NVIDIA A100"].customdata
    assert hover[0] == "1,843 images/s"  # 1842.9 images/s at batch 1, 4 figures
