"""The planner's Pareto chart: one front per accelerator × precision, SLO lines, inert names."""

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from tests.test_plan_view import grid
from ui.charts.theme import WEBGL_POINTS
from ui.plan import figures as fp
from ui.plan import view as pv


def ranked_grid():
    df = grid(
        hardware=["H100", "H100", "H100", "A100", "A100"],
        tokens_per_s_per_user=[10.0, 20.0, 15.0, 5.0, 8.0],
        output_tokens_per_s_per_gpu=[100.0, 80.0, 70.0, 40.0, 30.0],
        fits_in_memory=[True, True, True, True, False],
    )
    return pv.ranked(df, pv.Slo(tpot_ms=50), {"H100": 3.0, "A100": 2.0})


def test_one_front_and_one_faint_trace_per_group():
    fig = fp.pareto_figure(
        df=ranked_grid(), names={"H100": "H100 SXM"}, slo=pv.Slo(tpot_ms=50), title="t"
    )
    fronts = [t for t in fig.data if t.mode == "lines+markers"]
    assert [t.name for t in fronts] == ["A100 fp16", "H100 SXM fp16"]
    # H100: (10,100) and (20,80) on the front, (15,70) dominated; sorted by x for the line
    h100 = fronts[1]
    assert list(h100.x) == [10.0, 20.0] and list(h100.y) == [100.0, 80.0]
    faint = [t for t in fig.data if t.mode == "markers" and t.legendgroup == "H100 SXM fp16"]
    assert list(faint[0].x) == [15.0]
    # the A100 row that does not fit is not drawn at all
    assert list(fronts[0].x) == [5.0]


def test_tpot_limit_is_drawn_at_1000_over_tpot():
    fig = fp.pareto_figure(
        df=ranked_grid(), names={}, slo=pv.Slo(tpot_ms=50, min_tokens_per_s_per_user=12), title="t"
    )
    xs = sorted(shape.x0 for shape in fig.layout.shapes)
    assert xs == pytest.approx([12.0, 20.0])  # 1000 / 50 ms = 20 tokens/s per user
    # annotations on a log axis sit at log10(x): 20 -> 1.301, 12 -> 1.079
    labels = sorted(a.x for a in fig.layout.annotations)
    assert labels == pytest.approx([math.log10(12.0), math.log10(20.0)])


def test_names_are_escaped_in_legend_and_hover():
    evil = "<a href='http://x'>x</a>"
    fig = fp.pareto_figure(
        df=ranked_grid(), names={"H100": evil}, slo=pv.Slo(), title="<b>title</b>"
    )
    text = fig.to_json()
    assert "<a href" not in text and "&lt;a href" in text
    assert fig.layout.title.text == "&lt;b&gt;title&lt;/b&gt;"


def test_hover_has_the_whole_configuration():
    df = ranked_grid()
    text = fp.hover_text(df[df["hardware"] == "H100"].iloc[:1], {"H100": "H100 SXM"})[0]
    for part in ("1× H100 SXM", "TP1 PP1", "batch 1", "fp16", "TTFT 100 ms", "TPOT 20 ms"):
        assert part in text
    assert "USD per 1M output tokens" in text


def test_figure_is_valid_plotly_fronts_svg_faint_points_webgl_only_when_many():
    fig = fp.pareto_figure(df=ranked_grid(), names={}, slo=pv.Slo(tpot_ms=50), title="t")
    go.Figure(fig.to_dict())  # built without validation: validate it here (raises if invalid)
    # WebGL draws an open marker as its 0-width outline (nothing): fronts are SVG; one
    # dominated point is SVG too (a WebGL context would cost more than it draws)
    assert {t.mode: t.type for t in fig.data} == {"markers": "scatter", "lines+markers": "scatter"}
    # 600 dominated points (each below the one front point at x = 1000): over WEBGL_POINTS
    n = WEBGL_POINTS + 100
    many = grid(
        hardware=["H100"] * (n + 1),
        tokens_per_s_per_user=[1000.0, *np.linspace(1.0, 900.0, n)],
        output_tokens_per_s_per_gpu=[1000.0, *[10.0] * n],
        fits_in_memory=[True] * (n + 1),
    )
    fig = fp.pareto_figure(df=pv.ranked(many, pv.Slo(), {}), names={}, slo=pv.Slo(), title="t")
    faint = [t for t in fig.data if t.mode == "markers"]
    assert len(faint[0].x) == n and faint[0].type == "scattergl"
    assert [t.type for t in fig.data if t.mode == "lines+markers"] == ["scatter"]


