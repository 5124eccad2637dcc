"""Footprint and cost of ownership (engine/footprint/): the MLSys·im tutorial 07 cluster (256
H100, 30 days) in Quebec and Poland by hand, the TCO arithmetic, the CLI's JSON keys, the
shipped data's sources, and hypothesis properties."""

from __future__ import annotations

import dataclasses
import json
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.cli.main import main

CLUSTER = engine.Usage("H100", 256, 30 * 24.0)  # 32 DGX H100, 30 days, busy all the time


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_quebec_by_hand():
    # 256 × 700 W (H100 SXM TDP) × 720 h = 129,024 kWh of IT energy; × PUE 1.06 = 136,765.44 kWh
    # at the meter; × 20 g/kWh = 2,735,308.8 g = 2.735 t; WUE 0 (closed loop): no site water.
    r = engine.footprint(CLUSTER, "Quebec")
    assert r["it_energy_mwh"] == pytest.approx(129.024)
    assert r["energy_mwh"] == pytest.approx(136.76544)
    assert r["carbon_tco2e"] == pytest.approx(2.7353088)
    assert r["water_m3"] == 0


def test_poland_by_hand_and_the_ratio():
    # 129,024 kWh × PUE 1.58 = 203,857.92 kWh; × 820 g/kWh = 167.163 t; water 129,024 kWh ×
    # 1.8 L/kWh = 232,243 L = 232.2 m³. Poland ÷ Quebec = (820 × 1.58) ÷ (20 × 1.06) = 61.1,
    # not the tutorial's "roughly 40x" (820 ÷ 20 = 41, PUE left out).
    p, q = engine.footprint(CLUSTER, "Poland"), engine.footprint(CLUSTER, "Quebec")
    assert p["energy_mwh"] == pytest.approx(203.85792)
    assert p["carbon_tco2e"] == pytest.approx(167.1634944)
    assert p["water_m3"] == pytest.approx(232.2432)
    assert p["carbon_tco2e"] / q["carbon_tco2e"] == pytest.approx(61.1, abs=0.05)


def test_utilisation_sets_the_power_between_idle_and_tdp():
    # Half busy: 700 W × (0.3 + 0.7 × 0.5) = 455 W; idle: 210 W.
    half = engine.footprint(dataclasses.replace(CLUSTER, utilisation=0.5), "Quebec")
    idle = engine.footprint(dataclasses.replace(CLUSTER, utilisation=0.0), "Quebec")
    assert half["power_per_device_w"] == pytest.approx(455.0)
    assert idle["power_per_device_w"] == pytest.approx(210.0)


def test_tco_by_hand():
    # capex = 256 × $30,000 × 1.5 = $11.52M; 30 days of 3 years: 11.52M × 720 / 26,280 =
    # $315,616.44; power 136,765.44 kWh × $0.07 = $9,573.58; maintenance 11.52M × 5 % × 720 /
    # 8,760 = $47,342.47; carbon at $100/t: 2.7353 t × 100 = $273.53. Total $372,806.02 over
    # 184,320 GPU-hours = $2.0226 per GPU-hour. Rented at the catalogue's $6.16: $1,135,411.20.
    own = engine.Ownership(carbon_usd_per_tco2e=100.0)
    r = engine.tco(CLUSTER, own, "Quebec")
    assert r["capex_usd"] == pytest.approx(11.52e6)
    assert r["amortised_capex_usd"] == pytest.approx(315_616.438, rel=1e-6)
    assert r["power_usd"] == pytest.approx(9_573.5808)
    assert r["maintenance_usd"] == pytest.approx(47_342.466, rel=1e-6)
    assert r["carbon_usd"] == pytest.approx(273.53088)
    assert r["total_usd"] == pytest.approx(372_806.0156, rel=1e-6)
    assert r["usd_per_gpu_hour"] == pytest.approx(2.02260, rel=1e-4)
    assert r["rental_usd"] == pytest.approx(184_320 * 6.16)


