"""Checked inputs of the serving model: models with shapes, accelerators, TP/PP, assumptions.

Shared by `serve`, `serve_sweep`, `operators` and the measurement rows, so a bad argument gets
the same one-line message everywhere before any arithmetic (docs/model.md, "Serving model").
A deployment (model, accelerator, TP, PP, number formats, assumptions) is folded into the
kernel's coefficients once and kept in one bounded cache keyed by the specs themselves, so a call
by catalogue id and a page's call with the same spec objects share an entry. A number format
(engine/catalog/formats.py) sets the bytes of a weight, an activation and a KV element, the peak
the GEMMs run at and, for weights dequantised inside the GEMM, its cost (docs/model.md, "Number
formats").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from engine.arrays import INF, SCALAR
from engine.assumptions import ASSUMPTION_NAMES, DEFAULTS, Assumptions, make_assumptions
from engine.catalog.arch import Architecture
from engine.catalog.formats import (
    check_kv_format,
    check_kv_on,
    kv_format,
    number_format,
    renamed,
    run_on,
)
from engine.catalog.kernels import gemm_transfer
from engine.catalog.profiles import Profile, get_profile
from engine.catalog.reader import Catalog
from engine.catalog.resolve import resolve_hardware, resolve_model, resolve_pair
from engine.catalog.scheduler import SchedulerDefaults
from engine.catalog.shapes import shapes_of
from engine.catalog.specs import BYTES_PER_PARAM, FP4_PEAKS, HardwareSpec
from engine.checks import MAX_DEGREE, check_whole
from engine.report.messages import Message, MessageKind
from engine.scenarios.deployment import Deployment
from engine.serving import memory
from engine.serving.kernel import Device, Efficiencies, Folded, Warn, fold
from engine.serving.operators import Layout, step_lists

ACTIVATION_BYTES_MIN = 2.0  # activations stay 16-bit between operators (fp8, nvfp4, w4a16)
KNOWN = frozenset(ASSUMPTION_NAMES)
UNUSED = {  # the tutorial's assumptions the serving model does not read: the note for each
    "activation_fraction": MessageKind(
        "serving_ignores_activation_fraction",
        "activation_fraction is not used by the serving model: activations are counted per "
        "operator",
    ),
    "flop_convention": MessageKind(
        "serving_ignores_flop_convention",
        "flop_convention is not used by the serving model: FLOPs come from the shapes at 2 per "
        "multiply-accumulate",
    ),
    "kv_reuse": MessageKind(
        "serving_ignores_kv_reuse",
        "kv_reuse is no longer used: decode attention reads each KV head once; what kernels "
        "lose on those reads is kv_bandwidth_efficiency",
    ),
}


@dataclass(frozen=True, slots=True)
class Setup:
    """The call-wide checked arguments."""

    precision: str  # the weight format (engine/catalog/formats.py), its name resolved
    kv_precision: str  # the KV-cache format, resolved (None given: the weight format's default)
    assumptions: Assumptions
    profile: str
    notes: tuple[Message, ...]  # call-wide warnings
    renamed: bool = False  # a name read as a format (int4 -> w4a16, fp4 -> nvfp4)


def setup(precision, kv_precision, assumptions, profile, overrides: dict) -> Setup:
    """Check the call-wide arguments; `overrides` are assumptions by their user names."""
    kv = check_kv_format(kv_precision, precision)
    was_renamed = renamed(precision) or (kv_precision is not None and kv != kv_format(kv).name)
    precision, kv = number_format(precision).name, kv_format(kv).name
    if not isinstance(profile, str) or not profile.strip() or len(profile) > 100:
        raise ValueError("profile must be a name (1 to 100 characters)")
    if assumptions is None:  # a built-in profile's name stands for its assumptions
        assumptions = get_profile(profile).assumptions
    if not isinstance(assumptions, Assumptions):
        raise ValueError(f"assumptions must be an Assumptions, got {type(assumptions).__name__}")
    plain = all(v is None for v in overrides.values()) and overrides.keys() <= KNOWN
    a = assumptions if plain else make_assumptions(assumptions, **overrides)
    given = {name for name, value in overrides.items() if value is not None}
    given |= {"kv_reuse"} if a.kv_reuse != 1.0 else set()  # set by a profile or a script
    notes = tuple(note() for name, note in UNUSED.items() if name in given)
    return Setup(
        precision=precision,
        kv_precision=kv,
        assumptions=a,
        profile=profile,
        notes=notes,
        renamed=was_renamed,
    )


def setup_values(
    hw: HardwareSpec, st: Setup, sched: SchedulerDefaults | None = None
) -> tuple[Device, str]:
    """`format_values` of a call's formats on `hw`, the renaming said; `sched`: the stack whose
    rule sizes the KV pool (engine/serving/memory.py; None: the capacity rule)."""
    dev, used = format_values(
        hw=hw, precision=st.precision, a=st.assumptions, kv_precision=st.kv_precision, sched=sched
    )
    said = Warn.RENAMED_FORMAT * st.renamed
    return dev._replace(format_warnings=dev.format_warnings | int(said)), used


def setup_for(d, precision: str) -> Setup:
    """The call-wide arguments of a Deployment (or a grid of them) at `precision`: a Profile
    object's assumptions stand in for None."""
    assumptions = d.assumptions
    if assumptions is None and isinstance(d.profile, Profile):
        assumptions = d.profile.assumptions
    return setup(
        precision=precision,
        kv_precision=d.kv_precision,
        assumptions=assumptions,
        profile=d.profile_name,
        overrides=d.overrides_dict,
    )


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


