"""The planner's pure parts: cost per million tokens, SLO checks, Pareto fronts, the words,
the grid plan (what the engine refuses, left out with its reason), the tables and the CSV."""

import io
import re
import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.serving import inputs as serve_inputs  # the engine's fallback flag, for the rule
from ui.charts import cost
from ui.plan import grid as pg
from ui.plan import view as pv

CAT = engine.load_catalog(use_env=False)


def grid(**columns) -> pd.DataFrame:
    n = len(next(iter(columns.values())))
    base = {
        "hardware": ["H100"] * n,
        "precision": ["fp16"] * n,
        "devices": [1] * n,
        "tp": [1] * n,
        "pp": [1] * n,
        "ep": [1] * n,  # serve_sweep names the MoE layout of every row
        "attention_dp": [False] * n,
        "batch_size": [1] * n,
        "fits_in_memory": [True] * n,
        "ttft_ms": [100.0] * n,
        "tpot_ms": [20.0] * n,
        "tokens_per_s_per_user": [50.0] * n,
        "output_tokens_per_s": [1000.0] * n,
        "output_tokens_per_s_per_gpu": [1000.0] * n,
        "decode_bottleneck": ["memory"] * n,
        "decode_comm_ms": [0.0] * n,
    }
    return pd.DataFrame(base | columns)


def test_cost_per_million_tokens_by_hand():
    # 2 devices × 4 USD/h = 8 USD/h; 1,000 tokens/s × 3,600 s = 3.6 M tokens/h
    # -> 8 / 3.6 = 2.222 USD per 1 M tokens
    df = grid(devices=[2], output_tokens_per_s=[1000.0])
    assert cost.usd_per_1m_output_tokens(df, {"H100": 4.0})[0] == pytest.approx(8 / 3.6)


def test_unpriced_accelerator_has_no_cost():
    df = grid(hardware=["M3Max"])
    assert np.isnan(cost.usd_per_1m_output_tokens(df, {"M3Max": None})[0])


def test_meets_slo_needs_fit_and_every_limit():
    df = grid(
        fits_in_memory=[True, False, True, True],
        ttft_ms=[100.0, 100.0, 3000.0, 100.0],
        tpot_ms=[20.0, 20.0, 20.0, 60.0],
    )
    slo = pv.Slo(ttft_ms=2000, tpot_ms=50)
    assert pv.meets_slo(df, slo).tolist() == [True, False, False, False]
    assert pv.meets_slo(df, pv.Slo()).tolist() == [True, False, True, True]


def test_tokens_per_user_is_a_floor():
    df = grid(tokens_per_s_per_user=[10.0, 30.0])
    assert pv.meets_slo(df, pv.Slo(min_tokens_per_s_per_user=20)).tolist() == [False, True]


def test_pareto_front_by_hand():
    # (x, y): (10, 100) (20, 80) (15, 70) (30, 10) (20, 90)
    # (15, 70) is beaten by (20, 80) on both; (20, 80) by (20, 90); the rest are on the front.
    df = grid(
        tokens_per_s_per_user=[10.0, 20.0, 15.0, 30.0, 20.0],
        output_tokens_per_s_per_gpu=[100.0, 80.0, 70.0, 10.0, 90.0],
    )
    assert pv.pareto_mask(df, []).tolist() == [True, False, False, True, True]


def test_pareto_fronts_are_per_group():
    # Alone in its group, A100's weak point is on its own front.
    df = grid(
        hardware=["H100", "H100", "A100"],
        tokens_per_s_per_user=[20.0, 10.0, 5.0],
        output_tokens_per_s_per_gpu=[100.0, 50.0, 10.0],
    )
    assert pv.pareto_mask(df, ["hardware"]).tolist() == [True, False, True]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 20), st.integers(1, 20), st.sampled_from("ab")),
        min_size=1,
        max_size=30,
    )
)
def test_pareto_matches_brute_force(points):
    df = grid(
        tokens_per_s_per_user=[float(x) for x, _, _ in points],
        output_tokens_per_s_per_gpu=[float(y) for _, y, _ in points],
        hardware=[g for _, _, g in points],
    )
    got = pv.pareto_mask(df, ["hardware"])
    for i, (x, y, g) in enumerate(points):
        dominated = any(
            gg == g and xx >= x and yy >= y and (xx, yy) != (x, y) for xx, yy, gg in points
        )
        duplicate_before = any((xx, yy, gg) == (x, y, g) for xx, yy, gg in points[:i])
        # a point equal to an earlier one is not drawn twice on the front
        assert got[i] == (not dominated and not duplicate_before)


