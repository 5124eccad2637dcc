"""The one error-band helper every serving page calls (ui/charts/bands.py): words, shading,
error bars and CSV columns, fed by the engine's Band and calibrated ground."""

import math
from dataclasses import replace

import pandas as pd
import plotly.graph_objects as go

import engine
from ui.charts import bands

CAT = engine.default_catalog()
TRT = engine.get_profile("trtllm-0.6.1")  # band 21.2 %: leaving an accelerator out
LLAMA = CAT.models["Llama-2-70B"].arch
BY_HAND = engine.Message("by_hand", "by hand")  # a basis set by hand


def test_the_sentence_on_the_fitted_ground():
    n = bands.note(profile=TRT, arch=LLAMA, hardware="H100", precision="fp8")
    assert n.off == () and n.short() == "±21.2%"
    text = bands.sentence(n, "3,900 tokens/s per GPU")
    assert text.startswith(
        "3,900 tokens/s per GPU, typically within ±21.2% for profile trtllm-0.6.1"
    )
    assert "leave-one-model-out" in text and text.endswith("; wider off the fitted hardware.")


def test_the_sentence_off_the_ground_names_every_reason_once():
    mixtral = CAT.models["Mixtral-8x7B"].arch
    n = bands.note(
        profile=TRT, arch=mixtral, hardware=["MI300X", "MI300X"], precision=["bf16", "fp8"]
    )
    assert len(n.off) == 3  # MI300X, bf16 (fp8 is on the ground), moe: each once
    text = bands.sentence(n)
    assert "Off the profile's calibrated ground: MI300X was not among" in text
    assert "bf16 was not among the fitted precisions" in text and "moe models" in text
    assert "a floor there, not an estimate" in text and "wider off the fitted" not in text


def test_an_unmeasured_band_and_an_edited_profile_say_so():
    n = bands.note(
        profile=engine.get_profile("vllm"),
        arch=LLAMA,
        hardware="MI300X",
        precision="fp8",
        edited=True,
    )
    text = bands.sentence(n, "12 ms")
    assert n.short() == "not measured"
    assert text.startswith("12 ms, the error of profile vllm is not measured (not measured out")
    assert text.endswith("your edits of its assumptions are not measured.")


def _figure() -> go.Figure:
    return go.Figure(
        [
            go.Scatter(
                x=[1, 2], y=[100, 200], mode="lines+markers", name="a", line={"color": "#1f77b4"}
            ),
            go.Scatter(
                x=[2, 4],
                y=[200, 50],
                mode="lines",
                name="past memory",
                line={"color": "#d62728", "dash": "dash"},
            ),
            go.Scatter(x=[2], y=[200], mode="markers", name="This scenario (batch 2)"),
        ]
    )


def test_shade_draws_the_band_under_solid_lines_only():
    n = bands.Note("trtllm", engine.Band(10.0, BY_HAND))
    fig = bands.shade(_figure(), n)
    assert [t.name for t in fig.data][1:] == ["a", "past memory", "This scenario (batch 2)"]
    band = fig.data[0]  # drawn first: under the lines
    assert band.fill == "toself" and band.legendgroup == bands.GROUP and band.showlegend
    assert band.fillcolor == "rgba(31,119,180,0.13)"
    # y = 100, 200 ± 10 %: the upper edge 110, 220 out, the lower edge 180, 90 back
    assert list(band.x) == [1, 2, 2, 1]
    assert [round(v, 9) for v in band.y] == [110, 220, 180, 90]


def test_points_marked_as_not_fitting_get_no_band():
    fig = go.Figure(
        [
            go.Scatter(
                x=[1, 2, 4],
                y=[100, 200, 400],
                mode="lines+markers",
                name="a",
                marker={"symbol": ["circle", "circle", "x-open"]},
            )
        ]
    )
    band = bands.shade(fig, bands.Note("p", engine.Band(10.0, BY_HAND))).data[0]
    assert list(band.x) == [1, 2, 2, 1]  # batch 4 does not fit: no band there


def test_an_empty_line_gets_no_band():
    fig = go.Figure([go.Scatter(x=[], y=[], mode="lines+markers", marker={"symbol": []})])
    assert len(bands.shade(fig, bands.Note("p", engine.Band(10.0, BY_HAND))).data) == 1


def test_no_band_is_drawn_when_it_is_not_measured_or_reaches_zero():
    for pct in (None, 100.0):
        fig = bands.shade(_figure(), bands.Note("p", engine.Band(pct, BY_HAND)))
        assert len(fig.data) == 3


