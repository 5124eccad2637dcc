"""The first-order roofline solve (docs/model.md, "The single-model solve").

Williams, Waterman & Patterson, "Roofline", CACM 2009. One kernel, `roofline_terms`, does the
arithmetic on floats or numpy arrays alike, and one workload function, `solve_terms`, turns a model,
an accelerator and a batch into its inputs, so the scalar `solve` and the vectorised `sweep` share
every formula. One table, `engine.report.columns.SOLVE_COLUMNS`, maps the SI results to the display
keys (JSON, DataFrame columns) and the CSV headers. Results explain themselves: bottleneck, regime,
overhead share, the gap between the roof and the achieved point, warnings.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

import numpy as np

from engine.assumptions import DEFAULTS, Assumptions, make_assumptions
from engine.catalog.reader import Catalog
from engine.catalog.resolve import resolve_pair
from engine.catalog.specs import BYTES_PER_PARAM, HardwareSpec, ModelSpec, check_precision
from engine.checks import MAX_BATCH, check_whole
from engine.report.columns import SOLVE_COLUMNS, assumption_values, display
from engine.report.messages import Message, MessageKind

IDLE_POWER_FRACTION = 0.3  # energy = TDP · (0.3 + 0.7·MFU) · latency (docs/model.md, "Energy")
ENERGY_FORMULA = (
    f"TDP × ({IDLE_POWER_FRACTION:g} + {1 - IDLE_POWER_FRACTION:g}·MFU) × latency"  # on screen
)
OVERHEAD_REGIME_SHARE = 0.5  # regime "overhead" when fixed overhead is >= this share of latency
REGIMES = ("memory", "compute", "overhead")  # the values of `regime` (docs/model.md, "Regime")


def roofline_terms(*, flops, bytes_moved, peak, bandwidth, efficiency, overhead_s, tdp_w) -> dict:
    """The roofline from `flops` and `bytes_moved` onwards; every argument a float or an array.

    Returns:
        SI terms named as `SolveResult`'s fields (t_compute_s, latency_s, mfu, energy_j, ...),
        plus `compute_bound` (t_compute > t_memory) and `overhead_bound` (overhead share >=
        OVERHEAD_REGIME_SHARE), booleans or boolean arrays.
    """
    maximum, minimum = _ops(flops, bytes_moved, peak, bandwidth, overhead_s)
    t_compute = flops / (peak * efficiency)
    t_memory = bytes_moved / bandwidth
    latency = maximum(t_compute, t_memory) + overhead_s
    intensity = flops / bytes_moved
    achieved = flops / latency
    attainable = minimum(peak * efficiency, bandwidth * intensity)
    mfu = minimum(achieved / peak, 1.0)  # achieved <= peak·η <= peak; the cap absorbs rounding
    share = overhead_s / latency
    return {
        "t_compute_s": t_compute,
        "t_memory_s": t_memory,
        "t_overhead_s": overhead_s,
        "latency_s": latency,
        "overhead_share": share,
        "arithmetic_intensity_flop_per_byte": intensity,
        "peak_flop_per_s": peak,
        "memory_bandwidth_bytes_per_s": bandwidth,
        "ridge_flop_per_byte": peak / bandwidth,
        "effective_ridge_flop_per_byte": peak * efficiency / bandwidth,
        "effective_peak_flop_per_s": peak * efficiency,
        "attainable_flop_per_s": attainable,
        "achieved_flop_per_s": achieved,
        "overhead_gap_flop_per_s": attainable - achieved,
        "mfu": mfu,
        "energy_j": tdp_w * (IDLE_POWER_FRACTION + (1 - IDLE_POWER_FRACTION) * mfu) * latency,
        "compute_bound": t_compute > t_memory,
        "overhead_bound": share >= OVERHEAD_REGIME_SHARE,
    }


def _ops(*values) -> tuple:
    """Python's max/min when every input is a plain float (the scalar solve: ~10× faster than
    numpy's ufuncs on scalars), numpy's otherwise."""
    flops, bytes_moved, peak, bandwidth, overhead_s = values
    if (
        type(flops) is float
        and type(bytes_moved) is float
        and type(peak) is float
        and type(bandwidth) is float
        and type(overhead_s) is float
    ):
        return max, min
    return np.maximum, np.minimum


def regime_codes(compute_bound, overhead_bound) -> np.ndarray:
    """Integer codes into REGIMES (0 memory, 1 compute, 2 overhead) for arrays of flags."""
    return np.where(overhead_bound, 2, np.asarray(compute_bound, dtype=np.int8)).astype(np.int8)


def regime_of(compute_bound: bool, overhead_bound: bool) -> str:
    """ "overhead" when fixed overhead is at least half of latency, else the bottleneck."""
    return "overhead" if overhead_bound else ("compute" if compute_bound else "memory")


def dispatch_s(hw: HardwareSpec, a: Assumptions) -> float:
    """The dispatch overhead used: the assumption if set, else the accelerator's figure."""
    return hw.dispatch_overhead_s if a.dispatch_overhead_s is None else a.dispatch_overhead_s