def test_tco_per_million_tokens():
    # 1 H100 for 1 h at 1,000 tokens/s = 3.6M tokens; rented at $6.16: $1.711 per 1M, the
    # planner's formula price / (3600 × tokens/s) × 10⁶.
    r = engine.tco(engine.Usage("H100", 1, 1.0, tokens=3.6e6), grid="US_Avg")
    assert r["rental_usd_per_million_tokens"] == pytest.approx(6.16 / 3.6)
    assert r["usd_per_million_tokens"] == pytest.approx(r["total_usd"] / 3.6)


def test_training_usage_reads_the_train_result():
    res = engine.train("Llama-3.1-8B", "H100", gpus=8, global_batch_size=64, seq_len=2048, zero=1)
    u = engine.train_usage(res)
    assert u.devices == 8 and u.hours == pytest.approx(res["time_to_train_days"] * 24)
    assert u.tokens == res["token_budget"]


def test_bad_input_is_a_clear_message():
    with pytest.raises(ValueError, match="pue"):
        engine.Grid(carbon_g_per_kwh=100, pue=0.9, wue_l_per_kwh=0)
    with pytest.raises(ValueError, match="unknown grid"):
        engine.footprint(CLUSTER, "Atlantis")
    with pytest.raises(ValueError, match="unit_price_usd"):
        engine.tco(engine.Usage("T4", 8, 1.0))  # no purchase price shipped for the T4
    with pytest.raises(ValueError, match="devices"):
        engine.Usage("H100", 0, 1.0)


def test_shipped_grids_and_defaults_carry_sources():
    wanted = {"Quebec", "Norway", "US_Avg", "Poland", "Iowa", "France", "Germany", "Texas"}
    assert wanted | {"India", "China", "Iceland"} <= set(engine.grids())
    for g in engine.grids().values():
        assert g.source.startswith("https://") and g.year
    own, rows = engine.Ownership(), {r["name"]: r for r in engine.ownership_defaults()}
    for name in ("years", "infrastructure_multiplier", "maintenance_per_year"):
        assert rows[name]["value"] == getattr(own, name)  # the dataclass and the file agree
        assert rows[name]["source"].startswith("https://")
    assert rows["electricity_usd_per_kwh"]["value"] == own.electricity_usd_per_kwh
    assert rows["unit_price_usd[H100]"]["value"] == 30_000


def test_capex_is_gpus_times_each_shipped_unit_price_times_the_multiplier():
    # B200 by hand: 8 GPUs × $40,000 (the top of Huang's $30,000-40,000) × 1.5 = $480,000.
    own = engine.Ownership()
    prices = {
        r["name"][len("unit_price_usd[") : -1]: r["value"]
        for r in engine.ownership_defaults()
        if r["name"].startswith("unit_price_usd[")
    }
    assert {"H100", "A100", "H200", "B200", "MI300X"} <= set(prices)
    assert engine.tco(engine.Usage("B200", 8, 1.0))["capex_usd"] == pytest.approx(480_000)
    for hw, price in prices.items():
        r = engine.tco(engine.Usage(hw, 8, 1.0))
        assert r["hardware"] == hw and r["unit_price_usd"] == price > 0
        assert r["capex_usd"] == pytest.approx(8 * price * own.infrastructure_multiplier)
        assert r["unit_price_source"].startswith("https://")


def test_cli_json_keys(capsys):
    code, out, _ = cli(
        capsys,
        "footprint",
        "--hardware",
        "H100",
        "--gpus",
        "256",
        "--days",
        "30",
        "--grid",
        "Poland",
        "--format",
        "json",
    )
    d = json.loads(out)
    assert code == 0
    assert {"energy_mwh", "it_energy_mwh", "carbon_tco2e", "water_m3", "carbon_cost_usd"} <= set(d)
    assert d["carbon_tco2e"] == pytest.approx(167.1634944)
    code, out, _ = cli(
        capsys,
        "tco",
        "--hardware",
        "H100",
        "--gpus",
        "8",
        "--hours",
        "1",
        "--tokens",
        "3.6e6",
        "--format",
        "json",
    )
    d = json.loads(out)
    keys = {"usd_per_gpu_hour", "usd_per_million_tokens", "rental_usd_per_million_tokens"}
    assert code == 0 and keys | {"capex_usd", "power_usd", "total_usd"} <= set(d)


