"""On-screen tables of the sweep, comparison and decode pages: readable headers, numbers as
ui.words.format text ("543 µs", "1,843", "312 TFLOP/s", "—" for none).

The CSV downloads keep the engine's snake_case, unit-suffixed columns; these frames are only
for reading. Batch sizes and flags stay numbers/booleans so they sort and filter as such.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ui.words.format import MISSING, fmt, fmt_all, sig
from ui.words.i18n import N_, _


def sample_unit(df: pd.DataFrame) -> str:
    """The model's throughput unit, e.g. 'images/s' (from the catalogue's `sample`)."""
    return f"{df['sample'].iloc[0]}s/s"


def crossover_value(value: object) -> int | None:
    """A crossover batch from `engine.crossover_batch` (<NA> when none) as an int or None."""
    return None if pd.isna(value) else int(value)


def crossover_text(value: object) -> str:
    """A crossover batch for display: '78', or 'never in sweep' for <NA>/None."""
    batch = crossover_value(value)
    return _("never in sweep") if batch is None else f"{batch:,}"


def speedup_table(df: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """Batch × accelerator grid of `with_speedup`'s ratio as text ("2.41×"), headed by name."""
    wide = df.pivot(index="batch_size", columns="hardware", values="speedup_vs_baseline_ratio")
    wide.columns = [names.get(str(h), str(h)) for h in wide.columns]
    text = wide.apply(lambda col: [f"{fmt(v)}×" if v == v else MISSING for v in col])
    return text.rename_axis(_("Batch size")).reset_index()


CROSSOVER = N_("Crossover batch")  # hardware_summary's column (ui.compare.view renames it)


def hardware_summary(
    df: pd.DataFrame, crossover: pd.DataFrame, names: dict[str, str]
) -> pd.DataFrame:
    """One row per accelerator (sweep order): roofs, ridges, crossover batch, best throughput,
    as text from ui.words.format (units in the cells or, for counts, in the header); headers in
    the session's language (CROSSOVER: the crossover column's).

    Bandwidth is peak ÷ ridge, as in ui.charts.roofline.roof_table."""
    codes, ids = pd.factorize(df["hardware"].astype(str))
    first = df.iloc[[int(np.argmax(codes == c)) for c in range(len(ids))]]
    tp = df["throughput_per_s"].to_numpy()
    best = df.iloc[[int(np.argmax(np.where(codes == c, tp, -np.inf))) for c in range(len(ids))]]
    cross = dict(zip(crossover["hardware"].astype(str), crossover["crossover_batch"], strict=True))
    peak = first["peak_tflops"].to_numpy() * 1e12
    return pd.DataFrame(
        {
            _("Accelerator"): [names.get(h, h) for h in ids],
            _("Peak"): fmt_all(peak, "FLOP/s"),
            _("Bandwidth"): fmt_all(first["memory_bandwidth_bytes_per_s"].to_numpy(), "B/s"),
            _("Ridge, theoretical (FLOP/byte)"): fmt_all(first["ridge_flop_per_byte"]),
            _("Ridge, effective (FLOP/byte)"): fmt_all(first["effective_ridge_flop_per_byte"]),
            _(CROSSOVER): [crossover_text(cross[h]) for h in ids],
            _("Best throughput ({unit})").format(unit=sample_unit(df)): fmt_all(
                best["throughput_per_s"]
            ),
            _("at batch"): best["batch_size"].to_numpy(),
        }
    )


