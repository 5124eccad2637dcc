"""The planner's pure parts: cost per million tokens, SLO checks, Pareto fronts, the words."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ui import plan_view as pv


def grid(**columns) -> pd.DataFrame:
    n = len(next(iter(columns.values())))
    base = {
        "hardware": ["H100"] * n,
        "precision": ["fp16"] * n,
        "devices": [1] * n,
        "tp": [1] * n,
        "pp": [1] * n,
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
    assert pv.usd_per_1m_output_tokens(df, {"H100": 4.0})[0] == pytest.approx(8 / 3.6)


def test_unpriced_accelerator_has_no_cost():
    df = grid(hardware=["M3Max"])
    assert np.isnan(pv.usd_per_1m_output_tokens(df, {"M3Max": None})[0])


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
