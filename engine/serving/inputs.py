"""Checked inputs of the serving model: models with shapes, accelerators, TP/PP, assumptions.

Shared by `serve`, `serve_sweep`, `operators` and the measurement rows, so a bad argument gets
the same one-line message everywhere before any arithmetic (docs/model.md, "Serving model").
A deployment (model, accelerator, TP, PP, precisions, assumptions) is folded into the kernel's
coefficients once and kept in one bounded cache keyed by the specs themselves, so a call by
catalogue id and a page's call with the same spec objects share an entry.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from engine.arrays import INF, SCALAR
from engine.assumptions import ASSUMPTION_NAMES, Assumptions, make_assumptions
from engine.catalog.arch import Architecture
from engine.catalog.load import Catalog
from engine.catalog.profiles import get_profile
from engine.catalog.resolve import resolve_hardware, resolve_model, resolve_pair
from engine.catalog.shapes import shapes_of
from engine.catalog.specs import (
    BYTES_PER_PARAM,
    HardwareSpec,
    check_kv_precision,
    check_precision,
)
from engine.checks import MAX_DEGREE, check_whole
from engine.report.messages import N_
from engine.serving.kernel import Device, Efficiencies, Folded, fold
from engine.serving.operators import Layout, step_lists

ACTIVATION_BYTES_MIN = 2.0  # activations stay 16-bit when weights are narrower (fp8, int4)
KNOWN = frozenset(ASSUMPTION_NAMES)
UNUSED = {  # the tutorial's assumptions the serving model does not read: the note for each
    "activation_fraction": N_(
        "activation_fraction is not used by the serving model: activations are counted per operator"
    ),
    "flop_convention": N_(
        "flop_convention is not used by the serving model: FLOPs come from the shapes at 2 per "
        "multiply-accumulate"
    ),
}


@dataclass(frozen=True, slots=True)
class Setup:
    """The call-wide checked arguments."""

    precision: str
    kv_precision: str
    assumptions: Assumptions
    profile: str
    notes: tuple[str, ...]  # call-wide warnings


def setup(precision, kv_precision, assumptions, profile, overrides: dict) -> Setup:
    """Check the call-wide arguments; `overrides` are assumptions by their user names."""
    precision = check_precision(precision)
    kv = check_kv_precision(kv_precision, precision)
    if not isinstance(profile, str) or not profile.strip() or len(profile) > 100:
        raise ValueError("profile must be a name (1 to 100 characters)")
    if assumptions is None:  # a built-in profile's name stands for its assumptions
        assumptions = get_profile(profile).assumptions
    if not isinstance(assumptions, Assumptions):
        raise ValueError(f"assumptions must be an Assumptions, got {type(assumptions).__name__}")
    plain = all(v is None for v in overrides.values()) and overrides.keys() <= KNOWN
    a = assumptions if plain else make_assumptions(assumptions, **overrides)
    notes = tuple(note for name, note in UNUSED.items() if overrides.get(name) is not None)
    return Setup(precision, kv, a, profile, notes)


def llm_architecture(model, catalog: Catalog | None = None) -> tuple[str, Architecture]:
    """(display name, shapes) of a catalogue id, a ModelSpec or an Architecture."""
    if isinstance(model, Architecture):
        return "custom", model
    spec = resolve_model(model, catalog)
    if spec.arch is None:
        raise ValueError(
            f"{spec.id} has no architecture: the serving model needs a decoder LLM with shapes "
            "(an [models.<id>.arch] table)"
        )
    return spec.id, spec.arch


def check_parallel(name: str, arch: Architecture, tp: int, pp: int) -> None:
    """TP must split the heads (and the KV heads, or be a multiple of them); PP the layers."""
    if arch.heads % tp:
        raise ValueError(f"tp {tp} does not divide {name}'s {arch.heads} attention heads")
    k = arch.kv_heads
    if arch.attention != "mla" and k % tp and tp % k:
        raise ValueError(f"tp {tp} and {name}'s {k} KV heads: one must divide the other")
    if pp > arch.layers:
        raise ValueError(f"pp {pp} exceeds {name}'s {arch.layers} layers")


def check_devices(hw: HardwareSpec, tp: int, pp: int) -> None:
    if tp * pp > 1 and hw.devices_per_node <= 1:
        raise ValueError(
            f"{hw.id} has no device-to-device link in the catalogue (devices_per_node 1): "
            "use tp = pp = 1"
        )


def placement(model, hardware, tp, pp, catalog=None) -> tuple:
    """(name, Architecture, HardwareSpec, tp, pp) for one scenario, every check done."""
    name, arch = llm_architecture(model, catalog)
    hw = resolve_hardware(hardware, catalog)
    tp = check_whole(tp, "tp", high=MAX_DEGREE)
    pp = check_whole(pp, "pp", high=MAX_DEGREE)
    check_parallel(name, arch, tp, pp)
    check_devices(hw, tp, pp)
    return name, arch, hw, tp, pp


def device_values(hw: HardwareSpec, precision: str, a: Assumptions) -> tuple[Device, str]:
    """The accelerator's figures the kernel reads, the assumptions applied, and the precision
    whose peak is used (a slower one's when this one is not listed)."""
    peak, used = hw.peak_for(precision)
    wide = precision if BYTES_PER_PARAM[precision] >= 2 else "fp16"
    link_bw = hw.interconnect_bandwidth_bytes_per_s * a.link_efficiency
    latency = hw.interconnect_latency_s if a.link_latency_s is None else a.link_latency_s
    dispatch = hw.dispatch_overhead_s if a.dispatch_overhead_s is None else a.dispatch_overhead_s
    device = Device(
        peak=peak,
        peak_attn=hw.peak_for(wide)[0],  # attention runs on 16-bit (or wider) activations
        bandwidth=hw.memory_bandwidth_bytes_per_s * a.bandwidth_efficiency,
        capacity=hw.memory_capacity_bytes,
        reserve=a.memory_reserve,
        link_bw=link_bw if link_bw > 0 else INF,  # single device: never used
        link_lat=latency,
        dispatch=dispatch,
        tau=a.layer_overhead_s,
        tau_prefill=(
            a.layer_overhead_s if a.prefill_layer_overhead_s is None else a.prefill_layer_overhead_s
        ),
        seq_overhead=a.sequence_overhead_s,
        devices_per_node=float(hw.devices_per_node),
        fallback=used != precision and not (precision == "bf16" and used == "fp16"),
        memory_bandwidth=hw.memory_bandwidth_bytes_per_s,
    )
    return device, used


def layout(tp, pp, precision: str, kv_precision: str) -> Layout:
    """TP, PP and the bytes per weight, KV-cache and activation element."""
    bw = BYTES_PER_PARAM[precision]
    return Layout(float(tp), float(pp), bw, BYTES_PER_PARAM[kv_precision],
                  max(bw, ACTIVATION_BYTES_MIN))  # fmt: skip


def efficiencies(a: Assumptions, peak_precision: str = "fp16") -> Efficiencies:
    """Compute efficiency per operator class and the GQA KV reuse. GEMMs (and experts, unless
    set apart) run at `fp8_efficiency` when their peak is an 8-bit one, else `efficiency`;
    attention runs on 16-bit activations at `attention_efficiency` (default `efficiency`)."""
    eff = a.efficiency
    eight_bit = BYTES_PER_PARAM[peak_precision] == 1.0 and a.fp8_efficiency is not None
    gemm = a.fp8_efficiency if eight_bit else eff
    return Efficiencies(
        gemm=gemm,
        attention=eff if a.attention_efficiency is None else a.attention_efficiency,
        expert=gemm if a.expert_efficiency is None else a.expert_efficiency,
        other=eff,
        kv_reuse=a.kv_reuse,
    )


@dataclass(frozen=True, slots=True)
class Scenario:
    """Everything about a scalar scenario but its batch and tokens: checked and folded."""

    name: str
    hw_id: str
    tp: int
    pp: int
    setup: Setup
    peak_precision: str  # the precision whose peak is used (a fallback when not listed)
    folded: Folded  # the kernel's coefficients for this deployment
    echo: dict[str, object]  # every assumption by its user name and unit


SCENARIO_CACHE = 1024  # folded deployments kept (about 6 KiB each)


def scenario(model, hardware, tp, pp, precision, kv_precision, profile, assumptions, catalog,
             overrides: dict) -> Scenario:  # fmt: skip
    """The checked, folded Scenario. Ids resolve to specs first, and the cache is keyed by the
    specs, so a call by id and a call with the spec objects share one entry."""
    tp, pp = check_whole(tp, "tp", high=MAX_DEGREE), check_whole(pp, "pp", high=MAX_DEGREE)
    if isinstance(model, Architecture):
        spec, hw = model, resolve_hardware(hardware, catalog)
    else:  # ids resolve through one memo (catalog/resolve.py)
        spec, hw = resolve_pair(model, hardware, catalog)
    extra = tuple((k, type(v), v) for k, v in overrides.items() if v is not None)
    try:
        return _folded(spec, hw, tp, pp, precision, kv_precision, profile, assumptions, extra)
    except TypeError as exc:  # an unhashable argument (a list for a precision, say)
        if "unhashable" not in str(exc):
            raise
        return _scenario(spec, hw, tp, pp, precision, kv_precision, profile, assumptions, extra)


@functools.lru_cache(maxsize=SCENARIO_CACHE)
def _folded(spec, hw, tp, pp, precision, kv_precision, profile, assumptions, extra) -> Scenario:
    return _scenario(spec, hw, tp, pp, precision, kv_precision, profile, assumptions, extra)


def forget_scenarios() -> None:
    """Empty the cache of folded deployments (benchmarks time the first call this way)."""
    _folded.cache_clear()


def _scenario(spec, hw, tp, pp, precision, kv_precision, profile, assumptions, extra):
    overrides = {k: v for k, _, v in extra}
    st = setup(precision, kv_precision, assumptions, profile, overrides)
    name, arch, hw, tp, pp = placement(spec, hw, tp, pp)
    dev, used = device_values(hw, st.precision, st.assumptions)
    lay = layout(tp, pp, st.precision, st.kv_precision)
    steps = _templates(arch, tp, st.precision, st.kv_precision)
    eta = efficiencies(st.assumptions, used)
    folded = fold(shapes_of(arch), dev, lay, eta, SCALAR, steps)
    return Scenario(name, hw.id, tp, pp, st, used, folded, st.assumptions.as_dict())


@functools.lru_cache(maxsize=512)
def _templates(arch: Architecture, tp: int, precision: str, kv_precision: str) -> tuple:
    """operators.step_lists of one model, TP degree and precision: shared by every accelerator
    and assumption set (pure and immutable: cached across calls)."""
    return step_lists(shapes_of(arch), layout(tp, 1, precision, kv_precision), SCALAR)