def test_ranked_puts_cheapest_meeting_first():
    df = grid(
        devices=[8, 1, 1],
        ttft_ms=[100.0, 100.0, 9000.0],
        output_tokens_per_s=[4000.0, 1000.0, 5000.0],
    )
    out = pv.ranked(df, pv.Slo(ttft_ms=2000), {"H100": 3.0})
    # 1 device: 3 / 3.6 = 0.833 USD/1M; 8 devices: 24 / 14.4 = 1.667; the third misses TTFT.
    assert out["devices"].tolist() == [1, 8, 1]
    assert out["meets_slo"].tolist() == [True, True, False]
    assert out["usd_per_1m_output_tokens"][0] == pytest.approx(3 / 3.6)


def test_infeasible_says_nothing_fits():
    df = grid(fits_in_memory=[False, False])
    assert pv.infeasible_reason(df, pv.Slo(tpot_ms=50)).startswith("Nothing fits")


def test_infeasible_names_the_missed_limit_and_by_how_much():
    # best TPOT is 62 ms against a 50 ms limit: misses by 12 ms
    df = grid(tpot_ms=[80.0, 62.0])
    reason = pv.infeasible_reason(df, pv.Slo(tpot_ms=50))
    assert "TPOT ≤ 50 ms by at least 12 ms" in reason
    assert pv.infeasible_reason(df, pv.Slo(tpot_ms=70)) is None


def test_describe_names_binding_slo_and_resource():
    # TTFT headroom (2000-1500)/2000 = 25 %; TPOT (50-20)/50 = 60 %: TTFT binds
    row = grid(ttft_ms=[1500.0], decode_comm_ms=[5.0]).iloc[0]
    words = pv.describe(row, pv.Slo(ttft_ms=2000, tpot_ms=50), {"H100": "NVIDIA H100 SXM"})
    assert "TTFT is the SLO with the least headroom" in words
    assert "memory-bound" in words and "communication 25%" in words  # 5 / 20 ms
    assert words.startswith("1× NVIDIA H100 SXM (TP1, PP1)")


# --- words, grid planning, tables (ui.plan.view, ui.plan.grid) -----------------------------
def test_miss_words_use_the_one_formatter():
    # best tokens/s per user 30 against a floor of 45.5: 15.5 short
    df = grid(tokens_per_s_per_user=[30.0, 12.0])
    reason = pv.infeasible_reason(df, pv.Slo(min_tokens_per_s_per_user=45.5))
    assert "the fastest is 15.5 tokens/s short of 45.5 tokens/s per user" in reason
    # TTFT 2,600 ms best against 2,000 ms: misses by 600 ms, written in seconds where due
    reason = pv.infeasible_reason(grid(ttft_ms=[2600.0]), pv.Slo(ttft_ms=2000))
    assert "TTFT ≤ 2 s by at least 600 ms" in reason


def test_callouts_pick_cheapest_priced_and_fastest_meeting_rows():
    # costs: 4 USD/h ÷ (1,000 × 3,600 / 1e6) = 1.11; ÷ (500 ...) = 2.22; third misses TPOT
    df = grid(
        output_tokens_per_s=[1000.0, 500.0, 9000.0],
        tokens_per_s_per_user=[20.0, 40.0, 90.0],
        tpot_ms=[50.0, 25.0, 70.0],
        batch_size=[64, 8, 256],
    )
    table = pv.ranked(df, pv.Slo(tpot_ms=60), {"H100": 4.0})
    words = pv.callouts(table, pv.Slo(tpot_ms=60), {"H100": "H100 SXM"})
    assert "batch 64" in words["cheapest"] and "1.11 USD per 1M output tokens" in words["cheapest"]
    assert "batch 8" in words["fastest"] and "40 tokens/s per user" in words["fastest"]
    # TPOT 25 ms against 60 ms: (60 - 25) / 60 = 58.3 % inside the limit
    assert "TPOT is the SLO with the least headroom (25 ms, 58.3% inside it)" in words["fastest"]
    strict = pv.Slo(tpot_ms=1)
    assert pv.callouts(pv.ranked(df, strict, {"H100": 4.0}), strict, {}) == {}  # none meets
    unpriced = pv.ranked(df, pv.Slo(tpot_ms=60), {})
    assert set(pv.callouts(unpriced, pv.Slo(tpot_ms=60), {})) == {"fastest"}