def solve_terms(*, model: dict, hw: dict, batch, a: Assumptions) -> dict:
    """The single-model workload and its roofline, on floats or broadcastable arrays.

    Args:
        model: params, flops_per_sample (under a's convention), layers, bytes_per_param.
        hw: peak, bandwidth, capacity, dispatch_s, tdp_w.
        batch: samples per forward pass.
        a: the assumptions (efficiency, layer overhead, activation fraction).

    Returns:
        `roofline_terms` plus flops, bytes, weight_bytes, memory_capacity_bytes,
        fits_in_memory (weights <= capacity) and throughput_per_s.
    """
    weight_bytes = model["params"] * model["bytes_per_param"]
    flops = model["flops_per_sample"] * batch
    bytes_moved = weight_bytes * (1 + a.activation_fraction * batch)
    overhead_s = hw["dispatch_s"] + model["layers"] * a.layer_overhead_s
    r = roofline_terms(
        flops=flops,
        bytes_moved=bytes_moved,
        peak=hw["peak"],
        bandwidth=hw["bandwidth"],
        efficiency=a.efficiency,
        overhead_s=overhead_s,
        tdp_w=hw["tdp_w"],
    )
    r["flops"], r["bytes"], r["weight_bytes"] = flops, bytes_moved, weight_bytes
    r["memory_capacity_bytes"] = hw["capacity"]
    r["fits_in_memory"] = weight_bytes <= hw["capacity"]
    r["throughput_per_s"] = batch / r["latency_s"]
    return r


@dataclass(frozen=True)  # no __slots__: `_result` fills the instance dict in one step
class SolveResult:
    """One model × accelerator × batch × precision, in SI units (see `as_dict` for the CLI)."""

    model: str
    hardware: str
    batch_size: int
    precision: str
    peak_precision: str  # the precision whose peak was used (fp16 on fallback)
    bottleneck: str  # "compute" or "memory": the larger of the two roofline terms
    regime: str  # "overhead" when fixed overhead is >= half of latency, else the bottleneck
    flops: float
    bytes: float
    weight_bytes: float
    t_compute_s: float
    t_memory_s: float
    t_overhead_s: float
    latency_s: float
    overhead_share: float  # fraction of latency that is fixed overhead (dispatch + per-layer)
    throughput_per_s: float
    arithmetic_intensity_flop_per_byte: float
    peak_flop_per_s: float
    memory_bandwidth_bytes_per_s: float
    ridge_flop_per_byte: float
    effective_ridge_flop_per_byte: float
    effective_peak_flop_per_s: float  # peak × η: the compute roof the bottleneck is judged by
    attainable_flop_per_s: float
    achieved_flop_per_s: float
    overhead_gap_flop_per_s: float  # how far the achieved point sits below the roof
    mfu: float
    energy_j: float
    memory_capacity_bytes: float
    fits_in_memory: bool  # weights <= capacity (the tutorial's test; no runtime reserve)
    sample: str
    assumptions: Assumptions  # dispatch_overhead_s is the figure used
    warnings: tuple[Message, ...] = field(default=())

    def as_dict(self) -> dict[str, object]:
        """The public JSON shape (CLI `solve`, sweep rows): keys are a contract."""
        ids = {
            "model": self.model,
            "hardware": self.hardware,
            "batch_size": self.batch_size,
            "precision": self.precision,
            "peak_precision": self.peak_precision,
            "bottleneck": self.bottleneck,
            "regime": self.regime,
        }
        si = {name: getattr(self, name) for name in SOLVE_COLUMNS}
        return (
            ids
            | display(si)
            | {
                "fits_in_memory": self.fits_in_memory,
                "sample": self.sample,
                "assumptions": assumption_values(self.assumptions),
                "warnings": [str(w) for w in self.warnings],
            }
        )