def check_parallel(
    name: str, arch: Architecture, tp: int, pp: int, ep: int = 1, attention_dp: bool = False
) -> None:
    """TP must split the heads (and the KV heads, or be a multiple of them) unless attention
    runs data-parallel; PP the layers; EP the routed experts (Deployment has checked that it
    divides tp)."""
    if not attention_dp:
        if arch.heads % tp:
            raise ValueError(f"tp {tp} does not divide {name}'s {arch.heads} attention heads")
        k = arch.kv_heads
        if arch.attention != "mla" and k % tp and tp % k:
            raise ValueError(f"tp {tp} and {name}'s {k} KV heads: one must divide the other")
    if pp > arch.layers:
        raise ValueError(f"pp {pp} exceeds {name}'s {arch.layers} layers")
    if ep > 1 and not arch.experts:
        raise ValueError(f"ep {ep}: {name} has no routed experts to spread (use ep 1)")
    if ep > 1 and arch.experts % ep:
        raise ValueError(f"ep {ep} does not divide {name}'s {arch.experts} routed experts")


def check_devices(hw: HardwareSpec, tp: int, pp: int) -> None:
    if tp * pp > 1 and hw.devices_per_node <= 1:
        raise ValueError(
            f"{hw.id} has no device-to-device link in the catalogue (devices_per_node 1): "
            "use tp = pp = 1"
        )


def placement(model, hardware, tp, pp, catalog=None, split: Split | None = None) -> tuple:
    """(name, Architecture, HardwareSpec, tp, pp) for one scenario, every check done;
    `split`: its expert parallelism and attention DP (none: neither)."""
    name, arch = llm_architecture(model, catalog)
    hw = resolve_hardware(hardware, catalog)
    tp = check_whole(tp, "tp", high=MAX_DEGREE)
    pp = check_whole(pp, "pp", high=MAX_DEGREE)
    split = split or Split()
    check_parallel(name=name, arch=arch, tp=tp, pp=pp, ep=split.ep, attention_dp=split.attention_dp)
    check_devices(hw, tp, pp)
    return name, arch, hw, tp, pp


def device_values(
    hw: HardwareSpec, precision: str, a: Assumptions, sched: SchedulerDefaults | None = None
) -> tuple[Device, str]:
    """The accelerator's figures the kernel reads at one of the tutorial's precisions, the
    assumptions applied, and the precision whose peak is used (a slower one's when this one is
    not listed): the training model's GEMMs (the serving model's formats: `format_values`);
    `sched`: the stack whose rule sizes the KV pool (engine/serving/memory.py; None: the
    capacity rule)."""
    peak, used = hw.peak_for(precision)
    wide = precision if BYTES_PER_PARAM[precision] >= 2 else "fp16"
    slower = used != precision and not (precision == "bf16" and used == "fp16")
    device = _device(hw=hw, a=a, peaks=(peak, hw.peak_for(wide)[0]), fallback=slower, sched=sched)
    return device, used


