"""Plain-language explanations of a result: which regime, and what would change it.

Pure functions over engine results (no streamlit); every number comes from the engine. Names
passed in must already be inert (ui.core.text.plain).
"""

from __future__ import annotations

from engine import SolveResult
from ui.core.format import capacity, fmt, pct

REGIME_WORDS = {
    "overhead": "Overhead-bound",
    "memory": "Memory-bound",
    "compute": "Compute-bound",
}


def headline(r) -> str:
    """'Overhead-bound · roofline bound: memory' (the engine's regime, the roofline's bound
    beside it)."""
    return f"{REGIME_WORDS[r.regime]} · roofline bound: {r.bottleneck}"


def not_fit_text(weight_bytes: float, hw, hw_name: str) -> str:
    return (
        f"**Does not fit.** The weights alone ({fmt(weight_bytes, 'B')}) exceed {hw_name}'s "
        f"{capacity(hw)}: every figure below is **hypothetical** (as if it fitted). Shard "
        "across devices or quantise."
    )


def explain(r: SolveResult, hw_name: str, crossover: int | None) -> list[str]:
    """A few sentences: the bound, the overhead share, and the lever that would help most.

    Args:
        r: the solve.
        hw_name: the accelerator's display name, already inert.
        crossover: the engine's smallest compute-bound batch (None: none).
    """
    lines = []
    ai, ridge = r.arithmetic_intensity_flop_per_byte, r.effective_ridge_flop_per_byte
    if r.bottleneck == "memory":
        lines.append(
            f"**Memory-bound on the roofline.** Intensity {fmt(ai, 'FLOP/byte')} is below "
            f"{hw_name}'s effective ridge of {fmt(ridge, 'FLOP/byte')}: moving bytes takes longer "
            "than the arithmetic."
        )
        if crossover is None:
            lines.append(
                "More batch never crosses the ridge here: activation traffic grows as fast as "
                "the work (raise intensity with lower precision or less activation traffic)."
            )
        elif crossover > r.batch_size:
            lines.append(f"Batch ≥ {crossover:,} crosses the effective ridge (compute-bound).")
    else:
        lines.append(
            f"**Compute-bound on the roofline.** Intensity {fmt(ai, 'FLOP/byte')} is above the "
            f"effective ridge of {fmt(ridge, 'FLOP/byte')}: a chip with more FLOP/s, lower "
            "precision or better efficiency helps most."
        )
    share = r.overhead_share
    if r.regime == "overhead":
        lines.append(
            f"**Overhead-bound:** fixed overhead is {pct(share)} of latency "
            f"({fmt(r.t_overhead_s, 's')} of {fmt(r.latency_s, 's')}): larger batches, "
            "fewer layers or a leaner runtime (graphs, fused kernels) help more than a faster "
            "chip."
        )
    else:
        lines.append(f"Fixed overhead is {pct(share)} of latency.")
    return lines
