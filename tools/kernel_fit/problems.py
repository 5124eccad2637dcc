"""A measured table turned into fitting problems: one per operator class and data type.

Each problem holds the inputs of its engine evaluation function (engine/catalog/kernels.py),
the measured seconds, the group of every row (the shape that is held out whole) and a short
description of every row for the worst-shapes list. Units: the tables' latencies are ms; the
collectives' `message_size` counts elements (aiconfigurator's collectors divide nccl-tests'
bytes by the element size), so bytes = message_size × element bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tools.kernel_fit.datasheets import DTYPES

KV_BYTES = {"bfloat16": 2.0, "fp8": 1.0}
COLLECTIVE_BYTES = {"bfloat16": 2.0, "half": 2.0, "int8": 1.0}
COLLECTIVE_DTYPES = {"bfloat16": "bf16", "half": "fp16", "int8": "int8"}
HEAD_SHAPE = ["num_heads", "num_key_value_heads", "head_dim", "window_size"]


@dataclass(frozen=True)
class Problem:
    """The rows of one curve to fit: inputs, measured seconds, held-out groups, descriptions."""

    op: str
    dtype: str
    peak: str | None  # the accelerator's peak it runs at (None: a collective)
    fixed: dict[str, float]  # law fields known, not fitted (bytes per element)
    inputs: dict[str, np.ndarray]
    measured_s: np.ndarray
    groups: np.ndarray  # group id per row: a held-out group is never fitted
    held_out: str  # what a group is
    labels: list[str] = field(repr=False)


def _groups(df: pd.DataFrame, columns: list[str]) -> np.ndarray:
    return pd.MultiIndex.from_frame(df[columns]).factorize()[0]


def _seconds(df: pd.DataFrame) -> np.ndarray:
    return df["latency"].to_numpy(float) * 1e-3


def gemm(df: pd.DataFrame) -> Iterator[Problem]:
    """One problem per GEMM data type; the (n, k) weight shapes are held out whole."""
    for name, rows in df.groupby("gemm_dtype", sort=True):
        if name not in DTYPES:
            continue
        dtype, peak, weight_bytes = DTYPES[name]
        m, n, k = (rows[c].to_numpy(float) for c in "mnk")
        yield Problem(
            op="gemm",
            dtype=dtype,
            peak=peak,
            fixed={"weight_bytes": weight_bytes},
            inputs={"m": m, "n": n, "k": k},
            measured_s=_seconds(rows),
            groups=_groups(rows, ["n", "k"]),
            held_out="30 % of the (n, k) weight shapes",
            labels=[f"m={a:g} n={b:g} k={c:g}" for a, b, c in zip(m, n, k, strict=True)],
        )


def _window(rows: pd.DataFrame) -> np.ndarray:
    window = rows["window_size"].to_numpy(float)
    return np.where(window > 0, window, np.inf)


def _head_labels(rows: pd.DataFrame, length: str) -> list[str]:
    columns = ["batch_size", length, *HEAD_SHAPE]
    return [
        f"batch={b} {length}={s} heads={h}/{kv} d={d}" + (f" window={w}" if w else "")
        for b, s, h, kv, d, w in rows[columns].itertuples(index=False)
    ]


def _attention_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Beam width 1; an older table without windows or beams has neither."""
    df = df.assign(**{c: 0 for c in ("window_size",) if c not in df})
    return df[df["beam_width"] == 1] if "beam_width" in df else df


def decode_attention(df: pd.DataFrame) -> Iterator[Problem]:
    """One problem per KV-cache type; the head shapes are held out whole. `step` is the
    number of cached tokens, so a query sees step + 1 keys (or its window)."""
    df = _attention_rows(df)
    for kv, rows in df.groupby("kv_cache_dtype", sort=True):
        keys = np.minimum(rows["step"].to_numpy(float) + 1, _window(rows))
        yield Problem(
            op="decode_attention",
            dtype="bf16" if kv == "bfloat16" else f"bf16_{kv}kv",
            peak="bf16",
            fixed={"kv_bytes": KV_BYTES[kv]},
            inputs={
                "batch": rows["batch_size"].to_numpy(float),
                "keys": keys,
                "heads": rows["num_heads"].to_numpy(float),
                "kv_heads": rows["num_key_value_heads"].to_numpy(float),
                "head_dim": rows["head_dim"].to_numpy(float),
            },
            measured_s=_seconds(rows),
            groups=_groups(rows, HEAD_SHAPE),
            held_out="30 % of the head shapes (heads, KV heads, head size, window)",
            labels=_head_labels(rows, "step"),
        )


def prefill_attention(df: pd.DataFrame) -> Iterator[Problem]:
    """One problem per (attention type, KV-cache type); head shapes held out whole."""
    df = _attention_rows(df)
    for (compute, kv), rows in df.groupby(["attn_dtype", "kv_cache_dtype"], sort=True):
        dtype = "fp8" if compute == "fp8" else ("bf16" if kv == "bfloat16" else f"bf16_{kv}kv")
        yield Problem(
            op="prefill_attention",
            dtype=dtype,
            peak="fp8" if compute == "fp8" else "bf16",
            fixed={"kv_bytes": KV_BYTES[kv]},
            inputs={
                "batch": rows["batch_size"].to_numpy(float),
                "tokens": rows["isl"].to_numpy(float),
                "heads": rows["num_heads"].to_numpy(float),
                "kv_heads": rows["num_key_value_heads"].to_numpy(float),
                "head_dim": rows["head_dim"].to_numpy(float),
                "window": _window(rows),
            },
            measured_s=_seconds(rows),
            groups=_groups(rows, HEAD_SHAPE),
            held_out="30 % of the head shapes (heads, KV heads, head size, window)",
            labels=_head_labels(rows, "isl"),
        )


def collective(df: pd.DataFrame, op: str, dtype_column: str) -> Iterator[Problem]:
    """One problem per collective data type (a CUDA-graph backend where the table has
    several): its `gpus` input says which count a row belongs to; message sizes held out."""
    if "backend" in df:
        df = df[df["backend"].str.endswith("graph")]
    for name, rows in df.groupby(dtype_column, sort=True):
        message_bytes = rows["message_size"].to_numpy(float) * COLLECTIVE_BYTES[name]
        gpus = rows["num_gpus"].to_numpy(int)
        yield Problem(
            op=op,
            dtype=COLLECTIVE_DTYPES[name],
            peak=None,
            fixed={},
            inputs={"gpus": gpus, "message_bytes": message_bytes},
            measured_s=_seconds(rows),
            groups=_groups(rows, ["message_size"]),
            held_out="30 % of the message sizes",
            labels=[f"{p} GPUs, {b:,.0f} B" for p, b in zip(gpus, message_bytes, strict=True)],
        )


def problems(table: str, df: pd.DataFrame) -> Iterator[Problem]:
    """The problems of one measured table."""
    if table == "gemm_perf":
        yield from gemm(df)
    elif table == "generation_attention_perf":
        yield from decode_attention(df)
    elif table == "context_attention_perf":
        yield from prefill_attention(df)
    elif table == "custom_allreduce_perf":
        yield from collective(df, "all_reduce", "allreduce_dtype")
    elif table == "nccl_perf":
        for op, rows in df.groupby("op_name", sort=True):
            yield from collective(rows, str(op), "nccl_dtype")