def format_values(
    hw: HardwareSpec,
    precision: str,
    a: Assumptions,
    kv_precision: str | None = None,
    sched: SchedulerDefaults | None = None,
) -> tuple[Device, str]:
    """A weight format on `hw` as the kernel reads it, and the peak used (docs/model.md,
    "Number formats"): its native peak, or the tutorial's fallback (bf16, tf32), or its
    emulated path (weights dequantised to 16 bits at the fp16 peak). A dequantising GEMM takes
    1 + dequant_overhead times its tensor-core time. ValueError for a KV-cache format the
    accelerator cannot hold (nvfp4 KV without FP4 tensor cores). `sched`: as `device_values`."""
    if kv_precision is not None:
        check_kv_on(hw, kv_format(kv_precision).name)
    run = run_on(hw, precision)
    fmt = run.format
    wide = fmt.name if fmt.weight_bits >= 16 else "fp16"  # attention's 16-bit (or wider) peak
    bits = Warn.EMULATED * run.emulated + Warn.RENAMED_FORMAT * renamed(precision)
    device = _device(
        hw=hw,
        a=a,
        peaks=(run.peak_flop_per_s, hw.peak_for(wide)[0]),
        fallback=run.fallback,
        sched=sched,
    )
    slowdown = 1.0 + a.dequant_overhead if run.dequantised else 1.0
    moved = gemm_transfer(
        a.kernel_curves, reference=a.kernel_reference, accelerator=hw.id, fmt=fmt.name
    )
    return device._replace(
        gemm_slowdown=slowdown,
        format_warnings=int(bits),
        kernel_compute=moved.compute,
        kernel_bandwidth=moved.bandwidth,
    ), run.peak_key


def _device(
    hw: HardwareSpec, a: Assumptions, peaks: tuple[float, float], fallback, sched
) -> Device:
    """The Device of `hw` under `a`: (GEMM peak, attention peak) as given, the KV pool sized by
    `sched`'s rule."""
    # no link catalogued: one device, nothing to move (an infinite link keeps N/bw at 0)
    link_bw = hw.interconnect_bandwidth_bytes_per_s * a.link_efficiency or INF
    latency = hw.interconnect_latency_s if a.link_latency_s is None else a.link_latency_s
    dispatch = hw.dispatch_overhead_s if a.dispatch_overhead_s is None else a.dispatch_overhead_s
    net = hw.network_bandwidth_bytes_per_s
    net_latency = a.network_latency_s
    if net_latency is None and net is not None:
        # A fitted link latency holds the software cost of a collective (launch, sync) above the
        # link's own; a transfer between nodes pays that cost too, over the network's latency.
        software = max(0.0, latency - (hw.interconnect_latency_s or 0.0))
        net_latency = hw.network_latency_s + software
    return Device(
        peak=peaks[0],
        peak_attn=peaks[1],  # attention runs on 16-bit (or wider) activations
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
        fallback=fallback,
        memory_bandwidth=hw.memory_bandwidth_bytes_per_s,
        # no network in the catalogue: traffic between nodes on the link (warned)
        net_bw=link_bw if net is None else net * a.network_efficiency,
        net_lat=latency if net is None else net_latency,
        peer=hw.interconnect_peer_to_peer,
        switch=hw.interconnect_switch_reduction,
        has_network=net is not None,
        **memory.rule_values(sched),
        stream_bw=hw.weight_stream_bandwidth_bytes_per_s or 0.0,
    )


@dataclass(frozen=True, slots=True)
class Split:
    """How the tp devices of a stage share an MoE model's work: `ep` of them hold the routed
    experts, and with `attention_dp` every other operator runs whole on each device's own
    sequences (engine.Deployment's `ep` and `attention_dp`)."""

    ep: int = 1
    attention_dp: bool = False


def layout(
    tp, pp, precision: str, kv_precision: str, split: Split | None = None, a: Assumptions = None
) -> Layout:
    """TP, PP, the bytes per weight (with its scales), KV-cache and activation element, and the
    MoE split with its assumptions (`a`: the expert imbalance, which only expert parallelism
    pays, and the grouped GEMM's wasted rows; none: the defaults)."""
    fmt = number_format(precision)
    split, a = split or Split(), a or DEFAULTS
    return Layout(
        tp=float(tp),
        pp=float(pp),
        weight_bytes=fmt.weight_bytes,
        kv_bytes=kv_format(kv_precision).element_bytes,
        act_bytes=max(fmt.weight_bits / 8.0, ACTIVATION_BYTES_MIN),
        ep=float(split.ep),
        dp=float(tp) if split.attention_dp else 1.0,
        imbalance=a.expert_imbalance if split.ep > 1 else 1.0,
        expert_rows=a.grouped_gemm_tokens,
    )