def test_slo_fields_and_chart_note():
    slo = pv.Slo(ttft_ms=1500)
    assert slo.fields() == {"ttft_ms": 1500, "tpot_ms": None, "min_tokens_per_s_per_user": None}
    assert "TTFT ≤ 1.5 s is not on these axes" in pv.chart_note(slo)
    assert "TTFT" not in pv.chart_note(pv.Slo(tpot_ms=50))


def test_pareto_mask_is_fast_on_a_50000_row_grid():
    rng = np.random.default_rng(0)
    n = 50_000
    df = grid(
        hardware=rng.choice(["H100", "A100", "MI300X"], n).tolist(),
        tokens_per_s_per_user=rng.uniform(1, 100, n).tolist(),
        output_tokens_per_s_per_gpu=rng.uniform(1, 1000, n).tolist(),
    )
    start = time.perf_counter()
    mask = pv.pareto_mask(df, ["hardware", "precision"])
    assert time.perf_counter() - start < 2.0  # the row-wise string key took 18 s here
    # every front point is undominated within its accelerator (checked on one group)
    front = df[mask & (df["hardware"] == "H100").to_numpy()]
    xs, ys = front[pv.X].to_numpy(), front[pv.Y].to_numpy()
    order = np.argsort(xs)
    assert (np.diff(ys[order]) < 0).all()  # along a front, more per user means less per GPU


LLAMA70 = CAT.models["Llama-3.1-70B"]


def test_plan_leaves_out_what_the_engine_refuses_and_says_why():
    chips = {h: CAT.hardware[h] for h in ("H100", "A100", "M3Max")}
    groups, notes = pg.plan(
        model_id="Llama-3.1-70B",
        arch=LLAMA70.arch,
        hardware=chips,
        tps=[1, 3, 8],
        pps=[1, 200],
        precisions=["fp8"],
    )
    # Llama-3.1-70B: 64 heads (3 does not divide them), 80 layers (PP 200 too deep);
    # A100 and M3 Max list no fp8 peak; M3 Max has no device-to-device link.
    assert groups == [pg.Group(hardware=("H100",), tp=(1, 8), pp=(1,), precisions=("fp8",))]
    text = " | ".join(notes)
    assert "TP 3: does not divide Llama-3.1-70B's 64 attention heads" in text
    assert "PP 200: more stages than Llama-3.1-70B's 80 layers" in text
    assert "fp8 on NVIDIA A100 80GB SXM, Apple MacBook Pro M3 Max: no fp8 peak" in text
    assert "TP or PP > 1 on Apple MacBook Pro M3 Max: one device only" in text
    assert pg.row_count(groups, [1, 2, 4]) == 1 * 2 * 1 * 1 * 3


def test_accelerators_with_the_same_valid_axes_share_one_sweep():
    chips = {h: CAT.hardware[h] for h in ("H100", "A100", "MI300X")}
    groups, _ = pg.plan(
        model_id="Llama-3.1-70B",
        arch=LLAMA70.arch,
        hardware=chips,
        tps=[1, 2],
        pps=[1],
        precisions=["fp16", "fp8"],
    )
    assert [g.hardware for g in groups] == [("H100", "MI300X"), ("A100",)]
    assert pg.native_precision(CAT.hardware["A100"], "bf16")  # bf16 runs at the fp16 peak


def test_sweep_rows_equal_the_engines_and_csv_has_the_contract_columns_first():
    chips = {h: CAT.hardware[h] for h in ("H100", "A100")}
    groups, _ = pg.plan(
        model_id="Llama-3.1-70B",
        arch=LLAMA70.arch,
        hardware=chips,
        tps=[4, 8],
        pps=[1],
        precisions=["fp16", "fp8"],
    )
    df = pg.sweep(
        groups=groups,
        model=LLAMA70,
        hardware=chips,
        batches=[1, 16],
        tokens=(1024, 256),
        opts={"profile": "tutorial"},
    )
    assert len(df) == 2 * 2 * 2 + 1 * 2 * 2  # H100 2 precisions, A100 fp16 only
    one = engine.serve(
        "Llama-3.1-70B",
        "A100",
        tp=8,
        batch_size=16,
        input_tokens=1024,
        output_tokens=256,
        precision="fp16",
        profile="tutorial",  # the sweep's
    )
    row = df[(df["hardware"] == "A100") & (df["tp"] == 8) & (df["batch_size"] == 16)].iloc[0]
    assert row["tpot_ms"] == pytest.approx(one.as_dict()["tpot_ms"])
    slo, prices = pv.Slo(ttft_ms=2000, tpot_ms=50), {"H100": 6.0, "A100": None}
    out = pg.csv_frame(pv.ranked(df, slo, prices), slo, prices)
    assert tuple(out.columns[: len(pg.CONTRACT)]) == pg.CONTRACT
    assert {"price_per_hour_usd", "slo_ttft_ms", "profile", "efficiency"} <= set(out.columns)
    assert out["slo_min_tokens_per_s_per_user"].isna().all() and (out["slo_tpot_ms"] == 50).all()
    header = pd.read_csv(io.StringIO(pg.csv_text(df, slo, prices))).columns
    assert "usd_per_1m_output_tokens" in header and "compute_efficiency_fraction" in header


