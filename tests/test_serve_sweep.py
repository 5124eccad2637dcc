"""`serve_sweep` (engine/serve_sweep.py): every row equals `serve`, grids are checked first."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_ops import TOY, TOY_HW

from engine import serve, serve_sweep
from engine.api import ASSUMPTION_NAMES
from engine.serve import KEYS
from engine.serve_sweep import MAX_SERVE_SWEEP_ROWS, serve_csv, serve_records

GRID = {
    "models": ["Llama-3.1-8B", "Mixtral-8x7B", "DeepSeek-V3", "Gemma-2-9B", "Mistral-7B-v0.1"],
    "hardware": ["H100", "L40S"],
    "tp": [1, 8],
    "pp": [1, 2],
    "batch_sizes": [1, 64],
    "input_tokens": [1, 5000],
    "output_tokens": [1, 300],
    "precisions": ["bf16", "fp8"],
}


def _same(a, b) -> bool:
    if isinstance(a, float) and math.isnan(a):
        return b is None or (isinstance(b, float) and math.isnan(b))
    if isinstance(a, float) or isinstance(b, float):
        return a == pytest.approx(b, rel=1e-12)
    return a == b


def test_every_row_equals_serve():
    df = serve_sweep(**GRID, link_efficiency=0.8, profile="trtllm")
    assert len(df) == 5 * 2 * 2 * 2 * 2 * 2 * 2 * 2
    assert list(df.columns) == [*KEYS, *ASSUMPTION_NAMES, "warnings"]
    for row in df.sample(120, random_state=1).to_dict(orient="records"):
        r = serve(row["model"], row["hardware"], tp=row["tp"], pp=row["pp"],
                  batch_size=row["batch_size"], input_tokens=row["input_tokens"],
                  output_tokens=row["output_tokens"], precision=row["precision"],
                  link_efficiency=0.8, profile="trtllm").as_dict()  # fmt: skip
        for key in KEYS:
            assert _same(r[key], row[key]), (key, r[key], row[key])
        for key, value in r["assumptions"].items():
            assert _same(value, row[key]) or (value is None and math.isnan(row[key])), key
        assert "; ".join(r["warnings"]) == row["warnings"]


def test_toy_rows_by_hand_and_order():
    # The last axis varies fastest; O = 2 at I = 9 is the hand-computed step of test_serve.py.
    df = serve_sweep(TOY, TOY_HW, tp=[1, 2], input_tokens=[9], output_tokens=[1, 2])
    assert list(zip(df["tp"], df["output_tokens"], strict=True)) == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert df["tpot_ms"].iloc[1] == pytest.approx(24.064e-3)
    assert math.isnan(df["tpot_ms"].iloc[0])
    assert df["decode_comm_ms"].iloc[3] == pytest.approx(8.064e-3)
    assert (df.loc[df["tp"] == 1, "decode_comm_ms"].fillna(0) == 0).all()
    assert np.allclose(
        df["e2e_latency_ms"].iloc[[1, 3]],
        df["ttft_ms"].iloc[[1, 3]] + df["tpot_ms"].iloc[[1, 3]],
    )


def test_records_are_the_as_dict_objects():
    df = serve_sweep("Mixtral-8x7B", "H100", tp=[2], input_tokens=[100], output_tokens=[1, 50],
                     link_latency_us=2.0)  # fmt: skip
    records = serve_records(df)
    for record, out in zip(records, (1, 50), strict=True):
        r = serve("Mixtral-8x7B", "H100", tp=2, input_tokens=100, output_tokens=out,
                  link_latency_us=2.0).as_dict()  # fmt: skip
        assert list(record) == list(r) and record["assumptions"] == r["assumptions"]
        assert record["warnings"] == r["warnings"]
        assert all(_same(r[k], record[k]) for k in KEYS)
    assert records[0]["tpot_ms"] is None  # one output token: JSON null


def test_csv_headers_carry_units():
    df = serve_sweep("Llama-3.1-8B", "A100", input_tokens=[10], output_tokens=[1, 10])
    header = serve_csv(df).splitlines()[0].split(",")
    assert {"ttft_ms", "decode_comm_share_fraction", "memory_reserve_fraction"} <= set(header)
    unitless = {"efficiency", "decode_comm_share", "memory_reserve", "link_efficiency"}
    assert unitless.isdisjoint(header) and "link_efficiency_fraction" in header


def test_grid_limit_is_refused_before_any_work():
    tokens = list(range(1, 2001))  # 2000 · 2000 = 4,000,000 rows; no id is even looked up
    with pytest.raises(ValueError, match="at most 2,000,000"):
        serve_sweep("no-such-model", "no-such-hw", batch_sizes=tokens, input_tokens=tokens,
                    output_tokens=[1])  # fmt: skip
    assert MAX_SERVE_SWEEP_ROWS == 2_000_000


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tp": [1, 3]}, "tp 3 does not divide"),
        ({"batch_sizes": [1, 0]}, "batch_size"),
        ({"input_tokens": ["a"]}, "input_tokens"),
        ({"output_tokens": [1.5]}, "output_tokens"),
        ({"precisions": ["fp12"]}, "unknown precision"),
        ({"models": ["ResNet-50"]}, "needs a decoder LLM with shapes"),
        ({"batch_sizes": []}, "give at least one"),
        ({"efficiency": 2.0}, "efficiency"),
    ],
)
def test_bad_axes_are_refused(kwargs, message):
    args = {"models": ["Llama-3.1-8B"], "hardware": ["A100"], "input_tokens": [10],
            "output_tokens": [10]} | kwargs  # fmt: skip
    with pytest.raises(ValueError, match=message):
        serve_sweep(**args)
