"""Plain-language explanations of a result: which regime, and what would change it.

Pure functions over engine results (no streamlit); every number comes from the engine. Names
passed in must already be inert (ui.words.text.plain).
"""

from __future__ import annotations

from engine import SolveResult
from ui.words.format import capacity, fmt, pct
from ui.words.i18n import N_, _

REGIME_WORDS = {
    "overhead": N_("Overhead-bound"),
    "memory": N_("Memory-bound"),
    "compute": N_("Compute-bound"),
}


def headline(r) -> str:
    """'Overhead-bound · roofline bound: memory' (the engine's regime, the roofline's bound
    beside it)."""
    return _("{regime} · roofline bound: {bound}").format(
        regime=_(REGIME_WORDS[r.regime]), bound=_(r.bottleneck)
    )


def not_fit_text(weight_bytes: float, hw, hw_name: str) -> str:
    return _(
        "**Does not fit.** The weights alone ({weights}) exceed {hardware}'s {capacity}: every "
        "figure below is **hypothetical** (as if it fitted). Shard across devices or quantise."
    ).format(weights=fmt(weight_bytes, "B"), hardware=hw_name, capacity=capacity(hw))


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
            _(
                "**Memory-bound on the roofline.** Intensity {intensity} is below {hardware}'s "
                "effective ridge of {ridge}: moving bytes takes longer than the arithmetic."
            ).format(
                intensity=fmt(ai, "FLOP/byte"), hardware=hw_name, ridge=fmt(ridge, "FLOP/byte")
            )
        )
        if crossover is None:
            lines.append(
                _(
                    "More batch never crosses the ridge here: activation traffic grows as fast "
                    "as the work (raise intensity with lower precision or less activation "
                    "traffic)."
                )
            )
        elif crossover > r.batch_size:
            lines.append(
                _("Batch ≥ {batch} crosses the effective ridge (compute-bound).").format(
                    batch=f"{crossover:,}"
                )
            )
    else:
        lines.append(
            _(
                "**Compute-bound on the roofline.** Intensity {intensity} is above the effective "
                "ridge of {ridge}: a chip with more FLOP/s, lower precision or better efficiency "
                "helps most."
            ).format(intensity=fmt(ai, "FLOP/byte"), ridge=fmt(ridge, "FLOP/byte"))
        )
    share = r.overhead_share
    if r.regime == "overhead":
        lines.append(
            _(
                "**Overhead-bound:** fixed overhead is {share} of latency ({overhead} of "
                "{latency}): larger batches, fewer layers or a leaner runtime (graphs, fused "
                "kernels) help more than a faster chip."
            ).format(
                share=pct(share), overhead=fmt(r.t_overhead_s, "s"), latency=fmt(r.latency_s, "s")
            )
        )
    else:
        lines.append(_("Fixed overhead is {share} of latency.").format(share=pct(share)))
    return lines
