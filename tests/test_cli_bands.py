"""Every CLI prediction carries its error band: `serve`, `load` and `train` add
`error_band_pct`, `error_band_basis` and `off_calibrated_ground` to their JSON, CSV and table,
the same numbers the pages show (engine.prediction_band and engine.training_band)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

import engine
from engine.accuracy.bands import EDITED
from engine.cli.main import main

KEYS = ("error_band_pct", "error_band_basis", "off_calibrated_ground")
HELD = "held_out_nvfp4_mape_pct"
SERVE = ["serve", "--batch-size", "8", "--input-tokens", "1000", "--output-tokens", "100"]
LOAD = ["load", "--model", "Llama-3.1-8B", "--hardware", "H100", "--precision", "fp8"]
LOAD += ["--input-tokens", "500", "--output-tokens", "50", "--requests", "40", "--rate", "2"]
TRAIN = ["train", "--model", "Llama-3.1-8B", "--gpus", "8", "--global-batch-size", "64"]
TRAIN += ["--seq-len", "4096"]


def json_of(capsys, *argv) -> dict:
    assert main([*argv, "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert not err
    return json.loads(out)


def trtllm_band() -> float:
    return engine.error_band(engine.get_profile("trtllm-1.0")).pct


def test_serve_on_the_fitted_ground_carries_the_band_and_no_reason(capsys):
    # trtllm-1.0 is fitted on H100 and H200 fp8 rows of dense and MoE models: 70B fp8 on H100
    # is on its ground, and its band is the larger of its two leave-one-out MAPEs (21.7 %).
    d = json_of(
        capsys,
        *SERVE,
        "--model",
        "Llama-3.1-70B",
        "--hardware",
        "H100",
        "--tp",
        "2",
        "--precision",
        "fp8",
    )
    assert d["profile"] == "trtllm-1.0"
    assert d["error_band_pct"] == pytest.approx(trtllm_band(), rel=1e-12)
    assert 20 < d["error_band_pct"] < 30
    assert d["error_band_basis"].startswith("the larger of the leave-one-model-out")
    assert "112 rows of trtllm-v1.0-perf-overview.csv" in d["error_band_basis"]
    assert d["off_calibrated_ground"] == ""
    assert list(d)[-3:] == list(KEYS)  # after the command's own keys


def test_serve_off_the_ground_says_why_beside_the_band(capsys):
    d = json_of(
        capsys, *SERVE, "--model", "Llama-3.1-70B", "--hardware", "B200", "--precision", "nvfp4"
    )
    off = d["off_calibrated_ground"]
    assert "B200 was not among the fitted accelerators (H200, H100)" in off
    assert "nvfp4 was not among the fitted precisions (fp8)" in off
    # nvfp4: the larger of the profile's band and the error measured on the fp4 rows the fit
    # left out (the test below); with the kernel transfer those rows are 21.5 % off, inside
    # the fitted band of 21.7 %, so the band stays the profile's
    held = engine.get_profile("trtllm-1.0").residuals["held_out_nvfp4_mape_pct"]
    assert held < trtllm_band()
    assert d["error_band_pct"] == pytest.approx(trtllm_band(), rel=1e-12)


def test_an_edited_assumption_is_said_in_the_basis(capsys):
    base = [*SERVE, "--model", "Llama-3.1-8B", "--hardware", "H100", "--precision", "fp8"]
    plain = json_of(capsys, *base)
    edited = json_of(capsys, *base, "--efficiency", "0.7")
    assert not plain["error_band_basis"].endswith(EDITED)
    assert edited["error_band_basis"] == plain["error_band_basis"] + EDITED
    assert edited["error_band_pct"] == plain["error_band_pct"]


def test_a_named_profile_brings_its_own_band(capsys):
    d = json_of(
        capsys, *SERVE, "--model", "Llama-3.1-8B", "--hardware", "A100", "--profile", "trtllm-0.6.1"
    )
    assert d["error_band_pct"] == pytest.approx(
        engine.error_band(engine.get_profile("trtllm-0.6.1")).pct, rel=1e-12
    )
    assert d["off_calibrated_ground"] == ""  # fitted on A100, H100 and L40S fp16 rows


def test_serve_table_shows_the_band(capsys):
    argv = [*SERVE, "--model", "Llama-3.1-8B", "--hardware", "B200", "--format", "table"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"{trtllm_band():.4g}" in out
    assert "B200 was not among the fitted accelerators" in out


def test_load_runs_and_searches_carry_the_band(capsys):
    run = json_of(capsys, *LOAD)
    disagg = json_of(capsys, *LOAD, "--prefill-workers", "1", "--decode-workers", "1")
    search = json_of(
        capsys,
        *[a for a in LOAD if a not in ("--rate", "2")],
        "--max-rate",
        "--workers",
        "1",
        "--confirm-seeds",
        "1",
    )
    for d in (run, disagg, search):
        assert d["error_band_pct"] == pytest.approx(trtllm_band(), rel=1e-12)
        assert d["off_calibrated_ground"] == ""  # 8B fp8 on H100: on the ground
    fp16 = json_of(capsys, *[a if a != "fp8" else "fp16" for a in LOAD])
    assert fp16["off_calibrated_ground"] == "fp16 was not among the fitted precisions (fp8)"


def test_train_carries_the_training_band_the_page_shows(capsys):
    d = json_of(capsys, *TRAIN, "--hardware", "B200")
    run = engine.TrainRun("Llama-3.1-8B", "B200", gpus=8, global_batch_size=64, seq_len=4096)
    band, why = engine.training_band(run)
    assert d["error_band_pct"] == pytest.approx(band.pct, rel=1e-12)
    assert d["error_band_basis"] == str(band.basis)
    assert d["off_calibrated_ground"] == "; ".join(map(str, why))
    assert d["off_calibrated_ground"].startswith("Blackwell is not the fitted Ampere")
    assert main([*TRAIN, "--hardware", "B200", "--format", "csv"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split(",")
    assert set(KEYS) <= set(header)


def test_prediction_band_lists_each_reason_once():
    profile = engine.get_profile("trtllm-1.0")
    arch = engine.default_catalog().find_model("Llama-3.1-8B").arch
    found = engine.prediction_band(
        profile, arch, hardware=["B200", "B200", "H100"], precision=["fp16", "fp8"]
    )
    said = found.as_dict()["off_calibrated_ground"].split("; ")
    assert said == [
        "B200 was not among the fitted accelerators (H200, H100)",
        "fp16 was not among the fitted precisions (fp8)",
    ]
    assert (
        engine.prediction_band(profile, None, hardware="B200", precision="fp16").off == ()
    )  # no architecture


def test_a_prediction_in_a_format_the_fit_left_out_carries_that_formats_measured_error(capsys):
    # trtllm-1.0 was fitted on the 1.0 file's 112 fp8 rows (band 21.7 %, the larger leave-one-
    # out MAPE); its recorded command left the 216 fp4 rows out and predicted them: 21.5 % MAPE
    # (28.5 % before the kernel transfer). A prediction in a left-out format carries the larger
    # of the two figures: here the band; the same profile with 30 % on those rows, 30 %.
    profile = engine.get_profile("trtllm-1.0")
    held = profile.residuals["held_out_nvfp4_mape_pct"]
    assert held == pytest.approx(21.5, abs=0.05) and profile.residuals["held_out_nvfp4_rows"] == 216
    base = [*SERVE, "--model", "Llama-3.1-70B", "--hardware", "B200", "--precision"]
    for precision in ("nvfp4", "fp4"):
        shipped = json_of(capsys, *base, precision)
        assert shipped["error_band_pct"] == pytest.approx(trtllm_band(), rel=1e-12)
        assert shipped["error_band_basis"].startswith("the larger of the leave-one-model-out")
    worse = replace(profile, name="worse", residuals={**profile.residuals, HELD: 30.0})
    for precision in ("nvfp4", "fp4"):
        band = engine.held_out_band(worse, precision)
        assert band.pct == 30.0
        basis = str(band.basis)
        assert basis.startswith(
            "the MAPE of the 216 nvfp4 rows of trtllm-v1.0-perf-overview.csv that the fit left out"
        )
        assert "leave-one-out error, 21.7 %" in basis
    assert engine.held_out_band(worse, "fp8") == engine.error_band(profile)
    # the fp4 rows are also the 1.0 file's rows that validate judges out of sample
    (v1,) = [p for p in engine.shipped_measurements() if p.name.startswith("trtllm-v1.0")]
    rows = engine.read_measurements([v1])
    df = engine.validate(rows, profile)
    assert df.loc[~df["in_sample"], "ape_pct"].mean() == pytest.approx(held, rel=1e-9)


def test_a_profile_without_held_out_rows_keeps_its_band_in_every_format():
    profile = engine.get_profile("trtllm-0.6.1")
    for precision in ("fp16", "fp8", "nvfp4", "w4a16"):
        assert engine.held_out_band(profile, precision) == engine.error_band(profile)