def test_display_table_headers_carry_units_and_show_meeting_rows_only():
    df = grid(ttft_ms=[1234.5, 100.0], tpot_ms=[20.0, 80.0], batch_size=[2048, 1])
    table = pv.ranked(df, pv.Slo(tpot_ms=50), {"H100": 2.0})
    shown = pg.display_table(table, {"H100": "NVIDIA H100 SXM"})
    assert len(shown) == 1 and shown.iloc[0]["Accelerator"] == "NVIDIA H100 SXM"
    assert shown.iloc[0]["TTFT"] == "1.23 s" and shown.iloc[0]["TPOT"] == "20 ms"
    # 2 USD/h ÷ (1,000 tokens/s × 3,600 s/h) × 1e6 = 0.556 USD per 1M output tokens
    assert shown.iloc[0]["Cost (USD per 1M output tokens)"] == "0.556"
    assert "Throughput (output tokens/s per GPU)" in shown.columns


def test_price_table_says_where_each_price_comes_from():
    chips = {h: CAT.hardware[h] for h in ("H100", "A100", "M3Max")}
    listed = CAT.hardware["H100"].price_per_hour_usd
    table = pg.price_table(chips, {"H100": listed, "A100": 1.5, "M3Max": None})
    assert list(table["Kind"]) == ["list price", "set on this page", "no price"]
    assert table.iloc[0]["Date"] == CAT.hardware["H100"].price_date
    assert table.iloc[2]["Notes"] == CAT.hardware["M3Max"].price_notes


def test_warning_counts_count_each_warning_of_a_rows_messages():
    a, b = engine.Message("a", "a"), engine.Message("b", "b")
    rows = pd.Categorical.from_codes([0, 1, 2, 3, 1], [(a, b), (a,), (), (b,)])
    df = pd.DataFrame({"warnings": rows})
    assert pg.warning_counts(df) == [(a, 3), (b, 2)]


LLMS = [m for m in CAT.models.values() if getattr(m, "arch", None) is not None]


@pytest.mark.parametrize("model", LLMS, ids=lambda m: m.id)
def test_every_catalogue_llm_plans_on_a_mixed_grid(model):
    chips = {h: CAT.hardware[h] for h in ("H100", "A100", "MI300X", "M3Max")}
    groups, _ = pg.plan(
        model_id=model.id,
        arch=model.arch,
        hardware=chips,
        tps=[1, 2, 4, 8],
        pps=[1, 2],
        precisions=["fp16", "fp8"],
    )
    df = pg.sweep(
        groups=groups,
        model=model,
        hardware=chips,
        batches=[1, 64],
        tokens=(512, 128),
        opts={"profile": "tutorial"},
    )
    assert len(df) == pg.row_count(groups, [1, 64])
    slo, prices = (
        pv.Slo(ttft_ms=3000, tpot_ms=60),
        {h: c.price_per_hour_usd for h, c in chips.items()},
    )
    table = pv.ranked(pg.screen(df), slo, prices)
    ok = table[table["meets_slo"]]
    assert (
        ok["fits_in_memory"].all() and (ok["ttft_ms"] <= 3000).all() and (ok["tpot_ms"] <= 60).all()
    )
    # cost = price × devices ÷ (output tokens/s × 3,600 s/h) × 1e6, the cheapest first
    price = ok["hardware"].astype(str).map(prices).astype(float)
    cost = price * ok["devices"] / (ok["output_tokens_per_s"] * 3600) * 1e6
    assert np.allclose(ok["usd_per_1m_output_tokens"], cost, equal_nan=True)
    priced = ok["usd_per_1m_output_tokens"].dropna().to_numpy()
    assert (np.diff(priced) >= 0).all()
    assert (pv.infeasible_reason(table, slo) is None) == bool(len(ok))


def engine_refuses(model, hardware, tp: int, pp: int) -> bool:
    try:
        engine.serve(model, hardware, tp=tp, pp=pp, input_tokens=8, output_tokens=2)
    except ValueError:
        return True
    return False


