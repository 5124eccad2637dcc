"""The comparison page's per-accelerator summary (with the exact crossover beside the first in
the user's list) and its captions. Pure pandas over engine results."""

from __future__ import annotations

import pandas as pd

from ui.charts import tables
from ui.core.format import sig

LISTED = "Crossover batch (first in your list)"
EXACT = "Crossover batch (exact)"
TUTORIAL_COLUMNS = ["hardware", "batch_size", "regime", "bottleneck", "latency_ms"]
TUTORIAL_COLUMNS += ["throughput_per_s"]
TUTORIAL_COLUMNS += ["speedup_vs_baseline_ratio", "arithmetic_intensity_flop_per_byte"]
TUTORIAL_COLUMNS += ["achieved_tflops", "attainable_tflops", "mfu", "t_overhead_ms", "energy_j"]
DECODE_COLUMNS = ["hardware", "batch_size", "regime", "bottleneck", "latency_ms"]
DECODE_COLUMNS += ["throughput_per_s"]
DECODE_COLUMNS += ["speedup_vs_baseline_ratio", "arithmetic_intensity_flop_per_byte"]
DECODE_COLUMNS += ["achieved_tflops", "attainable_tflops", "mfu", "t_overhead_ms"]
DECODE_COLUMNS += ["fits_in_memory"]


def summary(
    df: pd.DataFrame, cross: pd.DataFrame, names: dict[str, str], exact: dict | None
) -> pd.DataFrame:
    """One row per accelerator; `exact` (hardware id -> the engine's smallest compute-bound
    batch, None: never) adds the exact crossover beside the first one in the list."""
    out = tables.hardware_summary(df, cross, names).rename(columns={"Crossover batch": LISTED})
    if exact is not None:
        ids = pd.unique(df["hardware"].astype(str))
        column = ["never" if exact[h] is None else f"{exact[h]:,}" for h in ids]
        out.insert(out.columns.get_loc(LISTED), EXACT, column)
    return out


def ridge_caption(efficiency: float, precision: str, note: str, decode: bool) -> str:
    what = "decode step" if decode else "batch"
    return (
        f"Ridge = peak ÷ bandwidth (theoretical) and peak × η ÷ bandwidth (effective, η = "
        f"{sig(efficiency)}). {LISTED}: the first {what} in your list that is compute-bound"
        + ("" if decode else f"; {EXACT}: the smallest compute-bound batch (engine)")
        + f". Peaks for {precision}. {note}."
    )


def crossover_note(cross: pd.DataFrame, exact: dict | None, names: dict[str, str]) -> str | None:
    """Where the first compute-bound batch of the list is not the exact crossover, say both: a
    sweep of powers of two reports the first (the tutorial's "H100 crosses over at batch 4"),
    the engine the exact one (3)."""
    if exact is None:
        return None
    parts = []
    for h, value in zip(cross["hardware"].astype(str), cross["crossover_batch"], strict=True):
        first = tables.crossover_value(value)
        if first is not None and exact.get(h) is not None and first != exact[h]:
            parts.append(f"{names.get(h, h)} {first:,} in your list, exactly {exact[h]:,}")
    if not parts:
        return None
    return (
        "Crossover: " + "; ".join(parts) + ". A sweep reports its first compute-bound batch, "
        "as the tutorial does: its 'H100 crosses over at batch 4' is the first power of two in "
        "its sweep, where the exact crossover is 3."
    )
