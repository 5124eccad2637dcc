"""The first-order roofline solve of SPEC.md §1 (Williams, Waterman & Patterson, CACM 2009).

One kernel, `roofline_terms`, does the arithmetic on floats or numpy arrays alike, so the
scalar `solve` and the vectorised sweeps share every formula. Inputs are SI floats; results
carry their units in their names and explain themselves (bottleneck, overhead share, the gap
between the roof and the achieved point, warnings).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from engine.specs import BYTES_PER_PARAM, DEFAULTS, Assumptions, HardwareSpec, ModelSpec

IDLE_POWER_FRACTION = 0.3  # energy = TDP · (0.3 + 0.7·MFU) · latency (SPEC §1)


def roofline_terms(*, flops, bytes_moved, peak, bandwidth, efficiency, overhead_s, tdp_w):
    """SPEC §1 from `flops` and `bytes_moved` onwards; every argument a float or an array.

    Returns:
        A dict of arrays (or floats): t_compute_s, t_memory_s, latency_s, intensity,
        ridge, ridge_eff, attainable, achieved (FLOP/s), mfu, energy_j, compute_bound (bool).
    """
    t_compute = flops / (peak * efficiency)
    t_memory = bytes_moved / bandwidth
    latency = np.maximum(t_compute, t_memory) + overhead_s
    intensity = flops / bytes_moved
    achieved = flops / latency
    mfu = np.clip(achieved / peak, 0.0, 1.0)
    return {
        "t_compute_s": t_compute,
        "t_memory_s": t_memory,
        "latency_s": latency,
        "intensity": intensity,
        "ridge": peak / bandwidth,
        "ridge_eff": peak * efficiency / bandwidth,
        "attainable": np.minimum(peak * efficiency, bandwidth * intensity),
        "achieved": achieved,
        "mfu": mfu,
        "energy_j": tdp_w * (IDLE_POWER_FRACTION + (1 - IDLE_POWER_FRACTION) * mfu) * latency,
        "compute_bound": t_compute > t_memory,
    }


@dataclass(frozen=True, slots=True)
class SolveResult:
    """One model × accelerator × batch × precision, in SI units (see `as_dict` for the CLI)."""

    model: str
    hardware: str
    batch_size: int
    precision: str
    peak_precision: str  # the precision whose peak was used (fp16 on fallback)
    bottleneck: str  # "compute" or "memory"
    flops: float
    bytes: float
    weight_bytes: float
    t_compute_s: float
    t_memory_s: float
    t_overhead_s: float
    latency_s: float
    throughput_per_s: float
    arithmetic_intensity_flop_per_byte: float
    peak_flop_per_s: float
    ridge_flop_per_byte: float
    effective_ridge_flop_per_byte: float
    attainable_flop_per_s: float
    achieved_flop_per_s: float
    mfu: float
    energy_j: float
    memory_capacity_bytes: float
    fits_in_memory: bool
    sample: str
    assumptions: Assumptions
    warnings: tuple[str, ...] = field(default=())

    @property
    def overhead_share(self) -> float:
        """Fraction of latency that is fixed overhead (dispatch + per-layer)."""
        return self.t_overhead_s / self.latency_s

    @property
    def gap_flop_per_s(self) -> float:
        """The fixed-overhead gap: how far the achieved point sits below the roof."""
        return self.attainable_flop_per_s - self.achieved_flop_per_s

    def as_dict(self) -> dict[str, object]:
        """The public JSON shape (CLI `solve`, sweep rows): keys are a contract."""
        return {
            "model": self.model,
            "hardware": self.hardware,
            "batch_size": self.batch_size,
            "precision": self.precision,
            "peak_precision": self.peak_precision,
            "bottleneck": self.bottleneck,
            "latency_ms": self.latency_s * 1e3,
            "t_compute_ms": self.t_compute_s * 1e3,
            "t_memory_ms": self.t_memory_s * 1e3,
            "t_overhead_ms": self.t_overhead_s * 1e3,
            "overhead_share": self.overhead_share,
            "throughput_per_s": self.throughput_per_s,
            "flops": self.flops,
            "bytes": self.bytes,
            "arithmetic_intensity_flop_per_byte": self.arithmetic_intensity_flop_per_byte,
            "ridge_flop_per_byte": self.ridge_flop_per_byte,
            "effective_ridge_flop_per_byte": self.effective_ridge_flop_per_byte,
            "peak_tflops": self.peak_flop_per_s / 1e12,
            "attainable_tflops": self.attainable_flop_per_s / 1e12,
            "achieved_tflops": self.achieved_flop_per_s / 1e12,
            "overhead_gap_tflops": self.gap_flop_per_s / 1e12,
            "mfu": self.mfu,
            "energy_j": self.energy_j,
            "weight_bytes": self.weight_bytes,
            "memory_capacity_bytes": self.memory_capacity_bytes,
            "fits_in_memory": self.fits_in_memory,
            "sample": self.sample,
            "assumptions": self.assumptions.as_dict(),
            "warnings": list(self.warnings),
        }


def fallback_warning(hw: HardwareSpec, precision: str, used: str) -> str | None:
    """The visible warning for a precision the chip lists no peak for (None if no fallback)."""
    if used == precision or (precision == "bf16" and used == "fp16"):
        return None
    return (
        f"{hw.name} lists no {precision} peak; using its {used} peak "
        f"({hw.peak_flop_per_s[used] / 1e12:g} TFLOP/s) instead"
    )


def solve_specs(
    model: ModelSpec,
    hw: HardwareSpec,
    batch_size: int,
    precision: str,
    assumptions: Assumptions = DEFAULTS,
) -> SolveResult:
    """SPEC §1 for resolved specs. Batch is a whole number >= 1 (checked by the caller)."""
    a = assumptions
    peak, used = hw.peak_for(precision)
    dispatch_s = hw.dispatch_overhead_s if a.dispatch_overhead_s is None else a.dispatch_overhead_s
    overhead_s = dispatch_s + model.layers * a.layer_overhead_s
    weight_bytes = model.params * BYTES_PER_PARAM[precision]
    flops = model.flops_for(a.flop_convention) * batch_size
    bytes_moved = weight_bytes * (1 + a.activation_fraction * batch_size)
    r = roofline_terms(
        flops=flops,
        bytes_moved=bytes_moved,
        peak=peak,
        bandwidth=hw.memory_bandwidth_bytes_per_s,
        efficiency=a.efficiency,
        overhead_s=overhead_s,
        tdp_w=hw.tdp_w,
    )
    warning = fallback_warning(hw, precision, used)
    return SolveResult(
        model=model.id,
        hardware=hw.id,
        batch_size=batch_size,
        precision=precision,
        peak_precision=used,
        bottleneck="compute" if r["compute_bound"] else "memory",
        flops=flops,
        bytes=bytes_moved,
        weight_bytes=weight_bytes,
        t_compute_s=float(r["t_compute_s"]),
        t_memory_s=float(r["t_memory_s"]),
        t_overhead_s=overhead_s,
        latency_s=float(r["latency_s"]),
        throughput_per_s=batch_size / float(r["latency_s"]),
        arithmetic_intensity_flop_per_byte=float(r["intensity"]),
        peak_flop_per_s=peak,
        ridge_flop_per_byte=float(r["ridge"]),
        effective_ridge_flop_per_byte=float(r["ridge_eff"]),
        attainable_flop_per_s=float(r["attainable"]),
        achieved_flop_per_s=float(r["achieved"]),
        mfu=float(r["mfu"]),
        energy_j=float(r["energy_j"]),
        memory_capacity_bytes=hw.memory_capacity_bytes,
        fits_in_memory=weight_bytes <= hw.memory_capacity_bytes,
        sample=model.sample,
        assumptions=replace(a, dispatch_overhead_s=dispatch_s),  # echo what was used
        warnings=(warning,) if warning else (),
    )