def efficiencies(a: Assumptions, peak_precision: str = "fp16") -> Efficiencies:
    """Compute efficiency per operator class and the KV read efficiency. GEMMs (and experts,
    unless set apart) run at `fp8_efficiency` when their peak is an 8-bit one, at
    `fp4_efficiency` when it is a 4-bit one (nvfp4, mxfp4), else at `efficiency`; attention runs
    on 16-bit activations at `attention_efficiency` (default `efficiency`)."""
    eff = a.efficiency
    eight = a.efficiency if a.fp8_efficiency is None else a.fp8_efficiency
    if peak_precision in FP4_PEAKS:
        gemm = eight if a.fp4_efficiency is None else a.fp4_efficiency
    else:
        gemm = eight if BYTES_PER_PARAM[peak_precision] == 1.0 else eff
    return Efficiencies(
        gemm=gemm,
        attention=eff if a.attention_efficiency is None else a.attention_efficiency,
        expert=gemm if a.expert_efficiency is None else a.expert_efficiency,
        other=eff,
        kv_bandwidth=a.kv_bandwidth_efficiency,
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
    split: Split = Split()  # expert parallelism and attention DP


SCENARIO_CACHE = 1024  # folded deployments kept (about 6 KiB each)


def split_of(dep) -> Split:
    """The Split of a Deployment."""
    return Split(ep=dep.ep, attention_dp=dep.attention_dp)


def scenario(dep: Deployment) -> Scenario:
    """The checked, folded Scenario of a Deployment. Ids resolve to specs first, and the cache is
    keyed by the specs, so a call by id and a call with the spec objects share one entry."""
    if isinstance(dep.model, Architecture):
        spec, hw = dep.model, resolve_hardware(dep.hardware, dep.catalog)
    else:  # ids resolve through one memo (catalog/resolve.py)
        spec, hw = resolve_pair(dep.model, dep.hardware, dep.catalog)
    assumptions = dep.assumptions
    if assumptions is None and isinstance(dep.profile, Profile):
        assumptions = dep.profile.assumptions
    return _folded(
        sched=stack_of(dep.profile),
        spec=spec,
        hw=hw,
        tp=dep.tp,
        pp=dep.pp,
        precision=dep.precision,
        kv_precision=dep.kv_precision,
        profile=dep.profile_name,
        assumptions=assumptions,
        extra=tuple((k, type(v), v) for k, v in dep.overrides),
        split=split_of(dep),
    )


def stack_of(profile) -> SchedulerDefaults | None:
    """The serving stack (its scheduler table) of a profile or a built-in profile's name: its
    rule sizes the KV pool (engine/serving/memory.py); None for a name no profile has."""
    if isinstance(profile, Profile):
        return profile.scheduler
    try:
        return get_profile(profile).scheduler
    except ValueError:
        return None


@functools.lru_cache(maxsize=SCENARIO_CACHE)
def _folded(
    sched, spec, hw, tp, pp, precision, kv_precision, profile, assumptions, extra, split
) -> Scenario:
    return _scenario(
        sched=sched,
        spec=spec,
        hw=hw,
        tp=tp,
        pp=pp,
        precision=precision,
        kv_precision=kv_precision,
        profile=profile,
        assumptions=assumptions,
        extra=extra,
        split=split,
    )


def forget_scenarios() -> None:
    """Empty the cache of folded deployments (benchmarks time the first call this way)."""
    _folded.cache_clear()


def _scenario(sched, spec, hw, tp, pp, precision, kv_precision, profile, assumptions, extra, split):
    overrides = {k: v for k, _, v in extra}
    st = setup(
        precision=precision,
        kv_precision=kv_precision,
        assumptions=assumptions,
        profile=profile,
        overrides=overrides,
    )
    name, arch, hw, tp, pp = placement(model=spec, hardware=hw, tp=tp, pp=pp, split=split)
    dev, used = setup_values(hw, st, sched)
    lay = layout(
        tp=tp,
        pp=pp,
        precision=st.precision,
        kv_precision=st.kv_precision,
        split=split,
        a=st.assumptions,
    )
    steps = _templates(arch=arch, lay=lay._replace(pp=1.0))
    eta = efficiencies(st.assumptions, used)
    folded = fold(s=shapes_of(arch), dev=dev, lay=lay, eta=eta, xp=SCALAR, steps=steps)
    return Scenario(
        name=name,
        hw_id=hw.id,
        tp=tp,
        pp=pp,
        setup=st,
        peak_precision=used,
        folded=folded,
        echo=st.assumptions.as_dict(),
        split=split,
    )


@functools.lru_cache(maxsize=512)
def _templates(arch: Architecture, lay: Layout) -> tuple:
    """operators.step_lists of one model and layout (its pp aside): shared by every
    accelerator and assumption set (pure and immutable: cached across calls)."""
    return step_lists(shapes_of(arch), lay, SCALAR)
