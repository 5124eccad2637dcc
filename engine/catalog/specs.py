"""Frozen specs of accelerators and models, in SI floats.

Every physical figure is a float in SI units with the unit in its name; specs check themselves
when built, so an impossible catalogue entry fails at load time, never in a solve. What the
models assume beyond the catalogue is in engine/assumptions.py.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType

from engine.assumptions import FLOP_CONVENTIONS
from engine.catalog.arch import Architecture

# Bytes per parameter for each precision (docs/model.md).
BYTES_PER_PARAM: Mapping[str, float] = MappingProxyType(
    {"fp32": 4.0, "tf32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
)
PRECISIONS: tuple[str, ...] = tuple(BYTES_PER_PARAM)
# The peaks of the block-scaled 4-bit formats (NVIDIA's FP4 and OCP's MXFP4 tensor cores), kept
# apart from the precisions above: only the serving model's number formats read them
# (engine/catalog/formats.py). A catalogue's `fp4` key is NVIDIA's name for the nvfp4 rate.
FP4_PEAKS: tuple[str, ...] = ("nvfp4", "mxfp4")
FP4_PEAK_ALIASES: Mapping[str, str] = MappingProxyType({"fp4": "nvfp4"})
# Every accelerator lists these two peaks; the others are optional.
REQUIRED_PEAKS: tuple[str, ...] = ("fp16", "fp32")
# Where a precision the chip lists no peak for takes its peak from (with a warning, except bf16):
# never a faster precision. bf16 shares fp16's figure, tf32 runs at the fp32 rate, and fp8,
# int8 and int4 weights are computed in fp16 (docs/model.md).
FALLBACKS: Mapping[str, str] = MappingProxyType(
    {"bf16": "fp16", "tf32": "fp32", "fp8": "fp16", "int8": "fp16", "int4": "fp16"}
)
TASKS = ("vision", "llm", "encoder", "diffusion", "speech", "other")


def check_precision(precision: str) -> str:
    """Return the canonical precision name or raise ValueError listing the known ones.

    These are the tutorial's precisions (the whole-model solve, its sweeps and the LLM decode
    view); the serving model's number formats are engine/catalog/formats.py's."""
    if type(precision) is str and precision in BYTES_PER_PARAM:  # already canonical
        return precision
    name = str(precision).strip().lower()
    if name not in BYTES_PER_PARAM:
        raise ValueError(
            f"unknown precision {str(precision)[:40]!r} (the tutorial's views take: "
            f"{', '.join(PRECISIONS)}; the serving model's number formats are listed by "
            "`python -m engine list formats`)"
        )
    return name


def check_fp4_peak(key: str) -> str:
    """The canonical key of a 4-bit block-scaled peak (nvfp4, mxfp4; fp4 is nvfp4)."""
    name = str(key).strip().lower()
    name = FP4_PEAK_ALIASES.get(name, name)
    if name not in FP4_PEAKS:
        raise ValueError(f"unknown 4-bit peak {str(key)[:40]!r} (known: fp4, nvfp4, mxfp4)")
    return name


def check_kv_precision(kv_precision: str | None, precision: str) -> str:
    """The KV-cache precision (the weight precision when None), or ValueError listing choices."""
    name = precision if kv_precision is None else str(kv_precision).strip().lower()
    if name not in BYTES_PER_PARAM:
        raise ValueError(f"unknown KV precision {kv_precision!r} (known: {', '.join(PRECISIONS)})")
    return name


def _positive(owner: str, **values: float) -> None:
    for name, value in values.items():
        if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
            raise ValueError(f"{owner}: {name} must be a positive finite number, got {value!r}")


# Physical ranges of catalogue figures (SI): a value outside is a typo or a unit slip (a chip
# with 1e-300 B/s would make every time infinite), refused when the catalogue loads.
RANGES = {
    "peak": (1e6, 1e19, "FLOP/s"),  # 1 MFLOP/s (a microcontroller) to 10 EFLOP/s
    "memory_bandwidth": (1e6, 1e17, "B/s"),  # 1 MB/s to 100 PB/s (a wafer's SRAM: 21 PB/s)
    "memory_capacity": (1e3, 1e15, "B"),  # 1 kB to 1 PB
    "dispatch_overhead": (0.0, 1.0, "s"),
    "tdp": (1e-3, 1e6, "W"),
    "interconnect_bandwidth": (1e6, 1e14, "B/s"),
    "interconnect_latency": (0.0, 1.0, "s"),
    "params": (1.0, 1e14, ""),  # parameters: one to 100 trillion
    "flops_per_sample": (1.0, 1e18, "FLOP"),
}


def _in_range(owner: str, name: str, value: object) -> None:
    """ValueError unless `value` is a finite number within RANGES[name] (the field named)."""
    low, high, unit = RANGES[name.split(".")[0]]
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not (ok and math.isfinite(value) and low <= value <= high):
        raise ValueError(
            f"{owner}: {name} must be from {low:g} to {high:g} {unit}, got {value!r}".rstrip()
        )


def _field_hash(spec) -> int:
    """A spec's hash from its compared fields (mappings as sorted items), computed once at
    construction: specs key the serving model's caches, so a lookup must cost no more than a
    dict probe (docs/architecture.md, "Caches")."""
    values = []
    for f in fields(spec):
        if f.compare:
            value = getattr(spec, f.name)
            values.append(tuple(sorted(value.items())) if isinstance(value, Mapping) else value)
    return hash(tuple(values))


def _check_interconnect(hw: HardwareSpec) -> None:
    n = hw.devices_per_node
    if isinstance(n, bool) or not isinstance(n, int) or not 0 < n <= 100_000:
        raise ValueError(f"{hw.id}: devices_per_node must be a whole number > 0, got {n!r}")
    bw, lat = hw.interconnect_bandwidth_bytes_per_s, hw.interconnect_latency_s
    if n > 1 or bw:  # a single device may still list its link (unused)
        _in_range(hw.id, "interconnect_bandwidth", bw)
    _in_range(hw.id, "interconnect_latency", lat)
    if hw.price_per_hour_usd is not None:
        _positive(hw.id, price_per_hour_usd=hw.price_per_hour_usd)
    if hw.network_bandwidth_bytes_per_s is not None:
        _positive(hw.id, network_bandwidth=hw.network_bandwidth_bytes_per_s)
        net_lat = hw.network_latency_s
        if not (isinstance(net_lat, int | float) and math.isfinite(net_lat) and net_lat >= 0):
            raise ValueError(f"{hw.id}: network_latency must be >= 0, got {net_lat!r}")


@dataclass(frozen=True, slots=True)
class HardwareSpec:
    """One accelerator: dense peak FLOP/s per precision, HBM bandwidth and capacity."""

    id: str
    name: str
    peak_flop_per_s: Mapping[str, float]
    memory_bandwidth_bytes_per_s: float
    memory_capacity_bytes: float
    dispatch_overhead_s: float
    tdp_w: float
    source: str
    # The device-to-device link (docs/model.md, "Serving"): per device, per direction.
    interconnect_name: str
    interconnect_bandwidth_bytes_per_s: float
    interconnect_latency_s: float  # per hop
    devices_per_node: int  # 1: a single device, multi-device requests are refused
    vendor: str = ""
    retrieved: str = ""
    notes: str = ""
    aliases: tuple[str, ...] = ()
    origin: str = "built-in"  # the catalogue file this entry came from
    interconnect_source: str = ""
    interconnect_notes: str = ""
    memory_capacity_text: str = ""  # as the catalogue states it, e.g. "80 GiB" or "141 GB"
    price_per_hour_usd: float | None = None  # public on-demand list price; None: none known
    price_source: str = ""
    price_date: str = ""
    price_notes: str = ""
    # What the link's fabric lets collectives do (docs/model.md, "Collectives"): every device
    # reads every other's memory at the link's bandwidth (NVSwitch, a full mesh: the stacks'
    # one-shot and two-shot all-reduces), and the switch reduces (NVLink SHARP: NCCL's NVLS).
    interconnect_peer_to_peer: bool = False
    interconnect_switch_reduction: bool = False
    # The inter-node network (scale-out) per device, per direction; None: not catalogued, so
    # training across nodes is refused (docs/model.md, "Training step").
    network_name: str = ""
    network_bandwidth_bytes_per_s: float | None = None
    network_latency_s: float | None = None  # per hop
    network_source: str = ""
    network_notes: str = ""
    # Dense peaks of the block-scaled 4-bit formats (FP4_PEAKS) where the datasheet gives
    # them: Blackwell's FP4 tensor cores, CDNA4's MXFP4. Hopper and older have none.
    fp4_peak_flop_per_s: Mapping[str, float] = field(default_factory=dict)
    # Weight streaming (docs/model.md, "Weight streaming"): when a model's weights exceed the
    # device's own memory they stream in from external memory at this injection bandwidth
    # (Cerebras' MemoryX into the wafer's SRAM), and the device's memory holds the KV cache and
    # activations only. None: weights must fit.
    weight_stream_name: str = ""
    weight_stream_bandwidth_bytes_per_s: float | None = None
    weight_stream_source: str = ""
    weight_stream_notes: str = ""
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        return self._hash

    def __post_init__(self) -> None:
        if self.weight_stream_bandwidth_bytes_per_s is not None:
            _in_range(self.id, "memory_bandwidth", self.weight_stream_bandwidth_bytes_per_s)
        _in_range(self.id, "memory_bandwidth", self.memory_bandwidth_bytes_per_s)
        _in_range(self.id, "memory_capacity", self.memory_capacity_bytes)
        _in_range(self.id, "tdp", self.tdp_w)
        _in_range(self.id, "dispatch_overhead", self.dispatch_overhead_s)
        _check_interconnect(self)
        for precision, peak in self.peak_flop_per_s.items():
            check_precision(precision)
            _in_range(self.id, f"peak.{precision}", peak)
        for precision in REQUIRED_PEAKS:
            if precision not in self.peak_flop_per_s:
                raise ValueError(f"{self.id}: peak.{precision} is required")
        object.__setattr__(self, "peak_flop_per_s", MappingProxyType(dict(self.peak_flop_per_s)))
        fp4 = {}
        for key, peak in self.fp4_peak_flop_per_s.items():
            fp4[check_fp4_peak(key)] = peak
            _in_range(self.id, f"peak.{key}", peak)
        object.__setattr__(self, "fp4_peak_flop_per_s", MappingProxyType(fp4))
        object.__setattr__(self, "_hash", _field_hash(self))

    @property
    def capacity_label(self) -> str:
        """The capacity as the catalogue states it ("80 GiB", "141 GB"), else in decimal GB."""
        return self.memory_capacity_text or f"{self.memory_capacity_bytes / 1e9:.4g} GB"

    def peak_for(self, precision: str) -> tuple[float, str]:
        """The dense peak FLOP/s for `precision` and the precision whose peak was used.

        A precision the chip does not list takes the peak of FALLBACKS[precision], never a
        faster one: bf16 -> fp16 (shared figure), tf32 -> fp32, fp8/int8/int4 -> fp16. The
        caller warns when the second item differs (except bf16 on fp16).
        """
        precision = check_precision(precision)
        if precision in self.peak_flop_per_s:
            return self.peak_flop_per_s[precision], precision
        used = FALLBACKS[precision]  # fp16 and fp32 are always listed
        return self.peak_flop_per_s[used], used


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """One model: parameters, FLOPs per sample (with their convention) and depth."""

    id: str
    name: str
    params: float
    flops_per_sample: float
    flop_convention: str  # "mac1": the figure counts 1 FLOP per MAC; "mac2": 2 per MAC
    layers: int
    source: str
    task: str = "other"
    sample: str = "sample"
    active_params: float | None = None  # mixture-of-experts: parameters used per token
    hidden: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    context_length: int | None = None
    retrieved: str = ""
    notes: str = ""
    aliases: tuple[str, ...] = ()
    origin: str = "built-in"
    arch: Architecture | None = (
        None  # decoder LLMs: the config.json shapes (engine/catalog/arch.py)
    )
    published_params: float | None = None  # the maker's exact count, when `params` is rounded
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        return self._hash

    def __post_init__(self) -> None:
        _in_range(self.id, "params", self.params)
        _in_range(self.id, "flops_per_sample", self.flops_per_sample)
        if self.published_params is not None:
            _in_range(self.id, "params", self.published_params)
        if self.arch is not None:
            _check_arch(self)
        if self.flop_convention not in ("mac1", "mac2"):
            raise ValueError(f"{self.id}: flop_convention must be 'mac1' or 'mac2'")
        if not (isinstance(self.layers, int) and self.layers > 0):
            raise ValueError(f"{self.id}: layers must be a positive whole number")
        if self.task not in TASKS:
            raise ValueError(f"{self.id}: task must be one of {', '.join(TASKS)}")
        if self.active_params is not None:
            _positive(self.id, active_params=self.active_params)
            if self.active_params > self.params:
                raise ValueError(f"{self.id}: active_params cannot exceed params")
        for name in ("hidden", "heads", "kv_heads", "head_dim", "context_length"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int) and value > 0):
                raise ValueError(f"{self.id}: {name} must be a positive whole number")
        if self.heads and self.kv_heads and self.heads % self.kv_heads:
            raise ValueError(f"{self.id}: kv_heads must divide heads")
        object.__setattr__(self, "_hash", _field_hash(self))

    @property
    def is_decoder_llm(self) -> bool:
        """True when the entry has what the LLM decode view (docs/model.md) needs."""
        return self.task == "llm" and bool(self.hidden and self.heads and self.kv_heads)

    @property
    def params_active(self) -> float:
        return self.active_params if self.active_params is not None else self.params

    def flops_for(self, convention: str) -> float:
        """FLOPs per sample under `convention` ("catalog" or "mac2"); docs/model.md."""
        if convention not in FLOP_CONVENTIONS:
            raise ValueError(f"unknown FLOP convention {convention!r} (known: catalog, mac2)")
        if convention == "mac2" and self.flop_convention == "mac1":
            return 2.0 * self.flops_per_sample
        return self.flops_per_sample


def _check_arch(model: ModelSpec) -> None:
    """The flat shape fields the decode model reads must agree with the architecture."""
    arch = model.arch
    if not isinstance(arch, Architecture):
        raise ValueError(f"{model.id}: arch must be an Architecture")
    if model.task != "llm":
        raise ValueError(f"{model.id}: an arch table is only for task = 'llm'")
    for name in ("layers", "hidden", "heads", "kv_heads", "head_dim", "context_length"):
        flat = getattr(model, name)
        if flat is not None and flat != getattr(arch, name):
            raise ValueError(
                f"{model.id}: {name} = {flat} disagrees with arch.{name} = {getattr(arch, name)}"
            )
    implied = model.hidden / model.heads if model.hidden and model.heads else None
    if model.head_dim is None and implied is not None and implied != arch.head_dim:
        raise ValueError(
            f"{model.id}: head_dim is missing and hidden / heads = {implied:g} "
            f"disagrees with arch.head_dim = {arch.head_dim}"
        )
