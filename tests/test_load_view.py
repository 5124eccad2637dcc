"""The serving-under-load page's tables and CSVs (ui/load/view.py), without a browser: true or
false read as yes or no, no figure past saturation written as if the fast path had one, and
every column's unit in its name."""

from __future__ import annotations

import io
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import engine
from ui.charts import bands
from ui.load import view as lv
from ui.words import tables

KW = {"input_tokens": 512, "output_tokens": 128, "profile": "tutorial"}


@pytest.fixture(scope="module")
def grid() -> pd.DataFrame:
    # Llama-3.1-8B on H100 saturates at about 46 requests/s: 60 and 80 are past it
    return engine.load_grid(["Llama-3.1-8B"], ["H100"], rates=[1.0, 20.0, 60.0, 80.0], **KW)


@pytest.fixture(scope="module")
def band():
    return bands.note(band_profile(), arch=None, hardware="H100", precision="fp16")


def band_profile() -> engine.Profile:
    return engine.get_profile("tutorial")


def test_the_fast_path_past_saturation_has_no_steady_state_figures(grid):
    past = grid["stable"] == 0
    assert list(past) == [False, False, True, True]
    assert not np.isfinite(grid.loc[past, "ttft_ms_p50"]).any()  # the engine's frame: inf
    assert (grid.loc[past, "tpot_ms_p50"] > 1e6).all()  # and TPOTs of days
    curve = lv.steady_curve(grid)
    assert curve["stable"].dtype == bool and list(curve["stable"]) == [True, True, False, False]
    for column in ("ttft_ms_p50", "tpot_ms_p99", "e2e_latency_ms_mean", "requests_per_s"):
        assert curve.loc[past, column].isna().all(), column
        assert curve.loc[~past, column].to_numpy() == pytest.approx(grid.loc[~past, column])
    for column in ("kv_cache_utilisation", "mean_running_requests", "output_tokens_per_s"):
        assert curve.loc[past, column].isna().all(), column
    kept = ("rate_per_s", "saturation_rate_per_s", "meets_slo", "price_per_hour_usd")
    assert curve[list(kept)].equals(grid[list(kept)])  # what holds at any rate is kept


def test_the_curve_csv_writes_empty_cells_and_false_past_saturation(grid, band):
    text = engine.to_csv(lv.csv_frame(lv.steady_curve(grid), band))
    assert "inf" not in text.lower()
    df = pd.read_csv(io.StringIO(text))
    assert list(df["stable"]) == [True, True, False, False]
    assert df.loc[2:, "tpot_ms_p50"].isna().all() and df.loc[:1, "tpot_ms_p50"].notna().all()
    assert df["tpot_ms_p50"].max() < 1e3  # not 170,270,402 ms
    # the unit in the name: a fraction of the KV pool's blocks
    assert "kv_cache_utilisation" not in df and "kv_cache_utilisation_fraction" in df
    assert df.loc[:1, "kv_cache_utilisation_fraction"].between(0, 1).all()
    assert set(df["error_band_pct"]) == {band.pct}
    assert "off_calibrated_ground" in df and "edits" not in df["error_band_basis"].iloc[0]
    # edited on the page: every row's basis says the band is the profile's as fitted, in the
    # engine's words (the CLI's `load --efficiency ...` writes the same)
    edited = lv.csv_frame(lv.steady_curve(grid), replace(band, edited=True))
    said = engine.prediction_band(
        band_profile(), None, hardware="H100", precision="fp16", edited=True
    ).as_dict()
    assert set(edited["error_band_basis"]) == {said["error_band_basis"]}
    assert said["error_band_basis"].endswith("edits of its assumptions are not measured)")


def test_every_csv_of_the_page_names_its_units(band):
    r = engine.serve_load("Llama-3.1-8B", "H100", rate=5.0, requests=100, **KW)
    series = lv.csv_frame(lv.series_frame(r), band)
    assert {"time_s", "running_requests", "queued_requests", "kv_in_use_fraction"} <= set(series)
    assert series["kv_in_use_fraction"].between(0, 1).all()
    per = lv.per_request_frame(r).assign(**{k: v for k, v in r.values.items() if k != "trace"})
    per = lv.csv_frame(per, band)
    for bare in ("kv_cache_utilisation", "slo_attainment", "length_spread", "kv_in_use"):
        assert bare not in per
    assert {"kv_cache_utilisation_fraction", "slo_attainment_fraction"} <= set(per)
    assert per["slo_attainment_fraction"].between(0, 1).all()


def test_true_and_false_read_as_yes_and_no_in_the_readers_language(grid):
    table = tables.table(lv.steady_curve(grid), lv.CURVE_TABLE)
    assert list(table["Steady state"]) == ["yes", "yes", "no", "no"]  # the fast path's 1.0, 0.0
    assert set(table["Meets the SLOs"]) <= {"yes", "no"}
    assert table["TTFT p50"].iloc[3] == "—"  # past saturation: no figure
