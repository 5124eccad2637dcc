"""The catalogue's tables: every accelerator and model with its figures in the units its headers
name (converted with the engine's pint registry), its vendor, origin, source and notes.

Pure: catalogue specs in, DataFrames out (the page shows them through ui.charts.tables.readable
and offers them as CSV).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import engine
from engine import PRECISIONS
from ui.core import custom

BUILTIN = {str(p) for p in engine.BUILTIN_FILES}
RIDGE = "Ridge fp16 (FLOP/byte)"
UNIT = {p: "TOPS" if "int" in p else "TFLOP/s" for p in PRECISIONS}  # TOPS: 1 int op = 1 FLOP
PEAKS = {p: f"Peak {p.replace('fp16', 'fp16/bf16')} ({UNIT[p]}, dense)" for p in PRECISIONS}
UNITS = dict.fromkeys(PEAKS.values(), ("flop/s", "TFLOP/s")) | {"Dispatch (ms)": ("s", "ms")}
UNITS |= {"Bandwidth (GB/s)": ("byte/s", "GB/s"), "Capacity (GiB)": ("byte", "GiB")}
UNITS |= {"Params (B)": ("", "gigacount"), "Active params (B)": ("", "gigacount")}
UNITS |= {"FLOPs/sample (GFLOP)": ("flop", "GFLOP")}  # header: (SI unit, display unit)
WHOLE = ("Layers", "Hidden", "Heads", "KV heads", "Context (tokens)")
CONVENTION = {"mac1": "1 per MAC", "mac2": "2 per MAC"}


def vendor_of(h) -> str:
    return "Custom" if h.origin == custom.ORIGIN else (h.vendor or "unknown")


def provenance(spec) -> dict:
    """Origin, a link only for http(s) sources (else the text goes to the notes), date, notes."""
    url = spec.source if spec.source.startswith(("https://", "http://")) else None
    notes = f"{spec.notes} (source: {spec.source})" if spec.source and not url else spec.notes
    origin = "built-in" if spec.origin in BUILTIN else spec.origin
    return {"Origin": origin, "Source": url, "Retrieved": spec.retrieved, "Notes": notes.strip()}


def in_units(rows: list[dict]) -> pd.DataFrame:
    """Rows of SI values -> a table in the units its headers name."""
    df = pd.DataFrame(rows)
    for header in df.columns.intersection(list(UNITS)):
        si, shown = UNITS[header]
        df[header] = engine.quantity(df[header].to_numpy(float), si).m_as(shown).round(6)
    return df


def hardware_frame(specs: list) -> pd.DataFrame:
    rows = [
        {"Id": h.id, "Name": h.name, "Vendor": vendor_of(h)}
        | {PEAKS[p]: h.peak_flop_per_s.get(p, np.nan) for p in PRECISIONS}
        | {"Bandwidth (GB/s)": h.memory_bandwidth_bytes_per_s, "TDP (W)": h.tdp_w}
        | {"Capacity (GiB)": h.memory_capacity_bytes, "Dispatch (ms)": h.dispatch_overhead_s}
        | {RIDGE: h.peak_flop_per_s["fp16"] / h.memory_bandwidth_bytes_per_s}
        | provenance(h)
        for h in specs
    ]
    df = in_units(rows)
    return df.drop(columns=[c for c in PEAKS.values() if c in df and df[c].isna().all()])


def model_frame(specs: list) -> pd.DataFrame:
    rows = [
        {"Id": m.id, "Name": m.name, "Task": m.task, "Params (B)": m.params}
        | {"Active params (B)": m.active_params, "FLOPs/sample (GFLOP)": m.flops_per_sample}
        | {"FLOP convention": CONVENTION[m.flop_convention], "Sample": m.sample}
        | dict(zip(WHOLE, (m.layers, m.hidden, m.heads, m.kv_heads, m.context_length), strict=True))
        | provenance(m)
        for m in specs
    ]
    return in_units(rows).astype({w: "Int64" for w in WHOLE if rows})