def test_hover_numbers_come_from_ui_format():
    df = ranked_grid()
    df.loc[0, ["ttft_ms", "tpot_ms", pv.Y, pv.X]] = [1234.5, 0.25, 12345.6, 4000.0]
    text = fp.hover_text(df.iloc[:1], {})[0]
    # 1,234.5 ms -> "1.23 s"; 0.25 ms -> "250 µs"; 12,345.6 -> "12,350"; 4,000 -> "4,000"
    assert "TTFT 1.23 s, TPOT 250 µs" in text
    assert "12,350 output tokens/s per GPU, 4,000 tokens/s per user" in text
    # ranked first: 1 A100 × 2 USD/h ÷ (1,000 tokens/s × 3,600 s/h) × 1e6 = 0.556 USD per 1M
    assert text.startswith("1× A100 TP1 PP1, batch 1, fp16")
    assert "0.556 USD per 1M output tokens" in text and "meets the SLOs" in text


def big_grid(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    df = grid(
        hardware=rng.choice(["H100", "A100"], n).tolist(),
        tokens_per_s_per_user=rng.uniform(1, 100, n).tolist(),
        output_tokens_per_s_per_gpu=rng.uniform(1, 1000, n).tolist(),
        batch_size=rng.integers(1, 512, n).tolist(),
    )
    return pv.ranked(df, pv.Slo(tpot_ms=50), {"H100": 3.0, "A100": 2.0})


def test_large_grids_are_drawn_with_bounded_points():
    fig = fp.pareto_figure(df=big_grid(30_000), names={}, slo=pv.Slo(), title="t")
    faint = [t for t in fig.data if t.mode == "markers"]
    fronts = [t for t in fig.data if t.mode == "lines+markers"]
    assert sum(len(t.x) for t in faint) == fp.MAX_FAINT_POINTS
    assert all(len(t.x) <= fp.MAX_FRONT_POINTS for t in fronts)
    # a dominated point's hover: its configuration from customdata (devices, TP, PP, batch)
    assert all(fp.DOMINATED in t.hovertemplate and t.customdata.shape[1] == 4 for t in faint)


def test_thinning_keeps_both_ends_of_a_front():
    kept = fp.thin_positions(np.arange(1000) + 5, 60)
    assert len(kept) == 60 and kept[0] == 5 and kept[-1] == 1004
    assert (np.diff(kept) > 0).all() and np.diff(kept).max() - np.diff(kept).min() <= 1
    assert fp.thin_positions(np.arange(10), 60).tolist() == list(range(10))


def test_front_hover_names_the_limits_a_point_misses():
    # TTFT 2,500 ms > 2,000 ms and 10 tokens/s per user < 12: both missed, named with units
    df = grid(
        ttft_ms=[2500.0, 100.0],
        tokens_per_s_per_user=[10.0, 20.0],
        output_tokens_per_s_per_gpu=[2000.0, 1000.0],  # both on the front
    )
    slo = pv.Slo(ttft_ms=2000, min_tokens_per_s_per_user=12)
    assert pv.verdicts(df, slo) == [
        "misses TTFT ≤ 2 s, tokens/s per user ≥ 12 tokens/s",
        "meets the SLOs",
    ]
    fig = fp.pareto_figure(df=pv.ranked(df, slo, {}), names={}, slo=slo, title="t")
    hovers = [h for t in fig.data if t.mode == "lines+markers" for h in t.hovertext]
    assert any("misses TTFT ≤ 2 s" in h for h in hovers)
    assert pv.verdicts(grid(fits_in_memory=[False]), slo) == ["does not fit in memory"]
