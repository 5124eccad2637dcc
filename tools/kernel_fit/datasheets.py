"""The datasheet figures every curve is a fraction of: dense peak FLOP/s per type and bandwidth.

An accelerator in the catalogue (data/hardware.toml) uses the catalogue's figures, so an
efficiency here and the serving model's mean the same thing; `PENDING` holds the accelerators
the catalogue does not list yet, each figure from the vendor's page (dense: the 2:4-sparse
headlines halved; a rack's figures divided by its GPUs). tests/test_kernel_curves.py checks
that every accelerator the catalogue lists has the catalogue's figures here.
"""

from __future__ import annotations

from dataclasses import dataclass

import engine

# Which peak a data type runs at, and its bytes per element. Weight-only formats (int8_wo,
# int4_wo, w4a16) compute at 16 bits; SmoothQuant (int8_sq) at int8; nvfp4 at fp4.
DTYPES = {
    "bfloat16": ("bf16", "bf16", 2.0),
    "fp8": ("fp8", "fp8", 1.0),
    "fp8_block": ("fp8_block", "fp8", 1.0),
    "nvfp4": ("nvfp4", "fp4", 0.5),
    "int8_wo": ("int8_wo", "bf16", 1.0),
    "int4_wo": ("int4_wo", "bf16", 0.5),
    "sq": ("int8_sq", "int8", 1.0),
}  # table's name -> (curve dtype, peak key, weight bytes)
CATALOGUE_PEAKS = {"bf16": "fp16", "fp8": "fp8", "int8": "int8"}  # fp4: the catalogue's nvfp4


@dataclass(frozen=True, slots=True)
class Datasheet:
    """One accelerator's figures as the kernel files state them (unit strings) and cite."""

    peaks: dict[str, str]  # PEAK_KEYS -> "989 TFLOP/s"
    memory_bandwidth: str  # "3350 GB/s"
    source: str
    notes: str = ""


PENDING: dict[str, Datasheet] = {}  # every accelerator the tables measure is catalogued today


def _tflops(value: float) -> str:
    return f"{value / 1e12:g} TFLOP/s"


def datasheet(accelerator: str) -> Datasheet:
    """The catalogue's figures for `accelerator`, or the cited ones while it is pending."""
    catalog = engine.load_catalog(use_env=False)
    try:
        spec = catalog.find_hardware(accelerator)
    except ValueError:
        return PENDING[accelerator]
    peaks = {
        key: _tflops(spec.peak_flop_per_s[ours])
        for key, ours in CATALOGUE_PEAKS.items()
        if ours in spec.peak_flop_per_s
    }
    if "nvfp4" in spec.fp4_peak_flop_per_s:
        peaks["fp4"] = _tflops(spec.fp4_peak_flop_per_s["nvfp4"])
    return Datasheet(
        peaks=peaks,
        memory_bandwidth=f"{spec.memory_bandwidth_bytes_per_s / 1e9:g} GB/s",
        source=spec.source,
        notes="data/hardware.toml",
    )
