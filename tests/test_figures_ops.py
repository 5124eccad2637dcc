"""The per-operator figures and table of the serving page (ui/charts/operators.py,
ui/charts/operator_table.py).

Pure: no browser, no streamlit. Step times are checked against engine.serve, one of them by
hand; every figure is validated by plotly when it is built (go.Figure(data=..., layout=...)).
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
import pytest

import engine
from engine.scenarios.bind import bind
from engine.scenarios.deployment import Deployment
from engine.scenarios.requests import Batch
from ui.charts import operator_table as ov
from ui.charts import operators as fo
from ui.words.format import fmt, pct

CATALOG = engine.load_catalog()
H100 = CATALOG.hardware["H100"]
DEPLOY = {"model": "Llama-3.1-70B", "hardware": "H100", "tp": 2, "pp": 1, "batch_size": 1}
DEPLOY |= {"input_tokens": 8192, "output_tokens": 256, "precision": "fp16"}


def tables(profile="trtllm", **change):
    """(engine.serve(...).as_dict(), the operator table of the same deployment)."""
    d = DEPLOY | change
    r = engine.serve(**d, profile=profile, catalog=CATALOG).as_dict()
    dep, request = bind(
        (None, None), d | {"profile": profile, "catalog": CATALOG}, Deployment, Batch
    )
    ops = ov.step_table(dep, request)
    return r, ops


@pytest.fixture(scope="module")
def deployment():
    return tables()


def test_decode_context_is_the_mean_of_the_steps():
    # steps at contexts I+1 … I+O−1: mean (I+1 + I+O−1)/2 = I + O/2 = 8192 + 128
    assert ov.decode_context(8192, 256) == 8320
    assert ov.decode_context(100, 3) == 101  # mean 101.5, floored
    assert ov.decode_context(100, 1) is None  # O = 1: no decode step


def test_bars_sum_to_the_step_times_of_serve(deployment):
    r, ops = deployment
    times = pd.DataFrame(fo.class_times(ops)).set_index("phase")
    assert times.loc["prefill"].sum() == pytest.approx(r["ttft_ms"], rel=1e-9)
    assert times.loc["decode"].sum() == pytest.approx(r["tpot_ms"], rel=1e-9)
    # communication: the serve result's own figure per step
    assert times.loc["decode", "communication"] == pytest.approx(r["decode_comm_ms"], rel=1e-9)
    assert times.loc["prefill", "communication"] == pytest.approx(r["prefill_comm_ms"], rel=1e-9)
    # overhead, by hand: L·τ + d + σ·B = 80 × 0.00206525 µs (trtllm-1.0) + 10 µs (H100)
    # + 1 × 3.28024 µs = 0.01344546 ms
    assert times.loc["decode", "overhead"] == pytest.approx(0.01344546, rel=1e-6)
    fig = fo.step_breakdown(ops)
    for axis, total in (("y", r["ttft_ms"]), ("y2", r["tpot_ms"])):
        bars = [t for t in fig.data if t.yaxis == axis]
        assert sum(t.x[0] for t in bars) == pytest.approx(total, rel=1e-9)
    assert {t.name for t in fig.data} == {
        "attention",
        "GEMMs / FFN",
        "norms, embedding",
        "communication",
        "overhead",
    }


def test_bar_segments_by_hand_llama_8b_one_device():
    # Llama-3.1-8B, one H100, tutorial profile (η_mem 1, τ 10 µs), decode step at context 1025.
    # mlp per layer: 3·4096·14336 = 176,160,768 weights × 2 B = 352,321,536 B, plus activations
    # (2·4096 + 2·2·14336)·2 B = 131,072 B: 352,452,608 B; ×32 layers = 11,278,483,456 B at
    # 3.35 TB/s = 3.36671 ms (compute 352 MFLOP / (989 TFLOP/s × 0.5) = 0.71 µs: memory-bound).
    r, ops = tables("tutorial", model="Llama-3.1-8B", tp=1, input_tokens=1024, output_tokens=2)
    decode = ops[ops["phase"] == "decode"].set_index("name")
    assert decode.loc["mlp", "total_time_ms"] == pytest.approx(3.36671, rel=1e-5)
    assert decode.loc["mlp", "bottleneck"] == "memory"
    times = pd.DataFrame(fo.class_times(ops)).set_index("phase")
    assert times.loc["decode", "overhead"] == pytest.approx(0.33, rel=1e-9)  # 32×10 µs + 10 µs
    assert times.loc["decode", "communication"] == 0  # one device: no all-reduce
    assert times.loc["decode"].sum() == pytest.approx(r["tpot_ms"], rel=1e-9)


def test_one_point_per_operator_with_flops(deployment):
    _, ops = deployment
    fig = fo.operator_roofline(ops, fo.roof_values(deployment[1], H100.name), "t")
    traces = {t.name: t for t in fig.data if (t.name or "").startswith("Operators")}
    assert set(traces) == {"Operators: prefill (TTFT)", "Operators: decode step (TPOT)"}
    # per phase: norm, qkv_projection, output_projection, attention, mlp, final_norm, lm_head
    # (embedding has no FLOPs, all_reduce and overhead are bars, not points)
    expected = [
        "norm",
        "qkv_projection",
        "output_projection",
        "attention",
        "mlp",
        "final_norm",
        "lm_head",
    ]
    for trace in traces.values():
        assert list(trace.text) == expected
    points = pd.DataFrame(fo.operator_points(ops))
    assert len(points) == 14
    # each operator sits on its own roof: achieved = FLOPs / own time
    mlp = points[(points["phase"] == "decode") & (points["name"] == "mlp")].iloc[0]
    assert mlp["achieved_flop_per_s"] == pytest.approx(mlp["flops"] / (mlp["time_ms"] * 1e-3))


def test_hover_names_the_operator_and_its_figures(deployment):
    _, ops = deployment
    fig = fo.operator_roofline(ops, fo.roof_values(deployment[1], H100.name), "t")
    decode = next(t for t in fig.data if t.name == "Operators: decode step (TPOT)")
    hover = decode.hovertext[list(decode.text).index("attention")]
    row = ops[(ops["phase"] == "decode") & (ops["name"] == "attention")].iloc[0]
    assert "<b>attention</b>" in hover and "layers 0–79" in hover and "×80" in hover
    assert fmt(row["flops"], "FLOP") in hover and fmt(row["bytes"], "B") in hover
    assert fmt(row["time_ms"] * 1e-3, "s") in hover and "memory-bound" in hover
    # decode GEMMs all sit at intensity ≈ 1 on the memory roof: each names the others
    qkv = decode.hovertext[list(decode.text).index("qkv_projection")]
    assert "same point as:" in qkv and "mlp" in qkv.split("same point as:")[1]


def test_user_text_is_escaped(deployment):
    _, ops = deployment
    hostile = ops.copy()
    hostile.loc[hostile["name"] == "mlp", "name"] = "<img src=x onerror=alert(1)>"
    hostile.loc[:, "layer"] = "<b>0</b>"
    roof = fo.roof_values(deployment[1], H100.name) | {"name": "<i>H</i>"}
    fig = fo.operator_roofline(hostile, roof, "<script>t</script>")
    text = str(fig.to_plotly_json())
    assert "<img" not in text and "<script>" not in text and "<b>0</b>" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text and "&lt;i&gt;H&lt;/i&gt;" in text


def test_roofs_use_the_profile_efficiencies(deployment):
    _, ops = deployment
    roof = fo.roof_values(ops, H100.name)
    # memory roof: 3.35 TB/s × η_mem 0.669299 = 2.24215 TB/s (from the engine's table)
    assert roof["bandwidth"] == pytest.approx(3.35e12 * 0.669299)
    fig = fo.operator_roofline(ops, roof, "t")
    dotted = {t.name: t.y[0] for t in fig.data if "peak × η" in (t.name or "")}
    assert all(fig.data[[t.name for t in fig.data].index(n)].line.dash == "dot" for n in dotted)
    # GEMMs at 989 TFLOP/s × 0.866565 = 857.03 TFLOP/s; attention × 0.636858 = 629.85
    assert sorted(round(v, 2) for v in dotted.values()) == [629.85, 857.03]
    solid = next(t for t in fig.data if t.line and t.line.dash == "solid" and t.mode == "lines")
    assert solid.y[0] / solid.x[0] == pytest.approx(3.35 * 0.669299)  # TFLOP/s per FLOP/byte
    assert [t.line.dash for t in fig.data if t.mode == "lines"].count("dash") == 1


def test_a_class_on_two_roofs_draws_both_named_by_their_operators():
    # DeepSeek-V3.2-Exp fp8 on H200: its indexer's scores at the fp8 peak (1,979 TFLOP/s),
    # attention at the 16-bit 989, both × trtllm-1.0's attention efficiency 0.636858
    _, ops = tables(model="DeepSeek-V3.2-Exp", hardware="H200", tp=8, precision="fp8")
    roof = fo.roof_values(ops, CATALOG.hardware["H200"].name)
    levels = {names: rate for _, rate, names in roof["classes"]["attention"]}
    assert levels[("indexer",)] == pytest.approx(1979e12 * 0.636858)
    assert levels[("attention",)] == pytest.approx(989e12 * 0.636858)
    fig = fo.operator_roofline(ops, roof, "t")
    dotted = {t.name: t.y[0] for t in fig.data if "peak × η" in (t.name or "")}
    assert dotted["indexer peak × η 63.7%: 1.26 PFLOP/s"] == pytest.approx(1260.34, rel=1e-4)
    assert dotted["attention peak × η 63.7%: 630 TFLOP/s"] == pytest.approx(629.85, rel=1e-4)
    # one level per class (Llama) keeps the class's name
    assert len(fo.roof_values(tables()[1], H100.name)["classes"]["attention"]) == 1


def test_whole_step_point_and_gap(deployment):
    r, ops = deployment
    steps = pd.DataFrame(fo.step_points(ops)).set_index("phase")
    assert steps.loc["prefill", "flop"] == pytest.approx(r["prefill_flop"], rel=1e-12)
    assert steps.loc["prefill", "bytes"] == pytest.approx(r["prefill_bytes"], rel=1e-12)
    assert steps.loc["decode", "step_s"] * 1e3 == pytest.approx(r["tpot_ms"], rel=1e-9)
    # gap = communication + overhead: 0.01344546 ms per decode step besides the all-reduces
    assert steps.loc["decode", "gap_s"] * 1e3 == pytest.approx(r["decode_comm_ms"] + 0.01344546)
    fig = fo.operator_roofline(ops, fo.roof_values(ops, H100.name), "t")
    star = next(t for t in fig.data if t.name == "Whole decode step (TPOT)")
    flop = steps.loc["decode", "flop"]
    assert star.y[1] * 1e12 == pytest.approx(flop / (r["tpot_ms"] * 1e-3))  # filled: step
    assert star.y[0] > star.y[1]  # open point above: the operators alone


def test_one_output_token_has_no_decode_step():
    r, ops = tables(output_tokens=1)
    assert set(ops["phase"]) == {"prefill"}
    fig = fo.step_breakdown(ops)
    assert {t.yaxis for t in fig.data} == {"y"}
    assert sum(t.x[0] for t in fig.data) == pytest.approx(r["ttft_ms"], rel=1e-9)


def test_display_and_csv_tables(deployment):
    r, ops = deployment
    shown = ov.display_table(ops)
    assert "Time (all instances)" in shown.columns and "FLOPs (each)" in shown.columns
    mlp = shown[(shown["Phase"] == "decode") & (shown["Operator"] == "mlp")].iloc[0]
    assert mlp["Bytes moved (each)"] == "705 MB"  # 704,790,528 B at 3 significant figures
    csv = ov.csv_table(ops, r)
    text = engine.to_csv(csv)
    header = text.splitlines()[0].split(",")
    assert header[:3] == ["model", "hardware", "tp"] and "profile" in header
    assert header[10:12] == ["phase", "context_tokens"]
    for column in (
        "flop_per_op",
        "bytes_per_op",
        "total_time_ms",
        "link_efficiency_fraction",
        "compute_efficiency_fraction",
        "layer_overhead_us",
    ):
        assert column in header
    assert all(c == c.lower() and " " not in c for c in header)
    assert (csv["profile"] == "trtllm").all() and len(csv) == len(ops)
    assert pd.read_csv(__import__("io").StringIO(text))["total_time_ms"].sum() == pytest.approx(
        r["ttft_ms"] + r["tpot_ms"], rel=1e-9
    )


def test_a_communication_bound_step_names_only_the_operators_that_show():
    # Qwen3-235B fp8 on 8 H100, EP 8: the all-reduces take 83.5 % of a decode step, so its
    # operators take 11.8 % (routed experts), 2.2 % and 1.7 %, at one place; the prefill's
    # second and third, 2.6 % and 1.4 %. Only the largest of each phase is named (the hover
    # names every one): five labels once lay over one another there
    dep = Deployment("Qwen3-235B-A22B", "H100", tp=8, ep=8, precision="fp8")
    ops = ov.step_table(dep, Batch(input_tokens=1024, output_tokens=256, batch_size=1))
    points = pd.DataFrame(fo.operator_points(ops))
    notes = [
        a.text
        for a in fo.operator_roofline(ops, fo.roof_values(ops, H100.name), "t").layout.annotations
    ]
    for phase in ("prefill", "decode"):
        part = points[points["phase"] == phase].nlargest(fo.LABELLED, "share")
        assert part["share"].iloc[0] > fo.MIN_SHARE > part["share"].iloc[1:].max()
    assert sorted(notes)[-2:] == ["routed_experts", "routed_experts"]  # prefill's, decode's
    assert len(notes) == 4  # and the two whole steps


def test_figures_pass_plotly_validation(deployment):
    _, ops = deployment  # the builders skip validation for speed: validate here
    roof = fo.roof_values(ops, H100.name)
    for fig in (fo.operator_roofline(ops, roof, "t"), fo.step_breakdown(ops)):
        assert len(go.Figure(fig.to_dict()).data) == len(fig.data)


def test_the_largest_operators_and_each_step_are_labelled_beside_their_points(deployment):
    _, ops = deployment
    fig = fo.operator_roofline(ops, fo.roof_values(ops, H100.name), "t")
    notes = [a.text for a in fig.layout.annotations]
    points = pd.DataFrame(fo.operator_points(ops))
    lines = [note.split("<br>") for note in notes]  # operators at one place share a label
    for phase in ("prefill", "decode"):
        top = points[points["phase"] == phase].nlargest(fo.LABELLED, "share")
        for name in top["name"]:
            assert sum(name in note for note in lines) >= 1, (phase, name, notes)
    # a whole step's label, in lines of at most 20 columns (one ran past a phone's chart)
    assert "<b>whole decode step</b><br><b>(TPOT)</b>" in notes
    assert "<b>whole prefill (TTFT)</b>" in notes
    for a in fig.layout.annotations:  # an arrow from a corner of the plot to its point
        assert a.showarrow and (a.axref, a.ayref) == ("x", "y"), a.text
        assert (a.ax, a.ay) != (a.x, a.y), a.text


def _op(name: str, at: tuple[float, float], share: float) -> dict:
    """A prefill operator at (FLOP/B, TFLOP/s) taking `share` of its step."""
    intensity, tflops = at
    return {
        "phase": "prefill",
        "name": name,
        "share": share,
        "arithmetic_intensity_flop_per_byte": intensity,
        "achieved_flop_per_s": tflops * 1e12,
    }


def test_labels_stand_in_two_columns_a_line_apart_at_the_least_plot_height():
    # a prefill's GEMMs at one intensity and rate (as /decode's default: mlp, qkv_projection,
    # output_projection at log10 x 2.83-2.87, y 2.431), the whole prefill 0.04 dex lower, and
    # a memory-bound operator at 2 FLOP/B: the axes 0.1-6,000 FLOP/B (log10 -1 to 3.78) and
    # 0.1-2,000 TFLOP/s (-1 to 3.30)
    ops = [_op("mlp", (740.0, 270.0), 0.5), _op("qkv", (720.0, 270.0), 0.2)]
    ops += [_op("out", (680.0, 270.0), 0.1), _op("norm", (2.0, 4.0), 0.05)]
    # flop / bytes = 650 FLOP/B; flop / step_s = 247 TFLOP/s (0.04 dex below 270)
    step = {"phase": "prefill", "flop": 650e12, "bytes": 1e12, "step_s": 650 / 247}
    notes = fo._labels(ops, [step], x_range=(0.1, 6000.0), y_range=(0.1, 2000.0))
    # the three GEMMs share a label (MERGE_DEX); norm (5 %) is not among the largest three
    assert sorted(a["text"] for a in notes) == ["<b>whole prefill (TTFT)</b>", "mlp<br>qkv<br>out"]
    # both points are in the right half of the x range: the bottom-right column, from the
    # lowest point up: the step (247 TFLOP/s) at the bottom, the GEMMs above it
    assert [a["text"] for a in notes] == ["<b>whole prefill (TTFT)</b>", "mlp<br>qkv<br>out"]
    dex_y = (math.log10(2000.0) + 1) / fo.PLOT_PX[0]  # 4.30 dex over 250 px: 0.0172 dex a pixel
    assert notes[0]["ay"] == pytest.approx(-1 + fo.PAD_PX * dex_y)  # 6 px above the bottom
    # the next label one line (16 px) and a gap (6 px) higher: 22 px, 0.378 dex
    assert notes[1]["ay"] - notes[0]["ay"] == pytest.approx((fo.LINE_PX + fo.GAP_PX) * dex_y)
    assert all(a["xanchor"] == "right" and a["yanchor"] == "bottom" for a in notes)
    assert all(a["ax"] < math.log10(6000.0) for a in notes)  # inside the plot's right edge
    # a memory-bound operator in the left half: named from the top-left corner, down
    norm = [_op("norm", (2.0, 4.0), 0.6)]
    left = fo._labels(norm, [], x_range=(0.1, 6000.0), y_range=(0.1, 2000.0))
    assert left[0]["xanchor"] == "left" and left[0]["yanchor"] == "top"
    assert left[0]["ay"] == pytest.approx(math.log10(2000.0) - fo.PAD_PX * dex_y)
    assert left[0]["ax"] > -1  # inside the plot's left edge


def test_binding_text_names_the_operator_that_takes_most_of_each_step(deployment):
    r, ops = deployment
    text = ov.binding_text(ops)
    decode = ops[ops["phase"] == "decode"]
    top = decode.loc[decode["total_time_ms"].idxmax()]
    share = top["total_time_ms"] / decode["total_time_ms"].sum()
    assert text.startswith("**Which operator binds.** In a decode step (TPOT ")
    assert f"**{top['name']}** takes {pct(share)} of the time, {top['bottleneck']}-bound" in text
    assert "In the prefill (TTFT " in text and fmt(r["ttft_ms"] * 1e-3, "s") in text


def test_the_fixed_overhead_is_named_once_in_the_summary():
    # DeepSeek-V3.2-Exp on 8 H200: the prefill's third largest share is the step's fixed
    # overhead, named in words and not given a bound of its own
    _, ops = tables(
        model="DeepSeek-V3.2-Exp", hardware="H200", tp=8, precision="fp8", input_tokens=1024
    )
    text = ov.binding_text(ops)
    assert "and the fixed overhead " in text
    assert "(fixed overhead)" not in text and "overhead (" not in text
    assert "**all\\_reduce** takes" in text and "communication-bound" in text
