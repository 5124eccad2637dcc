"""AppTest tests of the planner's disaggregated candidates (ui/plan/disaggregated.py on
pages/plan.py): the ranked pairs are `engine.load_plan_disaggregated`'s on the planner's
deployments (each accelerator at the precisions it lists), the pick beside the best aggregated
deployment, and the CSV's columns."""

from __future__ import annotations

import functools
import io

import pandas as pd

import engine
from tests.test_page_plan_load import CAT, DEFAULT, by_hand, open_page
from ui.plan import disaggregated as pd_ui
from ui.plan import grid as pg
from ui.words.format import fmt

SCENARIO = {
    "input_tokens": 1024,
    "output_tokens": 256,
    "slo_ttft_ms_p90": 2000.0,
    "slo_tpot_ms_p99": 50.0,
    "target_rate": 10.0,
}


@functools.lru_cache(maxsize=1)  # read-only in the tests: both share one engine run
def expected(hardware=("H100", "A100", "MI300X")) -> pd.DataFrame:
    frames = []
    for h in hardware:
        precisions = [p for p in ("fp16", "fp8") if p in CAT.hardware[h].peak_flop_per_s]
        frames.append(
            engine.load_plan_disaggregated(
                "Llama-3.1-70B", h, tp=[1, 2, 4, 8], precisions=precisions, **SCENARIO
            )
        )
    df = pd.concat(frames, ignore_index=True)
    served = df["max_rate_per_s"] > 0
    key = ["_s", "cost_per_million_output_tokens_usd", "gpus"]
    key.append("cost_per_million_output_tokens_at_max_rate_usd")
    return (
        df.assign(_s=served)
        .sort_values(key, ascending=[False, True, True, True], kind="stable")
        .drop(columns="_s")
        .reset_index(drop=True)
    )


def test_the_pairs_are_the_engines_ranked_by_cost_with_the_pick_in_words():
    at = open_page(DEFAULT)
    assert "Disaggregated prefill/decode (fast path)" in [s.value for s in at.subheader]
    table = next(d.value for d in at.dataframe if "Prefill workers" in d.value.columns)
    want = expected()
    # H100 and MI300X at fp16 and fp8, A100 at fp16: 5 groups of TP {1, 2, 4, 8} squared
    assert len(table) == len(want) == 5 * 16
    best = want.iloc[0]
    first = table.iloc[0]
    assert first["Prefill TP"] == best["prefill_tp"] and first["Decode TP"] == best["decode_tp"]
    assert first["Prefill workers"] == fmt(best["prefill_workers"])
    assert first["Decode workers"] == fmt(best["decode_workers"])
    assert first["GPUs"] == fmt(best["gpus"])
    cost = "Cost at the target (USD per 1M output tokens)"
    assert first[cost] == fmt(best["cost_per_million_output_tokens_usd"])
    # the pick: the cheaper at the target of the best pair and the best aggregated deployment
    agg = by_hand().iloc[0]
    words = " ".join(m.value for m in at.markdown).replace("\\", "")
    key = "cost_per_million_output_tokens_usd"
    if best[key] < agg[key]:
        assert f"Picked: disaggregated, {fmt(best['prefill_workers'])} × prefill" in words
    else:
        assert f"Picked: aggregated ({fmt(agg['gpus'])} GPUs at {fmt(agg[key], 'USD')}" in words
    assert (
        "the decode worker misses the TPOT SLO"
        in " ".join(str(v) for v in table["Why no max rate"])
        or (want["max_rate_per_s"] > 0).all()
    )
    assert at.download_button(key="plan_disagg_csv").label == "Download CSV"


def test_the_csv_has_every_pair_with_units_and_the_error_band():
    table = expected()
    profile = engine.get_profile(engine.DEFAULT_PROFILE)
    band = pg.Band(
        profile=profile,
        arch=CAT.models["Llama-3.1-70B"].arch,
        hardware=("H100", "A100", "MI300X"),
        precisions=("fp16", "fp8"),
    )
    csv = pd.read_csv(io.StringIO(engine.to_csv(pd_ui.csv_frame(table, band))))
    assert len(csv) == 80
    for column in (
        "prefill_workers_count",
        "decode_workers_count",
        "gpus_count",
        "prefill_tp_degree",
        "decode_tp_degree",
        "prefill_max_rate_per_s",
        "decode_max_rate_per_s",
        "kv_transfer_ms",
        "ttft_ms_p90",
        "tpot_ms_p99",
        "cost_per_million_output_tokens_usd",
        "error_band_pct",
        "profile",
    ):
        assert column in csv.columns, column
    assert set(csv["kv_link"].dropna()) <= {"nvlink", "network", "none"}
    sized = csv["kv_link"].notna()
    assert csv.loc[sized, "gpus_count"].notna().all()  # a link wherever a fleet is sized
    lacking = csv["kv_link"] == "none"  # only where the fleet needs a network none lists
    assert csv.loc[lacking, "reason"].str.contains("no scale-out network").all()
