"""The roofline figure builder, without a browser: names, axes, roofs and the overhead gap."""

import math

import numpy as np
import pytest

import engine
from ui.charts.roofline import latency_breakdown_figure, roof_table, roofline_figure


@pytest.fixture
def reference():
    row = engine.sweep(models="ResNet-50", hardware=["A100"], batch_sizes=[1], precisions=["fp16"])
    fig = roofline_figure(
        row.assign(label="ResNet-50, batch 1"),
        roof_table(row, {"A100": "NVIDIA A100"}),
        "catalog",
        title="Roofline",
    )
    return row, fig


def trace(fig, prefix):
    found = [t for t in fig.data if t.name.startswith(prefix)]
    assert found, [t.name for t in fig.data]
    return found[0]


def test_legend_names_every_part(reference):
    _, fig = reference
    names = [t.name for t in fig.data]
    for prefix in (
        "Memory roof NVIDIA A100",
        "Compute roof NVIDIA A100",
        "Effective compute roof NVIDIA A100",
        "Ridge points NVIDIA A100",
        "Fixed-overhead gap",
        "Attainable (on the roof)",
        "Achieved (with overhead)",
    ):
        assert any(n.startswith(prefix) for n in names), prefix


def test_axes_are_log_and_carry_units_and_the_flop_convention(reference):
    _, fig = reference
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert "FLOP/byte" in fig.layout.xaxis.title.text
    assert "as catalogued" in fig.layout.xaxis.title.text
    assert "TFLOP/s" in fig.layout.yaxis.title.text


def test_gap_segment_runs_from_attainable_to_achieved(reference):
    row, fig = reference
    gap = trace(fig, "Fixed-overhead gap")
    ai = row["arithmetic_intensity_flop_per_byte"].iloc[0]
    assert gap.x[0] == pytest.approx(ai) and gap.x[1] == pytest.approx(ai)
    assert gap.y[0] == pytest.approx(row["attainable_tflops"].iloc[0])  # 148 TFLOP/s
    assert gap.y[1] == pytest.approx(row["achieved_tflops"].iloc[0])  # 7.56 TFLOP/s
    label = fig.layout.annotations[0].text
    assert label == "gap 515 µs (95%)"  # 0.515 ms of 0.5426 ms = 94.9 %, 2 figures


def test_roofs_meet_at_the_engine_ridge_points(reference):
    row, fig = reference
    memory, compute = trace(fig, "Memory roof"), trace(fig, "Compute roof")
    effective = trace(fig, "Effective compute roof")
    assert memory.x[1] == pytest.approx(row["ridge_flop_per_byte"].iloc[0])  # 153 FLOP/byte
    assert compute.x[0] == pytest.approx(row["ridge_flop_per_byte"].iloc[0])
    assert effective.x[0] == pytest.approx(row["effective_ridge_flop_per_byte"].iloc[0])
    assert compute.y[0] == pytest.approx(312) and effective.y[0] == pytest.approx(156)
    # the memory roof is bandwidth x intensity: slope 2.039 TB/s
    assert memory.y[0] / memory.x[0] == pytest.approx(2.039)


def test_several_accelerators_and_many_points():
    row = engine.sweep(
        models="ResNet-50",
        hardware=["A100", "H100"],
        batch_sizes=list(range(1, 41)),
        precisions=["fp16"],
    )
    fig = roofline_figure(row.assign(label="x"), roof_table(row, {}), "mac2")
    assert sum(t.name.startswith("Memory roof") for t in fig.data) == 2
    assert len(fig.layout.annotations) == 0  # two accelerators: the gaps are on hover only
    achieved = trace(fig, "Achieved")
    assert achieved.type == "scatter" and achieved.marker.color[0] != achieved.marker.color[-1]
    assert "2 per multiply-accumulate" in fig.layout.xaxis.title.text
    gap = trace(fig, "Fixed-overhead gap")
    assert sum(1 for v in gap.y if v is None or (isinstance(v, float) and math.isnan(v))) == 80


def test_user_text_is_escaped_in_the_figure():
    row = engine.sweep(models="ResNet-50", hardware=["A100"], batch_sizes=[1], precisions=["fp16"])
    fig = roofline_figure(
        row.assign(label="<script>x</script>"), roof_table(row, {"A100": "<b>evil</b>"}), "catalog"
    )
    text = str(fig.to_plotly_json())
    assert "<script>" not in text and "&lt;script&gt;" in text and "&lt;b&gt;evil" in text


def test_latency_breakdown_adds_up():
    fig = latency_breakdown_figure(0.02628, 0.02762, 0.515)
    stacked = [t for t in fig.data if list(t.y) == ["latency"]]
    total = sum(t.x[0] for t in stacked)
    assert total == pytest.approx(0.02762 + 0.515)  # max(compute, memory) + overhead
    assert stacked[0].name == "memory (binding): 27.6 µs, 5.1%"  # 0.02762 / 0.54262
    assert np.isclose(fig.data[2].x, [0.02628, 0.02762]).all()
    assert fig.layout.title.text == "Latency split: 543 µs"
    assert fig.layout.uniformtext.minsize == 12  # a label that cannot be 12 px is hidden
