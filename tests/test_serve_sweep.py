"""`serve_sweep` (engine/serving/sweep.py): every row equals `serve`, grids are checked first."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_serving_operators import TOY, TOY_HW

from engine import TUTORIAL_PROFILE, serve, serve_sweep
from engine.assumptions import ASSUMPTION_NAMES
from engine.report import frames as grid_columns
from engine.roofline.sweep import as_list
from engine.serving.serve import KEYS
from engine.serving.sweep import MAX_SERVE_SWEEP_ROWS

SS = importlib.import_module("engine.serving.sweep")

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
        result = serve(
            row["model"],
            row["hardware"],
            tp=row["tp"],
            pp=row["pp"],
            batch_size=row["batch_size"],
            input_tokens=row["input_tokens"],
            output_tokens=row["output_tokens"],
            precision=row["precision"],
            link_efficiency=0.8,
            profile="trtllm",
        )
        r = result.as_dict()
        for key in KEYS:
            assert _same(r[key], row[key]), (key, r[key], row[key])
        for key, value in r["assumptions"].items():
            assert _same(value, row[key]) or (value is None and math.isnan(row[key])), key
        assert row["warnings"] == result.warnings  # the same messages, the same English
        assert [str(m) for m in row["warnings"]] == r["warnings"]


def test_toy_rows_by_hand_and_order():
    # The last axis varies fastest; O = 2 at I = 9 is the hand-computed step of test_serve.py,
    # under the tutorial profile.
    df = serve_sweep(
        TOY, TOY_HW, tp=[1, 2], input_tokens=[9], output_tokens=[1, 2], profile=TUTORIAL_PROFILE
    )
    assert list(zip(df["tp"], df["output_tokens"], strict=True)) == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert df["tpot_ms"].iloc[1] == pytest.approx(24.064e-3)
    assert math.isnan(df["tpot_ms"].iloc[0])
    assert df["decode_comm_ms"].iloc[3] == pytest.approx(8.064e-3)
    assert (df.loc[df["tp"] == 1, "decode_comm_ms"].fillna(0) == 0).all()
    assert np.allclose(
        df["e2e_latency_ms"].iloc[[1, 3]],
        df["ttft_ms"].iloc[[1, 3]] + df["tpot_ms"].iloc[[1, 3]],
    )


def test_grid_limit_is_refused_before_any_work():
    tokens = list(range(1, 2001))  # 2000 · 2000 = 4,000,000 rows; no id is even looked up
    with pytest.raises(ValueError, match="at most 2,000,000"):
        serve_sweep(
            "no-such-model",
            "no-such-hw",
            batch_sizes=tokens,
            input_tokens=tokens,
            output_tokens=[1],
        )
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
    args = {
        "models": ["Llama-3.1-8B"],
        "hardware": ["A100"],
        "input_tokens": [10],
        "output_tokens": [10],
    } | kwargs
    with pytest.raises(ValueError, match=message):
        serve_sweep(**args)


CHUNKED = {  # odd axis lengths: 3 · 2 · 3 · 5 · 3 = 270 rows
    "models": ["Llama-3.1-8B", "Mixtral-8x7B", "Gemma-2-9B"],
    "hardware": ["H100", "L40S"],
    "batch_sizes": [1, 3, 64],
    "input_tokens": [1, 9, 17, 500, 5000],
    "output_tokens": [1, 2, 300],
}
LONG = {
    "models": "Mixtral-8x7B",
    "hardware": "H100",
    "batch_sizes": list(range(1, 60)),
    "input_tokens": 700,
    "output_tokens": 33,
}


@pytest.mark.parametrize(
    ("grid", "chunk_rows", "pieces"),
    [
        # 7 rows a chunk: the output axis (3) whole, the input axis cut in pieces of 7 // 3 = 2
        # (2, 2, 1: three chunks) for each of the 3 · 2 · 3 models, hardware and batches.
        (CHUNKED, 7, 3 * 2 * 3 * 3),
        (LONG, 5, 12),  # one long axis: 59 batch sizes in pieces of 5 (11 of 5, then 4)
    ],
)
def test_chunked_sweep_equals_one_chunk(monkeypatch, grid, chunk_rows, pieces):
    one = serve_sweep(**grid, profile="trtllm")
    monkeypatch.setattr(SS, "CHUNK_ROWS", chunk_rows)
    shape = (len(as_list(grid["models"], "")), len(as_list(grid["hardware"], "")), 1, 1, 1)
    shape += tuple(
        len(as_list(grid[k], "")) for k in ("batch_sizes", "input_tokens", "output_tokens")
    )
    assert len(list(SS.chunks(shape))) == pieces
    pd.testing.assert_frame_equal(serve_sweep(**grid, profile="trtllm"), one, check_exact=True)


@settings(max_examples=150, deadline=None)
@given(
    shape=st.lists(st.sampled_from([1, 1, 2, 3, 5, 12, 31]), min_size=8, max_size=8).map(tuple),
    chunk_rows=st.integers(1, 300),
)
def test_chunks_cover_every_row_once_in_order(shape, chunk_rows):
    assume(math.prod(shape) <= 20_000)
    rows = np.arange(math.prod(shape)).reshape(shape)
    old, SS.CHUNK_ROWS = SS.CHUNK_ROWS, chunk_rows
    try:
        parts = [(first, rows[pieces].ravel()) for first, pieces in SS.chunks(shape)]
    finally:
        SS.CHUNK_ROWS = old
    assert all(0 < len(p) <= chunk_rows and p[0] == first for first, p in parts)
    assert np.array_equal(np.concatenate([p for _, p in parts]), rows.ravel())


def test_id_columns_keep_values_and_dtypes():
    df = serve_sweep(
        ["Llama-3.1-8B", "Mixtral-8x7B"],
        "H100",
        tp=[1, 2],
        pp=[1, 4],
        batch_sizes=[3],
        input_tokens=[5, 6],
        output_tokens=[7],
    )
    ints = ["devices", "tp", "pp", "batch_size", "input_tokens", "output_tokens"]
    assert all(df[k].dtype == np.int64 for k in ints)
    # Rows 8 to 15 are Mixtral; within a model tp, pp then input vary (the last fastest).
    assert df["tp"].tolist()[8:] == [1, 1, 1, 1, 2, 2, 2, 2]
    assert df["pp"].tolist()[8:] == [1, 1, 4, 4, 1, 1, 4, 4]
    assert df["devices"].tolist()[8:] == [1, 1, 4, 4, 2, 2, 8, 8]  # tp · pp
    assert df["input_tokens"].tolist()[:4] == [5, 6, 5, 6]
    assert set(df["batch_size"]) == {3} and set(df["output_tokens"]) == {7}
    for key in ("model", "hardware", "precision", "kv_precision", "peak_precision", "profile"):
        assert isinstance(df[key].dtype, pd.CategoricalDtype), key
    assert df["model"].tolist() == ["Llama-3.1-8B"] * 8 + ["Mixtral-8x7B"] * 8


def test_constant_columns_cost_nothing_per_row_and_behave():
    df = serve_sweep(
        "Llama-3.1-8B",
        "A100",
        batch_sizes=[1, 2, 4],
        input_tokens=[10, 20],
        output_tokens=[5],
        efficiency=0.6,
    )
    assert df["efficiency"].to_numpy().strides == (0,)  # one value shared by every row
    # `twin` shares the same constant column; writing into `df` must copy, not raise.
    twin = serve_sweep("Llama-3.1-8B", "A100", input_tokens=[10], output_tokens=[5], efficiency=0.6)
    df.loc[df["batch_size"] == 2, "efficiency"] = 0.25
    df.iloc[0, df.columns.get_loc("link_efficiency")] = 0.5
    df.at[5, "efficiency"] = 0.75
    assert df["efficiency"].tolist() == [0.6, 0.6, 0.25, 0.25, 0.6, 0.75]
    assert df["link_efficiency"].iloc[0] == 0.5 and twin["efficiency"].item() == 0.6
    nan_column = next(k for k in ASSUMPTION_NAMES if df[k].isna().all())
    df.fillna({nan_column: 1.0}, inplace=True)
    assert (df[nan_column] == 1.0).all()
    df["efficiency"] *= 2  # arithmetic; then sorting, grouping, filtering, stacking, exports
    assert df.sort_values("efficiency")["efficiency"].iloc[0] == 0.5
    assert df.groupby("efficiency")["batch_size"].sum().to_dict() == {
        0.5: 2 + 2,
        1.2: 1 + 1 + 4,
        1.5: 4,
    }
    both = pd.concat([df, twin])
    assert len(both[both["efficiency"] == 0.6]) == 1
    assert both.to_dict(orient="records")[-1]["efficiency"] == 0.6
    assert ",0.6," in twin.to_csv() and twin["efficiency"].to_numpy(copy=True).flags.writeable


def test_constant_columns_without_the_shared_values(monkeypatch):
    kw = {"models": "Gemma-2-9B", "hardware": "H200", "input_tokens": [3, 4], "output_tokens": [2]}
    monkeypatch.setattr(grid_columns, "MAX_CONSTANTS", 0)  # keeps no new value: plain columns
    plain = serve_sweep(**kw, link_efficiency=0.37)
    assert plain["link_efficiency"].to_numpy().strides == (8,)
    monkeypatch.undo()
    shared = serve_sweep(**kw, link_efficiency=0.37)
    assert shared["link_efficiency"].to_numpy().strides == (0,)
    pd.testing.assert_frame_equal(plain, shared, check_exact=True)
