"""The catalogue's tables: every accelerator and model with its figures in the units its headers
name (converted with the engine's pint registry), its vendor, origin, source and notes.

Pure: catalogue specs in, DataFrames out (the page shows them through ui.charts.tables.readable
and offers them as CSV). The frames and their CSVs keep English headers and values; `shown`
translates a frame's headers and FLOP conventions for the screen (ui.words.i18n).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import engine
from engine import PRECISIONS
from ui.links import custom
from ui.words.i18n import N_, _

BUILTIN = {str(p) for p in engine.BUILTIN_FILES}
# headers (English in the frames and CSVs; `shown` translates them for the screen)
RIDGE = N_("Ridge fp16 (FLOP/byte)")
DISPATCH, BANDWIDTH, CAPACITY = N_("Dispatch (ms)"), N_("Bandwidth (GB/s)"), N_("Capacity (GiB)")
PARAMS, ACTIVE, FLOPS = N_("Params (B)"), N_("Active params (B)"), N_("FLOPs/sample (GFLOP)")
TDP = N_("TDP (W)")
NATIVE = N_("Native formats (8- and 4-bit)")
# the serving model's formats narrower than 16 bits, listed where the chip has their peak
NARROW = tuple(n for n, f in engine.FORMATS.items() if f.weight_bits < 16)
# the block-scaled 4-bit formats' peaks (HardwareSpec.fp4_peak_flop_per_s) after the precisions'
FP4 = tuple(dict.fromkeys(f.peak for f in engine.FORMATS.values() if f.peak not in PRECISIONS))
KEYS = (*PRECISIONS, *FP4)
UNIT = {p: "TOPS" if "int" in p else "TFLOP/s" for p in KEYS}  # TOPS: 1 int op = 1 FLOP
PEAK = N_("Peak {precision} ({unit}, dense)")
PEAK_PARTS = {p: {"precision": p.replace("fp16", "fp16/bf16"), "unit": UNIT[p]} for p in KEYS}
PEAKS = {p: PEAK.format(**PEAK_PARTS[p]) for p in KEYS}
UNITS = dict.fromkeys(PEAKS.values(), ("flop/s", "TFLOP/s")) | {DISPATCH: ("s", "ms")}
UNITS |= {BANDWIDTH: ("byte/s", "GB/s"), CAPACITY: ("byte", "GiB")}
UNITS |= {PARAMS: ("", "gigacount"), ACTIVE: ("", "gigacount")}
UNITS |= {FLOPS: ("flop", "GFLOP")}  # header: (SI unit, display unit)
WHOLE = (N_("Layers"), N_("Hidden"), N_("Heads"), N_("KV heads"), N_("Context (tokens)"))
CONVENTION_HEADER = N_("FLOP convention")
CONVENTION = {"mac1": N_("1 per MAC"), "mac2": N_("2 per MAC")}  # values: shown through _()
SINGLE = (N_("Id"), N_("Name"), N_("Vendor"), N_("Task"), N_("Sample"))
SINGLE += (N_("Origin"), N_("Source"), N_("Retrieved"), N_("Notes"))  # headers as written


def vendor_of(hardware) -> str:
    return "Custom" if hardware.origin == custom.ORIGIN else (hardware.vendor or "unknown")


def provenance(spec) -> dict:
    """Origin, a link only for http(s) sources (else the text goes to the notes), date, notes."""
    url = spec.source if spec.source.startswith(("https://", "http://")) else None
    notes = f"{spec.notes} (source: {spec.source})" if spec.source and not url else spec.notes
    origin = "built-in" if spec.origin in BUILTIN else spec.origin
    return {"Origin": origin, "Source": url, "Retrieved": spec.retrieved, "Notes": notes.strip()}


def header(column: str) -> str:
    """A frame's header as shown, in the session's language."""
    for p, text in PEAKS.items():
        if column == text:
            return _(PEAK).format(**PEAK_PARTS[p])
    return _(column)


def shown(df: pd.DataFrame) -> pd.DataFrame:
    """`df` for the screen: headers and FLOP conventions in the session's language (the frame
    itself, and its CSV, stay English)."""
    if CONVENTION_HEADER in df:
        df = df.assign(**{CONVENTION_HEADER: [_(v) for v in df[CONVENTION_HEADER]]})
    return df.rename(columns=header)


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
        | {PEAKS[p]: h.fp4_peak_flop_per_s.get(p, np.nan) for p in FP4}
        | {NATIVE: ", ".join(n for n in NARROW if engine.runs_natively(h, n))}
        | {BANDWIDTH: h.memory_bandwidth_bytes_per_s, TDP: h.tdp_w}
        | {CAPACITY: h.memory_capacity_bytes, DISPATCH: h.dispatch_overhead_s}
        | {RIDGE: h.peak_flop_per_s["fp16"] / h.memory_bandwidth_bytes_per_s}
        | provenance(h)
        for h in specs
    ]
    df = in_units(rows)
    return df.drop(columns=[c for c in PEAKS.values() if c in df and df[c].isna().all()])


def model_frame(specs: list) -> pd.DataFrame:
    rows = [
        {"Id": m.id, "Name": m.name, "Task": m.task, PARAMS: m.params}
        | {ACTIVE: m.active_params, FLOPS: m.flops_per_sample}
        | {CONVENTION_HEADER: CONVENTION[m.flop_convention], "Sample": m.sample}
        | dict(zip(WHOLE, (m.layers, m.hidden, m.heads, m.kv_heads, m.context_length), strict=True))
        | provenance(m)
        for m in specs
    ]
    return in_units(rows).astype({w: "Int64" for w in WHOLE if rows})
