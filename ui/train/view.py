"""Words, metric cards and tables of the training planner (pure: no streamlit).

Every number is the engine's (`engine.train`, `engine.train_search`, the training profile's
residuals), at most scaled to its display unit and shown through ui.core.format. The CSV files
keep the engine's column names, with the profile's measured errors on every row.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ui.core.format import fmt, fmt_all, pct

SHOWN_ROWS = 50  # ranked configurations on screen (the CSV has them all)
RANKED = {  # column: (header, unit or None (as is), factor)
    "tp": ("tp", None, 1),
    "pp": ("pp", None, 1),
    "cp": ("cp", None, 1),
    "vp": ("vp", None, 1),
    "ep": ("ep", None, 1),
    "dp": ("dp", None, 1),
    "micro_batch_size": ("Micro-batch", None, 1),
    "micro_batches": ("Micro-batches", None, 1),
    "zero": ("ZeRO", None, 1),
    "recompute": ("Recompute", None, 1),
    "tokens_per_s": ("Tokens/s", "", 1.0),
    "mfu": ("MFU", "%", 100.0),
    "step_time_s": ("Step", "s", 1.0),
    "bubble_fraction": ("Bubble", "%", 100.0),
    "memory_per_gpu_bytes": ("Memory per GPU", "B", 1.0),
    "memory_headroom_bytes": ("Headroom", "B", 1.0),
    "time_to_train_days": ("Days to budget", "", 1.0),
    "cost_to_train_usd": ("Cost to budget (USD)", "", 1.0),
}
REJECTED = {k: v for k, v in RANKED.items() if k in ("tp", "pp", "cp", "vp", "ep", "dp")}
REJECTED |= {k: RANKED[k] for k in ("micro_batch_size", "zero", "recompute")}
REJECTED |= {"memory_per_gpu_bytes": RANKED["memory_per_gpu_bytes"]}
REJECTED |= {"reason": ("Why rejected", None, 1)}
SCALING = {"gpus": ("GPUs", None, 1)} | {
    k: RANKED[k] for k in ("tp", "pp", "cp", "vp", "dp", "tokens_per_s", "mfu", "step_time_s")
}
OPERATORS = {
    "phase": ("Pass", None, 1),
    "name": ("Operator", None, 1),
    "layer": ("Layers", None, 1),
    "count": ("×", None, 1),
    "flops": ("FLOPs each", "FLOP", 1.0),
    "bytes": ("Bytes each", "B", 1.0),
    "arithmetic_intensity_flop_per_byte": ("Intensity (FLOP/B)", "", 1.0),
    "time_ms": ("Time each", "s", 1e-3),
    "bottleneck": ("Bound", None, 1),
}
ERRORS = (  # residual key prefix: words
    ("mape", "in sample"),
    ("loo_row_mape", "leave one run out"),
    ("loo_table_mape", "leave one table out"),
)


def table(df: pd.DataFrame, spec: Mapping, rows: int | None = None) -> pd.DataFrame:
    """`df`'s columns of `spec` under readable headers (the first `rows`), numbers formatted."""
    part = df if rows is None else df.head(rows)
    out = {}
    for column, (header, unit, factor) in spec.items():
        values = part[column].to_numpy()
        if unit is None:
            out[header] = [
                int(v) if isinstance(v, float | np.floating) and float(v).is_integer() else v
                for v in values
            ]
        else:
            out[header] = fmt_all(np.asarray(values, dtype=float) * factor, unit)
    return pd.DataFrame(out)


def errors(profile) -> dict[str, float]:
    """The training profile's measured MAPE (%) by basis, as its file records them."""
    r = profile.residuals
    return {words: r[f"{key}_pct"] for key, words in ERRORS if f"{key}_pct" in r}


def band(profile) -> float | None:
    """The leave-one-run-out MAPE (%): the band drawn around the curves (None: not measured)."""
    return profile.residuals.get("loo_row_mape_pct")


def error_text(profile) -> str:
    """The profile's measured errors in one sentence, for beside the numbers."""
    found = errors(profile)
    if not found:
        return f"Profile {profile.name}: its error was not measured."
    parts = ", ".join(f"{words} {pct(v / 100)}" for words, v in found.items())
    return (
        f"Profile {profile.name}'s measured error (MAPE of TFLOP/s per GPU, {profile.rows} runs "
        f"of {', '.join(profile.fitted_on) or 'no file'}): {parts}. Read every speed, time and "
        "cost on this page within it; off the fitted ground (other accelerators, precisions, "
        "FlashAttention, MoE) it is a floor (docs/model.md, 'The megatron profile')."
    )


def with_errors(df: pd.DataFrame, profile) -> pd.DataFrame:
    """The CSV's rows, each with the profile's measured errors."""
    cols = {f"profile_{key}_pct": profile.residuals.get(f"{key}_pct") for key, _ in ERRORS}
    return df.assign(**cols)


def headline(r: Mapping, profile) -> list[tuple[str, str, str]]:
    """(label, value, help) metric cards of the chosen configuration."""
    b = band(profile)
    tip = "measured error: " + ("not measured" if b is None else f"±{pct(b / 100)} (LOO)")
    return [
        ("Step time", fmt(r["step_time_s"], "s"), f"one optimizer step; {tip}"),
        ("Tokens/s", fmt(r["tokens_per_s"]), f"all {int(r['gpus']):,} GPUs; {tip}"),
        ("Tokens/s per GPU", fmt(r["tokens_per_s_per_gpu"]), tip),
        ("MFU", pct(r["mfu"]), f"model FLOPs (PaLM) ÷ peak; {tip}"),
        ("HFU", pct(r["hfu"]), "hardware FLOPs (recomputation counted) ÷ peak"),
        ("Model TFLOP/s per GPU", fmt(r["model_tflops_per_gpu"]), tip),
        (
            "Memory per GPU",
            fmt(r["memory_per_gpu_bytes"], "B"),
            "weights, gradients, optimizer, activations",
        ),
        ("Headroom", fmt(r["memory_headroom_bytes"], "B"), "usable − needed (negative: short)"),
        ("Time to the token budget", fmt(r["time_to_train_days"] * 86_400, "s"), tip),
        ("GPU-hours", fmt(r["gpu_hours"]), f"{fmt(r['token_budget'])} tokens"),
        (
            "Cost to the token budget (USD)",
            fmt(r["cost_to_train_usd"]),
            "price per GPU-hour × GPU-hours"
            if r["cost_to_train_usd"] is not None
            else "no price: set one",
        ),
        ("Bubble", pct(r["bubble_fraction"]), "(pp − 1) / (vp · micro-batches)"),
    ]


def caption(s, model_name: str, hw_name: str, counts: tuple[int, int], fits: int) -> str:
    """The scenario in one line (plain: the caller escapes the names)."""
    return (
        f"{model_name} on {s.gpus:,} × {hw_name} · global batch {s.global_batch_size:,} × "
        f"{s.seq_len:,} tokens · {s.precision}, {s.attention} attention · profile {s.profile} · "
        f"{counts[0]:,} configurations searched, {fits:,} fit · ranked by {s.rank_by}"
    )


def file_name(kind: str, s, model_id: str, hw_id: str) -> str:
    return f"train_{kind}_{model_id}_{hw_id}_{s.gpus}gpus_{s.precision}.csv"