@pytest.mark.parametrize("model", LLMS, ids=lambda m: m.id)
def test_the_planners_tp_pp_rules_agree_with_the_engine(model):
    # the planner decides from the public spec fields; the engine must refuse exactly those
    for tp in range(1, 17):
        planned = pg.tp_refusal(model.id, model.arch, tp) is None
        assert planned == (not engine_refuses(model=model, hardware="H100", tp=tp, pp=1)), (
            model.id,
            tp,
        )
    for pp in (1, 2, model.arch.layers, model.arch.layers + 1):
        planned = pg.pp_refusal(model.id, model.arch, pp) is None
        assert planned == (not engine_refuses(model=model, hardware="H100", tp=1, pp=pp)), (
            model.id,
            pp,
        )


@pytest.mark.parametrize("hw", CAT.hardware.values(), ids=lambda h: h.id)
def test_the_planners_chip_rules_agree_with_the_engine(hw):
    small = CAT.models["Llama-3.2-1B"]  # 32 heads, 8 KV heads: TP 2 splits both
    groups, _ = pg.plan(
        model_id=small.id,
        arch=small.arch,
        hardware={hw.id: hw},
        tps=[2],
        pps=[1],
        precisions=["fp16"],
    )
    assert bool(groups) == (not engine_refuses(model=small, hardware=hw, tp=2, pp=1))
    # the planner plans number formats: native when the serving model's format path raises
    # no fallback flag (emulated formats raise it); int4 and fp4 as the formats they are read as
    for precision in (*engine.FORMATS, *engine.FORMAT_ALIASES):
        fallback = serve_inputs.format_values(hw, precision, engine.DEFAULTS)[0].fallback
        assert pg.native_precision(hw, precision) == (not fallback), precision


def test_a_configuration_that_does_not_fit_has_no_cost_and_ranks_below_every_fitting_one():
    # the cheapest row per token does not fit: it serves nothing, so it has no cost
    df = grid(
        fits_in_memory=[True, False, True],
        tpot_ms=[20.0, 20.0, 80.0],
        output_tokens_per_s=[1000.0, 9000.0, 2000.0],
    )
    out = pv.ranked(df, pv.Slo(tpot_ms=50), {"H100": 3.0})
    assert out["fits_in_memory"].tolist() == [True, True, False]  # meets, misses TPOT, no fit
    assert np.isnan(out["usd_per_1m_output_tokens"].iloc[2])
    assert out["usd_per_1m_output_tokens"].iloc[:2].notna().all()
    slo, prices = pv.Slo(tpot_ms=50), {"H100": 3.0}
    csv = pd.read_csv(io.StringIO(pg.csv_text(grid(**df.to_dict("list")), slo, prices)))
    assert csv["verdict"].tolist() == ["meets the SLOs", "misses TPOT ≤ 50 ms", NO_FIT]
    assert np.isnan(csv["usd_per_1m_output_tokens"].iloc[2])


NO_FIT = "does not fit in memory"


def test_planner_csv_column_names_end_in_their_unit():
    chips = {h: CAT.hardware[h] for h in ("H100", "A100")}
    groups, _ = pg.plan(
        model_id="Llama-3.1-70B",
        arch=LLAMA70.arch,
        hardware=chips,
        tps=[2, 8],
        pps=[1],
        precisions=["fp16"],
    )
    df = pg.sweep(
        groups=groups,
        model=LLAMA70,
        hardware=chips,
        batches=[1, 256],
        tokens=(1024, 256),
        opts={"profile": "trtllm"},
    )
    slo, prices = pv.Slo(tpot_ms=50), {"H100": 6.0, "A100": 2.0}
    header = list(pd.read_csv(io.StringIO(pg.csv_text(df, slo, prices))).columns)
    for a in engine.ASSUMPTIONS:  # an assumption's column is the registry's CSV header
        assert a.name == a.csv or a.name not in header, a.name
    fractions = {"attention_efficiency_fraction", "link_efficiency_fraction"}
    assert fractions | {"decode_comm_share_fraction", "kv_reuse_fraction"} <= set(header)
    per_second = [c for c in header if re.search(r"_per_s(_|$)", c) and "flop" not in c]
    # every rate names its unit of work: tokens or bytes per second
    assert per_second and all(re.search(r"(tokens|bytes)_per_s", c) for c in per_second), per_second
    assert "throughput_per_s" not in header and "decode_comm_share" not in header
