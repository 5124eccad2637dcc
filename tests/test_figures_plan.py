"""The planner's Pareto chart: one front per accelerator × precision, SLO lines, inert names."""

import pytest

from tests.test_plan_view import grid
from ui import figures_plan as fp
from ui import plan_view as pv


def ranked_grid():
    df = grid(
        hardware=["H100", "H100", "H100", "A100", "A100"],
        tokens_per_s_per_user=[10.0, 20.0, 15.0, 5.0, 8.0],
        output_tokens_per_s_per_gpu=[100.0, 80.0, 70.0, 40.0, 30.0],
        fits_in_memory=[True, True, True, True, False],
    )
    return pv.ranked(df, pv.Slo(tpot_ms=50), {"H100": 3.0, "A100": 2.0})


def test_one_front_and_one_faint_trace_per_group():
    fig = fp.pareto_figure(ranked_grid(), {"H100": "H100 SXM"}, pv.Slo(tpot_ms=50), "t")
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
    fig = fp.pareto_figure(ranked_grid(), {}, pv.Slo(tpot_ms=50, min_tokens_per_s_per_user=12), "t")
    xs = sorted(shape.x0 for shape in fig.layout.shapes)
    assert xs == pytest.approx([12.0, 20.0])  # 1000 / 50 ms = 20 tokens/s per user


def test_names_are_escaped_in_legend_and_hover():
    evil = "<a href='http://x'>x</a>"
    fig = fp.pareto_figure(ranked_grid(), {"H100": evil}, pv.Slo(), "<b>title</b>")
    text = fig.to_json()
    assert "<a href" not in text and "&lt;a href" in text
    assert fig.layout.title.text == "&lt;b&gt;title&lt;/b&gt;"


def test_hover_has_the_whole_configuration():
    df = ranked_grid()
    text = fp.hover_text(df[df["hardware"] == "H100"].iloc[:1], {"H100": "H100 SXM"})[0]
    for part in ("1× H100 SXM", "TP1 PP1", "batch 1", "fp16", "TTFT 100 ms", "TPOT 20 ms"):
        assert part in text
    assert "USD per 1M output tokens" in text