FALLBACK = MessageKind(
    "precision_fallback",
    "{hardware} lists no {precision} peak: its {used} peak ({tflops} TFLOP/s) is used instead",
)


def fallback_warning(hw: HardwareSpec, precision: str, used: str) -> Message | None:
    """The visible warning for a precision the chip lists no peak for (None if no fallback)."""
    if used == precision or (precision == "bf16" and used == "fp16"):
        return None
    tflops = f"{hw.peak_flop_per_s[used] / 1e12:g}"
    return FALLBACK(hardware=hw.name, precision=precision, used=used, tflops=tflops)


def _echo(a: Assumptions, dispatch: float) -> Assumptions:
    """`a` with the dispatch figure used (the result echoes what was assumed)."""
    return a if a.dispatch_overhead_s == dispatch else _with_dispatch(a, dispatch)


@functools.lru_cache(maxsize=1024)
def _with_dispatch(a: Assumptions, dispatch: float) -> Assumptions:
    return replace(a, dispatch_overhead_s=dispatch)


def solve_specs(
    model: ModelSpec,
    hw: HardwareSpec,
    batch_size: int,
    precision: str,
    assumptions: Assumptions = DEFAULTS,
) -> SolveResult:
    """The single-model solve for resolved specs; batch is a whole number >= 1 (caller-checked)."""
    a = assumptions
    peak, used = hw.peak_for(precision)
    d = dispatch_s(hw, a)
    model_in = {
        "params": float(model.params),
        "flops_per_sample": float(model.flops_for(a.flop_convention)),
        "layers": model.layers,
        "bytes_per_param": BYTES_PER_PARAM[precision],
    }
    hw_in = {
        "peak": float(peak),
        "bandwidth": float(hw.memory_bandwidth_bytes_per_s),
        "capacity": float(hw.memory_capacity_bytes),
        "dispatch_s": float(d),
        "tdp_w": float(hw.tdp_w),
    }
    r = solve_terms(model=model_in, hw=hw_in, batch=batch_size, a=a)  # plain floats and bools
    compute, overhead = r.pop("compute_bound"), r.pop("overhead_bound")
    warning = fallback_warning(hw, precision, used)
    r |= {
        "model": model.id,
        "hardware": hw.id,
        "batch_size": batch_size,
        "precision": precision,
        "peak_precision": used,
        "bottleneck": "compute" if compute else "memory",
        "regime": regime_of(compute, overhead),
        "sample": model.sample,
        "assumptions": _echo(a, d),
        "warnings": (warning,) if warning else (),
    }
    return _result(r)


def _result(values: dict) -> SolveResult:
    """A SolveResult whose fields are `values` (exactly its field names, checked by the tests),
    without the generated __init__'s object.__setattr__ per field: half the solve's time for
    31 fields. The result is as frozen as any other (assignment raises FrozenInstanceError)."""
    result = object.__new__(SolveResult)
    object.__setattr__(result, "__dict__", values)
    return result


def solve(
    model: str | ModelSpec,
    hardware: str | HardwareSpec,
    batch_size: int = 1,
    precision: str = "fp16",
    *,
    catalog: Catalog | None = None,
    assumptions: Assumptions | None = None,
    **overrides: object,
) -> SolveResult:
    """The first-order roofline solve (docs/model.md) of one model on one accelerator.

    Args:
        model: a catalogue id ("ResNet-50", "resnet50") or a ModelSpec.
        hardware: a catalogue id ("A100") or a HardwareSpec.
        batch_size: samples per forward pass, a whole number (int, numpy integer or whole
            float) from 1 to MAX_BATCH.
        precision: fp32, tf32, fp16, bf16, fp8, int8 or int4.
        catalog: where ids are looked up; the default catalogue (with ROOFLINE_CATALOG) if None.
        assumptions: a starting Assumptions; the defaults of docs/model.md if None.
        **overrides: efficiency, layer_overhead_us, dispatch_overhead_ms, activation_fraction,
            flop_convention ("catalog" or "mac2").

    Returns:
        A SolveResult; `.as_dict()` is the CLI's JSON object.
    """
    spec_m, spec_h = resolve_pair(model, hardware, catalog)
    return solve_specs(
        model=spec_m,
        hw=spec_h,
        batch_size=check_whole(batch_size, "batch_size", high=MAX_BATCH),
        precision=check_precision(precision),
        assumptions=make_assumptions(assumptions, **overrides),
    )