# column: (on-screen header, ui.words.format unit, factor to that unit); "{unit}": samples/s;
# headers shown through _()
DISPLAY = {
    "hardware": (N_("Accelerator"), None, 1.0),
    "batch_size": (N_("Batch size"), None, 1.0),
    "bottleneck": (N_("Bound"), None, 1.0),
    "latency_ms": (N_("Latency"), "s", 1e-3),
    "t_overhead_ms": (N_("Fixed overhead"), "s", 1e-3),
    "throughput_per_s": (N_("Throughput ({unit})"), "", 1.0),
    "marginal_throughput_gain_pct": (N_("Marginal throughput gain vs previous batch"), "%", 1.0),
    "speedup_vs_baseline_ratio": (N_("Speedup vs baseline (×)"), "", 1.0),
    "arithmetic_intensity_flop_per_byte": (N_("Intensity (FLOP/byte)"), "", 1.0),
    "achieved_tflops": (N_("Achieved"), "FLOP/s", 1e12),
    "attainable_tflops": (N_("Roof"), "FLOP/s", 1e12),
    "mfu": (N_("MFU (of peak)"), "%", 100.0),
    "energy_j": (N_("Energy per batch"), "J", 1.0),
    "fits_in_memory": (N_("Fits in memory"), None, 1.0),
    "max_batch_size": (N_("Max batch that fits (sequences)"), None, 1.0),
    "ttft_ms": ("TTFT", "s", 1e-3),
    "memory_per_device_bytes": (N_("Memory per device"), "B", 1.0),
}


def display_table(df: pd.DataFrame, names: dict[str, str], columns: list[str]) -> pd.DataFrame:
    """The chosen sweep columns under readable headers, numbers as ui.words.format text ("543 µs",
    "1,843", "—" for none); batch sizes, counts and flags stay as they are."""
    unit, out = sample_unit(df), {}
    for column in columns:
        header, shown, factor = DISPLAY.get(column, (column, None, 1.0))
        values = df[column].to_numpy()
        if column == "hardware":
            values = [names.get(str(h), str(h)) for h in values]
        elif shown is not None:
            values = fmt_all(values * factor, shown)
        out[_(header).format(unit=unit)] = values
    return pd.DataFrame(out)


def tutorial_table(df: pd.DataFrame, names: dict[str, str], columns: list[str]) -> pd.DataFrame:
    """The tutorial view's rows under readable headers (the regime beside the roofline bound)."""
    return display_table(df, names, columns).rename(columns={"regime": _("Regime")})


# column: (on-screen header, ui.words.format unit or None (as is), factor to that unit);
# headers shown through _()
DECODE_TABLE = {
    "context": (N_("Context (tokens)"), None, 1.0),
    "batch_size": (N_("Batch (sequences)"), None, 1.0),
    "tpot_ms": ("TPOT", "s", 1e-3),
    "tokens_per_s": (N_("Per user (tokens/s)"), "", 1.0),
    "aggregate_tokens_per_s": (N_("Aggregate (tokens/s)"), "", 1.0),
    "ttft_ms": ("TTFT", "s", 1e-3),
    "decode_bottleneck": (N_("Decode bound"), None, 1.0),
    "decode_arithmetic_intensity_flop_per_byte": (N_("Decode intensity (FLOP/byte)"), "", 1.0),
    "kv_cache_bytes": (N_("KV cache"), "B", 1.0),
    "memory_required_bytes": (N_("Memory needed"), "B", 1.0),
    "fits_in_memory": (N_("Fits"), None, 1.0),
}


def decode_table(df: pd.DataFrame) -> pd.DataFrame:
    """The decode sweep's headline columns under readable headers, numbers as ui.words.format
    text."""
    out = {}
    for column, (header, unit, factor) in DECODE_TABLE.items():
        values = df[column].to_numpy()
        out[_(header)] = values if unit is None else fmt_all(values * factor, unit)
    return pd.DataFrame(out)


def readable(df: pd.DataFrame):
    """A catalogue-style frame for st.dataframe: numbers as ui.words.format.sig text (4 figures,
    thousands separators) but still numbers underneath (they sort), and a column with a gap
    as text with "—" (Streamlit draws a missing number as "None")."""
    gaps = [c for c in df.select_dtypes("number") if df[c].isna().any()]
    df = df.assign(**{c: [MISSING if pd.isna(v) else sig(v, 4) for v in df[c]] for c in gaps})
    return df.style.format(lambda v: sig(v, 4), list(df.select_dtypes("number")))
