"""Checked inputs of the serving model: models with shapes, accelerators, TP/PP, assumptions.

Shared by `serve`, `serve_sweep` and `operators`, so a bad argument gets the same one-line
message everywhere before any arithmetic (docs/model.md, "Serving model").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from engine.catalog.arch import Architecture
from engine.catalog.load import Catalog
from engine.catalog.profiles import get_profile
from engine.catalog.specs import BYTES_PER_PARAM, PRECISIONS, Assumptions, HardwareSpec, ModelSpec
from engine.catalog.specs import check_precision as _check_precision
from engine.roofline import api
from engine.serving import operators as ops
from engine.serving.kernel import Folded, fold

MAX_DEGREE = 1024  # TP or PP larger than this is refused
MAX_TOKENS = 10_000_000  # input or output tokens per sequence
MAX_BATCH = api.MAX_BATCH
ACTIVATION_BYTES_MIN = 2.0  # activations stay 16-bit when weights are narrower (fp8, int4)
KNOWN = frozenset(api.ASSUMPTION_NAMES)
UNUSED = {  # the tutorial's assumptions the serving model does not read
    "activation_fraction": "activations are counted per operator",
    "flop_convention": "FLOPs come from the shapes at 2 per multiply-accumulate",
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
    precision = _check_precision(precision)
    kv = precision if kv_precision is None else str(kv_precision).strip().lower()
    if kv not in BYTES_PER_PARAM:
        raise ValueError(f"unknown KV precision {kv_precision!r} (known: {', '.join(PRECISIONS)})")
    if not isinstance(profile, str) or not profile.strip() or len(profile) > 100:
        raise ValueError("profile must be a name (1 to 100 characters)")
    if assumptions is None:  # a built-in profile's name stands for its assumptions
        assumptions = get_profile(profile).assumptions
    if not isinstance(assumptions, Assumptions):
        raise ValueError(f"assumptions must be an Assumptions, got {type(assumptions).__name__}")
    plain = all(v is None for v in overrides.values()) and overrides.keys() <= KNOWN
    a = assumptions if plain else api.make_assumptions(assumptions, **overrides)
    notes = tuple(
        f"{name} is not used by the serving model: {why}"
        for name, why in UNUSED.items()
        if overrides.get(name) is not None
    )
    return Setup(precision, kv, a, profile, notes)


@functools.lru_cache(maxsize=64)
def echo(a: Assumptions) -> dict[str, object]:
    """Every assumption by its user name and unit (None: the catalogue's figure); callers copy
    it (cached: Assumptions is frozen)."""
    out = {}
    for name, (field, scale) in api.ASSUMPTION_UNITS.items():
        value = getattr(a, field)
        out[name] = value if value is None or isinstance(value, str) else value * round(1 / scale)
    return out


def check_whole(value: object, name: str, top: int) -> int:
    """A whole number from 1 to `top`, or ValueError naming `name`."""
    if type(value) is int and 1 <= value <= top:  # the common case, quickly
        return value
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if ok and isinstance(value, float):
        ok = value == value and abs(value) < 1e18 and value == int(value)
    if not ok or not 1 <= int(value) <= top:
        raise ValueError(f"{name} must be a whole number from 1 to {top:,}, got {value!r}")
    return int(value)


def resolve_llm(model, catalog: Catalog | None = None) -> tuple[str, Architecture]:
    """(display name, shapes) of a catalogue id, a ModelSpec or an Architecture."""
    if isinstance(model, Architecture):
        return "custom", model
    spec = model if isinstance(model, ModelSpec) else api.resolve_model(model, catalog)
    arch = getattr(spec, "arch", None)
    if arch is None:
        raise ValueError(
            f"{spec.id} has no architecture: the serving model needs a decoder LLM with shapes "
            "(an [models.<id>.arch] table)"
        )
    return spec.id, arch


@functools.lru_cache(maxsize=512)
def shapes(arch: Architecture) -> dict[str, float]:
    """ops.shape_values plus the trained context length (cached: Architecture is frozen)."""
    return {k: float(v) for k, v in ops.shape_values(arch).items()} | {
        "context_length": float(arch.context_length)
    }


def check_parallel(name: str, arch: Architecture, tp: int, pp: int) -> None:
    """TP must split the heads (and the KV heads, or be a multiple of them); PP the layers."""
    if arch.heads % tp:
        raise ValueError(f"tp {tp} does not divide {name}'s {arch.heads} attention heads")
    k = arch.kv_heads
    if arch.attention != "mla" and k % tp and tp % k:
        raise ValueError(f"tp {tp} and {name}'s {k} KV heads: one must divide the other")
    if pp > arch.layers:
        raise ValueError(f"pp {pp} exceeds {name}'s {arch.layers} layers")


def placement(model, hardware, tp, pp, catalog=None) -> tuple:
    """(name, shapes, HardwareSpec, tp, pp) for one scenario, every check done."""
    name, arch = resolve_llm(model, catalog)
    hw = api.resolve_hardware(hardware, catalog)
    tp, pp = check_whole(tp, "tp", MAX_DEGREE), check_whole(pp, "pp", MAX_DEGREE)
    check_parallel(name, arch, tp, pp)
    check_devices(hw, tp, pp)
    return name, arch, hw, tp, pp


def check_devices(hw: HardwareSpec, tp: int, pp: int) -> None:
    if tp * pp > 1 and hw.devices_per_node <= 1:
        raise ValueError(
            f"{hw.id} has no device-to-device link in the catalogue (devices_per_node 1): "
            "use tp = pp = 1"
        )


def hardware_values(hw: HardwareSpec, precision: str, a: Assumptions) -> dict:
    """The accelerator's figures the kernel reads, with the assumptions applied."""
    peak, used = hw.peak_for(precision)
    wide = precision if BYTES_PER_PARAM[precision] >= 2 else "fp16"
    link_bw = hw.interconnect_bandwidth_bytes_per_s * a.link_efficiency
    latency = hw.interconnect_latency_s if a.link_latency_s is None else a.link_latency_s
    dispatch = hw.dispatch_overhead_s if a.dispatch_overhead_s is None else a.dispatch_overhead_s
    return {
        "peak": peak,
        "peak_attn": hw.peak_for(wide)[0],  # attention runs on 16-bit (or wider) activations
        "bandwidth": hw.memory_bandwidth_bytes_per_s * a.bandwidth_efficiency,
        "capacity": hw.memory_capacity_bytes,
        "reserve": a.memory_reserve,
        "link_bw": link_bw if link_bw > 0 else float("inf"),  # single device: never used
        "link_lat": latency,
        "dispatch": dispatch,
        "tau": a.layer_overhead_s,
        "devices_per_node": float(hw.devices_per_node),
        "fallback": float(used != precision and not (precision == "bf16" and used == "fp16")),
        "peak_precision": used,
    }


def element_bytes(precision: str, kv_precision: str) -> dict[str, float]:
    """Bytes per weight, KV-cache and activation element."""
    bw = BYTES_PER_PARAM[precision]
    return {"bw": bw, "b_kv": BYTES_PER_PARAM[kv_precision], "ba": max(bw, ACTIVATION_BYTES_MIN)}


def eta_by_class(a: Assumptions) -> dict[str, float]:
    """Compute efficiency per operator class (attention and experts default to `efficiency`)."""
    eff = a.efficiency
    return {
        "gemm": eff,
        "other": eff,
        "attention": eff if a.attention_efficiency is None else a.attention_efficiency,
        "expert": eff if a.expert_efficiency is None else a.expert_efficiency,
    }


@dataclass(frozen=True, slots=True)
class Scenario:
    """Everything about a scalar scenario but its batch and tokens: checked and precomputed."""

    name: str
    hw_id: str
    tp: int
    pp: int
    setup: Setup
    peak_precision: str  # the precision whose peak is used (a fallback when not listed)
    folded: Folded  # the kernel's coefficients for this deployment
    echo: dict[str, object]
    catalog: Catalog  # the catalogue the ids were found in


_SCENARIOS: dict[tuple, Scenario] = {}
SCENARIO_CACHE = 1024  # entries kept (about 6 KiB each); the cache starts afresh when full


def scenario(model, hardware, tp, pp, precision, kv_precision, profile, assumptions, catalog,
             overrides: dict) -> Scenario:  # fmt: skip
    """The checked, precomputed Scenario, cached by its arguments when they are all hashable
    (ids, Architectures, Assumptions): a page varying batch and tokens checks them once."""
    tp, pp = check_whole(tp, "tp", MAX_DEGREE), check_whole(pp, "pp", MAX_DEGREE)
    cat = catalog or api.default_catalog()
    key = (model, hardware, tp, pp, precision, kv_precision, profile, assumptions, id(cat),
           tuple((k, type(v), v) for k, v in overrides.items()) if overrides else ())  # fmt: skip
    try:
        hit = _SCENARIOS.get(key)
    except TypeError:  # a spec or a value that cannot be hashed: no caching
        key = hit = None
    if hit is not None and hit.catalog is cat:
        return hit
    made = _scenario(model, hardware, tp, pp, precision, kv_precision, profile, assumptions,
                     cat, overrides)  # fmt: skip
    if key is not None:
        if len(_SCENARIOS) >= SCENARIO_CACHE:
            _SCENARIOS.clear()
        _SCENARIOS[key] = made
    return made


def forget_scenarios() -> None:
    """Empty the cache of folded deployments (benchmarks time the first call this way)."""
    _SCENARIOS.clear()


def _scenario(model, hardware, tp, pp, precision, kv_precision, profile, assumptions, cat,
              overrides) -> Scenario:  # fmt: skip
    st = setup(precision, kv_precision, assumptions, profile, overrides)
    name, arch, hw, tp, pp = placement(model, hardware, tp, pp, cat)
    s = shapes(arch)
    sc = {"tp": float(tp), "pp": float(pp)} | element_bytes(st.precision, st.kv_precision)
    hwv = hardware_values(hw, st.precision, st.assumptions)
    steps = _templates(arch, tp, st.precision, st.kv_precision)
    folded = fold(s, hwv, sc, eta_by_class(st.assumptions), ops.SCALAR, steps)
    used = hwv["peak_precision"]
    return Scenario(name, hw.id, tp, pp, st, used, folded, echo(st.assumptions), cat)


@functools.lru_cache(maxsize=512)
def _templates(arch: Architecture, tp: int, precision: str, kv_precision: str) -> tuple:
    """ops.step_lists of one model, TP degree and precision: shared by every accelerator and
    assumption set (pure and immutable: cached across calls)."""
    sc = {"tp": float(tp)} | element_bytes(precision, kv_precision)
    return ops.step_lists(shapes(arch), sc, ops.SCALAR)