def test_cli_overrides_and_errors(capsys):
    code, out, _ = cli(
        capsys,
        "footprint",
        "--hardware",
        "H100",
        "--gpus",
        "1",
        "--hours",
        "1000",
        "--grid",
        "Quebec",
        "--carbon-g-per-kwh",
        "1000",
        "--format",
        "json",
    )
    # 0.7 kW × 1,000 h × 1.06 = 742 kWh × 1 kg/kWh = 0.742 t
    assert code == 0 and json.loads(out)["carbon_tco2e"] == pytest.approx(0.742)
    code, _, err = cli(
        capsys, "footprint", "--hardware", "H100", "--gpus", "1", "--hours", "1", "--days", "1"
    )
    assert code == 2 and "--hours or --days" in err
    code, out, _ = cli(
        capsys, "tco", "--hardware", "H100", "--gpus", "2", "--hours", "5", "--format", "csv"
    )
    assert code == 0 and out.splitlines()[0].startswith("hardware,devices,hours,gpu_hours")
    # the water intensity is footprint's: tco has no water term, so it refuses the flag (it
    # once took it and printed the same costs)
    tco = ["tco", "--hardware", "H100", "--gpus", "2", "--hours", "5"]
    code, out, err = cli(capsys, *tco, "--wue-l-per-kwh", "3")
    assert code == 2 and out == "" and "`footprint` reports the water" in err


GRID = st.builds(
    engine.Grid,
    carbon_g_per_kwh=st.floats(0, 1600),
    pue=st.floats(1, 3),
    wue_l_per_kwh=st.floats(0, 5),
)


@settings(max_examples=60, deadline=None)
@given(GRID, st.floats(0, 1), st.floats(1.01, 3))
def test_carbon_is_linear_in_intensity_and_energy_in_pue(g, u, factor):
    usage = dataclasses.replace(CLUSTER, utilisation=u)
    base = engine.footprint(usage, g)
    dirtier = engine.footprint(
        usage, dataclasses.replace(g, carbon_g_per_kwh=g.carbon_g_per_kwh * factor)
    )
    assert dirtier["carbon_tco2e"] == pytest.approx(base["carbon_tco2e"] * factor, rel=1e-9)
    worse = engine.footprint(usage, dataclasses.replace(g, pue=min(g.pue * factor, 5.0)))
    assert worse["energy_mwh"] >= base["energy_mwh"] * (1 - 1e-12)
    assert worse["it_energy_mwh"] == pytest.approx(base["it_energy_mwh"])  # PUE is the facility's


@settings(max_examples=60, deadline=None)
@given(st.floats(0, 1), st.floats(0, 1), st.floats(1, 10), st.floats(0.5, 10))
def test_busier_costs_more_and_longer_write_off_costs_less_per_hour(u1, u2, mult, years):
    lo, hi = sorted((u1, u2))
    a = engine.tco(dataclasses.replace(CLUSTER, utilisation=lo), grid="Poland")
    b = engine.tco(dataclasses.replace(CLUSTER, utilisation=hi), grid="Poland")
    assert b["total_usd"] >= a["total_usd"] * (1 - 1e-12)
    short = engine.tco(CLUSTER, engine.Ownership(years=years, infrastructure_multiplier=mult))
    long = engine.tco(CLUSTER, engine.Ownership(years=years * 2, infrastructure_multiplier=mult))
    assert long["usd_per_gpu_hour"] < short["usd_per_gpu_hour"]


def test_the_data_files_parse_with_a_source_per_entry():
    from engine.footprint.data import GRIDS_FILE, OWNERSHIP_FILE

    for path in (GRIDS_FILE, OWNERSHIP_FILE):
        text = tomllib.loads(path.read_text())
        for table in text.values():
            for entry in table.values():
                assert entry["source"].startswith(("https://", "http://")) and entry["year"]
