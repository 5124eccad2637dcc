"""Decoder LLMs on the batch-sweep and comparison pages: the decode model's rows as sweep rows.

The tutorial's whole-model view moves a fraction of the weights again for every extra sample
(a vision rule); a decoder LLM's decode step moves the weights once per step for the whole
batch plus each sequence's KV cache. So for LLMs these pages use `engine.decode_sweep` at one
context (the decode page's numbers), and offer the tutorial view as a labelled choice
(ui/widgets/llm_view.py). The decode rows are renamed onto the sweep's columns (one batch = one
decode step: latency is the TPOT, throughput the aggregate tokens/s) so the same charts and
tables draw them.
"""

from __future__ import annotations

import pandas as pd

import engine
from ui.charts import tables

DECODE_ASSUMPTIONS = ("efficiency", "layer_overhead_us", "dispatch_overhead_ms", "memory_reserve")
AS_SWEEP = {  # decode_sweep column -> the sweep column the charts and tables read
    "aggregate_tokens_per_s": "throughput_per_s",
    "tpot_ms": "latency_ms",
    "decode_bottleneck": "bottleneck",
    "decode_regime": "regime",
    "decode_arithmetic_intensity_flop_per_byte": "arithmetic_intensity_flop_per_byte",
    "decode_achieved_tflops": "achieved_tflops",
    "decode_attainable_tflops": "attainable_tflops",
    "decode_mfu": "mfu",
    "decode_t_overhead_ms": "t_overhead_ms",
    "decode_overhead_share": "overhead_share",
}
DECODE_COLUMNS = ["batch_size", "regime", "bottleneck", "latency_ms", "throughput_per_s"]
DECODE_COLUMNS += ["arithmetic_intensity_flop_per_byte", "achieved_tflops", "attainable_tflops"]
DECODE_COLUMNS += ["mfu", "t_overhead_ms", "fits_in_memory", "max_batch_at_context"]
DECODE_HEADERS = {
    "Latency": "TPOT (one decode step)",
    "Bound": "Decode bound",
    "regime": "Decode regime",
}


def decode_overrides(overrides: dict) -> dict:
    """The assumptions the decode model uses (α and the FLOP convention do not apply)."""
    return {k: overrides[k] for k in DECODE_ASSUMPTIONS if k in overrides}


def decode_frame(
    model, hardware: list, batches: list[int], context: int, precision: str, overrides: dict
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the decode_sweep rows as they go to the CSV, the same rows under sweep column names)."""
    raw = engine.decode_sweep(
        model, hardware, batches, [context], precision=precision, **decode_overrides(overrides)
    )
    shown = raw.rename(columns=AS_SWEEP)
    shown["sample"] = "token"  # throughput in tokens/s (sample_unit: 'tokens/s')
    shown["energy_j"] = float("nan")  # the decode model has no energy figure
    return raw, shown


def table(df: pd.DataFrame, names: dict[str, str], columns: list[str]) -> pd.DataFrame:
    """The decode view's rows as the sweep's table, headed as what they are (TPOT, decode)."""
    return tables.display_table(df, names, columns).rename(columns=DECODE_HEADERS)