def test_bars_mark_the_named_points_with_percent_error_bars():
    fig = bands.bars(_figure(), bands.Note("p", engine.Band(13.6, BY_HAND)), ["This scenario"])
    star = fig.data[2]
    assert star.error_y.type == "percent" and star.error_y.value == 13.6
    assert fig.data[0].error_y.value is None


def test_csv_columns_per_row():
    df = pd.DataFrame({"hardware": ["H100", "MI300X", "H100"], "precision": ["fp8"] * 3})
    off = bands.ground_column(
        profile=TRT, arch=LLAMA, hardware=df["hardware"], precision=df["precision"]
    )
    assert off[0] == off[2] == () and [m.code for m in off[1]] == ["off_fitted_hardware"]
    out = bands.with_columns(
        df, bands.note(profile=TRT, arch=LLAMA, hardware="H100", precision="fp8"), off
    )
    assert list(out.columns[-3:]) == ["error_band_pct", "error_band_basis", "off_calibrated_ground"]
    assert out["error_band_pct"].round(1).tolist() == [21.2] * 3
    # the CSV's English: the row's reasons as the engine says them ('' when on the ground)
    assert out["off_calibrated_ground"].tolist() == ["", str(off[1][0]), ""]
    assert out["off_calibrated_ground"].iloc[1].startswith("MI300X was not among")
    blank = bands.with_columns(
        df, bands.Note("vllm", engine.error_band(engine.get_profile("vllm")))
    )
    assert math.isnan(blank["error_band_pct"].iloc[0])
    assert blank["error_band_basis"].iloc[0].startswith("not measured")


def test_without_shapes_there_is_no_ground_to_leave():
    assert bands.ground_column(profile=TRT, arch=None, hardware=["MI300X"], precision=["bf16"]) == [
        ()
    ]
    assert bands.note(profile=TRT, arch=None, hardware="MI300X", precision="bf16").off == ()


def test_a_fitted_profile_travels_by_link_with_its_band_and_ground():
    from ui.core import profiles
    from ui.links.params import to_query

    team = replace(TRT, name="team", origin="page")
    values = profiles.link_values(team)
    assert round(values["error_band_pct"], 1) == 21.2 and values["fitted_hardware"] == [
        "H100",
        "A100",
        "L40S",
    ]
    query = to_query(values, profiles.params(team))
    assert query["fitted_families"] == "dense,parallel-attention"
    linked, warnings = profiles.profile_from_query({k: [v] for k, v in query.items()})
    assert warnings == [] and linked.name == "team" and linked.origin == "link"
    assert round(engine.error_band(linked).pct, 1) == 21.2
    mixtral = CAT.models["Mixtral-8x7B"].arch
    assert engine.off_ground(
        profile=linked, arch=mixtral, hardware="MI300X", precision="fp8"
    ) == engine.off_ground(profile=TRT, arch=mixtral, hardware="MI300X", precision="fp8")
    bad = {k: [v] for k, v in query.items()} | {"fitted_hardware": ["<b>"]}
    linked, warnings = profiles.profile_from_query(bad)
    assert linked.name == engine.DEFAULT_PROFILE and "'<b>' is not an id" in warnings[0]


def test_each_row_carries_the_band_of_its_own_precision():
    # trtllm-1.0: 21.7 % on its fitted fp8 rows; 21.5 % measured on the nvfp4 rows its fit left
    # out, inside that band. Here the same profile with 30 % on them: a grid mixing both
    # formats gives each row its own figure, and the grid's sentence the larger.
    shipped = engine.get_profile("trtllm-1.0")
    assert engine.held_out_band(shipped, "nvfp4") == engine.error_band(shipped)
    residuals = {**shipped.residuals, "held_out_nvfp4_mape_pct": 30.0}
    t10 = replace(shipped, residuals=residuals)
    base, held = engine.error_band(t10).pct, 30.0
    frame = pd.DataFrame(
        {"hardware": ["H100", "B200", "B200"], "precision": ["fp8", "nvfp4", "fp4"]}
    )
    arch = CAT.models["Llama-3.1-70B"].arch
    note = bands.note(profile=t10, arch=arch, hardware=["H100", "B200"], precision=["fp8", "nvfp4"])
    assert note.pct == held
    per_row = bands.row_bands(t10, frame["precision"])
    assert [b.pct for b in per_row] == [base, held, held]
    out = bands.with_columns(frame, note, per_row=per_row)
    assert out["error_band_pct"].tolist() == [base, held, held]
    assert out["error_band_basis"][0].startswith("the larger of the leave-one-model-out")
    assert out["error_band_basis"][1].startswith("the MAPE of the 216 nvfp4 rows")
    assert [bands.short(b) for b in per_row] == ["±21.7%", "±30%", "±30%"]
