"""engine.load_plan (engine/load/plan.py): max rate per replica under the SLOs, replicas and cost
for a target, for every deployment of a grid in one vectorised pass. Replicas and costs are
checked by hand arithmetic, the max rate against engine.max_rate's own analytic figure, and two
properties: the max rate never exceeds the saturation rate, and looser SLOs never lower it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.load.grid import MAX_GRID_ROWS
from engine.load.plan import NO_ROOM, TOO_SLOW

CAT = engine.load_catalog(use_env=False)
COMMON = {"input_tokens": 1000, "output_tokens": 200, "slo_ttft_ms_p90": 2000.0}
COMMON |= {"slo_tpot_ms_p99": 50.0}


def one(df, **ids):
    rows = df
    for key, value in ids.items():
        rows = rows[rows[key] == value]
    assert len(rows) == 1, ids
    return rows.iloc[0]


def test_one_row_per_deployment_with_replicas_gpus_and_cost_by_hand():
    df = engine.load_plan(
        ["Llama-3.1-8B"],
        ["H100", "A100"],
        tp=[1, 2, 3],
        target_rate=25.0,
        precisions=["fp16"],
        **COMMON,
    )
    # tp 3 divides neither Llama-3.1-8B's 32 heads: left out and said so, 2 × 2 rows kept
    assert len(df) == 4 and len(df.attrs["skipped"]) == 2 and "tp 3" in df.attrs["skipped"][0]
    row = one(df, hardware="H100", tp=1)
    rate = row["max_rate_per_s"]
    assert 0 < rate < row["saturation_rate_per_s"]
    # replicas = ⌈25 requests/s ÷ max rate⌉; gpus = replicas × tp 1 × pp 1
    assert row["replicas"] == math.ceil(25.0 / rate) and row["gpus"] == row["replicas"]
    # one replica at its max rate writes rate × 200 output tokens per second
    assert row["output_tokens_per_s_per_replica"] == pytest.approx(rate * 200)
    price = CAT.hardware["H100"].price_per_hour_usd
    assert row["price_per_hour_usd"] == price
    # the target: gpus × $/h ÷ (3,600 s/h × 25 requests/s × 200 tokens) × 10⁶ per 1M tokens
    assert row["cost_per_million_output_tokens_usd"] == pytest.approx(
        row["gpus"] * price / (3600 * 25.0 * 200) * 1e6
    )
    # one replica at its max rate: 1 device × $/h ÷ (3,600 s/h × rate × 200 tokens) × 10⁶
    assert row["cost_per_million_output_tokens_at_max_rate_usd"] == pytest.approx(
        price / (3600 * rate * 200) * 1e6
    )
    two = one(df, hardware="A100", tp=2)
    assert two["gpus"] == 2 * two["replicas"] and two["devices"] == 2
    # at the max rate, the analytic tails meet the SLOs (within the bisection's step)
    assert (df["ttft_ms_p90"] <= 2000.0 * 1.001).all() and (df["tpot_ms_p99"] <= 50.001).all()
    assert df["reason"].isna().all() and df["fits_in_memory"].all()  # no row says why not


def test_an_exact_target_needs_exactly_that_many_replicas():
    df = engine.load_plan("Llama-3.1-8B", "H100", **COMMON)
    rate = float(df["max_rate_per_s"].iloc[0])
    no_target = df.iloc[0]  # no target rate: no replicas, GPUs or cost for it
    assert np.isnan(no_target["replicas"]) and np.isnan(no_target["gpus"])
    assert np.isnan(no_target["cost_per_million_output_tokens_usd"])
    # 3 × the max rate needs 3 replicas; a hair more needs 4
    assert (
        one(engine.load_plan("Llama-3.1-8B", "H100", target_rate=2.999 * rate, **COMMON), tp=1)[
            "replicas"
        ]
        == 3
    )
    assert (
        one(engine.load_plan("Llama-3.1-8B", "H100", target_rate=3.001 * rate, **COMMON), tp=1)[
            "replicas"
        ]
        == 4
    )


def test_prices_replace_the_list_price_and_none_removes_it():
    df = engine.load_plan(
        "Llama-3.1-8B",
        ["H100", "A100"],
        target_rate=5.0,
        prices={"H100": 2.0, "A100": None},
        **COMMON,
    )
    h100, a100 = one(df, hardware="H100"), one(df, hardware="A100")
    assert h100["price_per_hour_usd"] == 2.0
    assert h100["cost_per_million_output_tokens_usd"] == pytest.approx(
        h100["gpus"] * 2.0 / (3600 * 5.0 * 200) * 1e6
    )
    assert np.isnan(a100["price_per_hour_usd"])
    assert np.isnan(a100["cost_per_million_output_tokens_usd"])
    assert a100["replicas"] >= 1  # replicas need no price


@pytest.mark.parametrize(
    ("model", "hardware", "tp", "profile"),
    [
        ("Llama-3.1-8B", "H100", 1, "tutorial"),
        ("Llama-3.1-70B", "H100", 4, "trtllm"),
    ],
)
def test_the_max_rate_is_engine_max_rates_analytic_figure(model, hardware, tp, profile):
    df = engine.load_plan(model, hardware, tp=tp, profile=profile, **COMMON)
    m = engine.max_rate(
        model, hardware, tp=tp, profile=profile, requests=100, tolerance=0.5, **COMMON
    )
    row = df.iloc[0]
    # the same bisection, the same halvings of [0, saturation]: one number, to the last bit
    assert row["max_rate_per_s"] == m.analytic_max_rate_per_s
    assert row["saturation_rate_per_s"] == pytest.approx(m.saturation_rate_per_s, rel=1e-9)


def test_nothing_fits_and_too_strict_slos_say_why_with_a_zero_rate():
    df = engine.load_plan("Llama-3.1-70B", "H100", tp=[1, 4], target_rate=10.0, **COMMON)
    big = one(df, tp=1)  # 140 GB of fp16 weights on one 80 GB H100
    assert big["reason"] == NO_ROOM() and not big["fits_in_memory"]
    assert str(big["reason"]) == "does not fit: the weights leave no room for a KV cache"
    assert big["max_rate_per_s"] == 0 and np.isnan(big["replicas"]) and np.isnan(big["gpus"])
    strict = engine.load_plan(
        "Llama-3.1-8B", "H100", target_rate=10.0, **(COMMON | {"slo_ttft_ms_p90": 1.0})
    )
    assert strict["max_rate_per_s"].iloc[0] == 0 and strict["reason"].iloc[0] == TOO_SLOW()
    assert np.isnan(strict["cost_per_million_output_tokens_usd"].iloc[0])
    no_slo = engine.load_plan(
        "Llama-3.1-8B", "H100", **(COMMON | {"slo_ttft_ms_p90": None, "slo_tpot_ms_p99": None})
    )
    row = no_slo.iloc[0]  # no SLO: just below the saturation rate
    assert row["max_rate_per_s"] == pytest.approx(row["saturation_rate_per_s"], rel=1e-5)


def test_arguments_are_checked_as_load_grid_checks_them():
    for bad in (0, -1.0, 2e6, float("nan"), True, "10"):
        with pytest.raises(ValueError, match="target_rate"):
            engine.load_plan("Llama-3.1-8B", "H100", target_rate=bad, **COMMON)
    with pytest.raises(ValueError, match="tp: expected a whole number"):
        engine.load_plan("Llama-3.1-8B", "H100", tp=0, **COMMON)
    with pytest.raises(ValueError, match="slo_ttft_ms"):
        engine.load_plan("Llama-3.1-8B", "H100", **(COMMON | {"slo_ttft_ms_p90": -5}))
    with pytest.raises(ValueError, match="prices"):
        engine.load_plan("Llama-3.1-8B", "H100", prices={"H100": -1.0}, **COMMON)
    with pytest.raises(ValueError, match="no deployment of the grid can be served"):
        engine.load_plan("Llama-3.1-8B", "H100", tp=3, **COMMON)
    lots = {"input_tokens": list(range(1, 1001)), "output_tokens": list(range(2, 1002))}
    with pytest.raises(ValueError, match=f"at most {MAX_GRID_ROWS:,} are computed"):
        engine.load_plan("Llama-3.1-8B", "H100", tp=[1, 2], **lots)


def test_request_lists_give_one_row_per_deployment_and_pair():
    df = engine.load_plan(
        "Llama-3.1-8B", "H100", tp=[1, 2], input_tokens=[500, 2000], output_tokens=[100, 300]
    )
    assert len(df) == 2 * 4
    pairs = set(zip(df["input_tokens"], df["output_tokens"], strict=True))
    assert pairs == {(500, 100), (500, 300), (2000, 100), (2000, 300)}
    short, long = (
        one(df, tp=1, input_tokens=500, output_tokens=100),
        one(df, tp=1, input_tokens=2000, output_tokens=300),
    )
    assert long["saturation_rate_per_s"] < short["saturation_rate_per_s"]


@settings(max_examples=6, deadline=None)
@given(
    ttft=st.floats(100.0, 5000.0),
    tpot=st.floats(15.0, 200.0),
    looser=st.floats(1.0, 4.0),
    n_in=st.integers(64, 4000),
    n_out=st.integers(2, 600),
)
def test_max_rate_is_below_saturation_and_looser_slos_never_lower_it(
    ttft, tpot, looser, n_in, n_out
):
    grid = {
        "models": ["Llama-3.1-8B"],
        "hardware": ["H100", "L40S"],
        "tp": [1, 2],
        "input_tokens": n_in,
        "output_tokens": n_out,
    }
    tight = engine.load_plan(**grid, slo_ttft_ms_p90=ttft, slo_tpot_ms_p99=tpot)
    loose = engine.load_plan(**grid, slo_ttft_ms_p90=ttft * looser, slo_tpot_ms_p99=tpot * looser)
    for df in (tight, loose):
        assert (df["max_rate_per_s"] <= df["saturation_rate_per_s"]).all()
        assert (df["max_rate_per_s"] >= 0).all()
    assert (loose["max_rate_per_s"].to_numpy() >= tight["max_rate_per_s"].to_numpy()).all()
