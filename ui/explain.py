"""Plain-language explanations of a result: which regime, and what would change it.

Pure functions over engine results (no streamlit); every number comes from the engine.
"""

from __future__ import annotations

import math

from engine import SolveResult


def crossover_batch_estimate(r: SolveResult) -> int | None:
    """Smallest batch at which the solve turns compute-bound under the same assumptions.

    t_compute > t_memory  <=>  B·F/(Π·η) > W·(1 + α·B)/β  <=>  B·(F/(Π·η) - W·α/β) > W/β,
    so a crossover exists only when F/(Π·η) > W·α/β (otherwise more batch never helps).
    """
    a = r.assumptions
    per_sample_compute = r.flops / r.batch_size / (r.peak_flop_per_s * a.efficiency)
    bw = r.peak_flop_per_s / r.ridge_flop_per_byte
    per_sample_memory = r.weight_bytes * a.activation_fraction / bw
    slope = per_sample_compute - per_sample_memory
    if slope <= 0:
        return None
    return max(1, math.floor(r.weight_bytes / bw / slope) + 1)


def explain(r: SolveResult, model_name: str, hw_name: str) -> list[str]:
    """A few sentences: the regime, the overhead share, and the lever that would help most."""
    lines = []
    share = r.overhead_share
    if r.bottleneck == "memory":
        lines.append(
            f"**Memory-bound.** Intensity {r.arithmetic_intensity_flop_per_byte:.3g} FLOP/byte is "
            f"below {hw_name}'s effective ridge of {r.effective_ridge_flop_per_byte:.3g} "
            "FLOP/byte: moving bytes takes longer than the arithmetic."
        )
        cross = crossover_batch_estimate(r)
        if cross is None:
            lines.append(
                "More batch never crosses the ridge here: activation traffic grows as "
                "fast as the work (raise intensity with lower precision or less "
                "activation traffic)."
            )
        elif cross > r.batch_size:
            lines.append(f"Batch ≥ {cross:,} crosses the effective ridge (compute-bound).")
    else:
        lines.append(
            f"**Compute-bound.** Intensity {r.arithmetic_intensity_flop_per_byte:.3g} FLOP/byte "
            f"is above the effective ridge of {r.effective_ridge_flop_per_byte:.3g} FLOP/byte: "
            "a chip with more FLOP/s, lower precision or better efficiency helps most."
        )
    if share >= 0.5:
        lines.append(
            f"Fixed overhead is **{share:.0%} of latency** ({r.t_overhead_s * 1e3:.3g} ms of "
            f"{r.latency_s * 1e3:.3g} ms): larger batches, fewer layers or a leaner runtime "
            "(graphs, fused kernels) help more than a faster chip."
        )
    else:
        lines.append(f"Fixed overhead is {share:.0%} of latency.")
    if not r.fits_in_memory:
        lines.append(
            f"⚠️ The weights ({r.weight_bytes / 1e9:.3g} GB) do not fit in {hw_name}'s "
            f"{r.memory_capacity_bytes / 2**30:.3g} GiB: shard across devices or quantise."
        )
    return lines
