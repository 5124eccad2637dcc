"""Every assumption the models make beyond the catalogue, declared once.

`REGISTRY` names each assumption once: its user-facing name (the CLI flag `--layer-overhead-us`,
the JSON key, the share-link parameter and the profile key `layer_overhead_us`), its unit and
the scale to SI, its default, its accepted range, its CSV header and its label. The engine
checks values against it, the CLI builds its flags from it, the pages build their widgets and
links from it and the CSV files name their columns from it, so the range a link accepts is the
range the widget and the engine accept. The defaults are the MLSys·im "Hello, Roofline"
tutorial's (docs/model.md): the published figures depend on them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

from engine.checks import MAX_DEGREE  # noqa: F401  (the limits live in engine/checks.py)

FLOP_CONVENTIONS = ("catalog", "mac2")  # as catalogued | normalise to 2 FLOPs per MAC


@dataclass(frozen=True, slots=True)
class Assumption:
    """One assumption: how users name it and what values it takes."""

    name: str  # CLI flag (dashes), JSON key, link parameter, profile key
    field: str  # the Assumptions field, in SI units
    unit: str  # the user's unit ("" for fractions and words)
    scale: int  # 10**n: the user's unit is SI / scale (µs: 10**6); 1 for none
    default: float | str | None  # in the user's unit; None: see `none_means`
    low: float | None  # accepted range in the user's unit (None: a word, see `choices`)
    high: float | None
    csv: str  # CSV header
    label: str  # what it is, with its symbol (widgets, --help)
    none_means: str = ""  # what an unset value stands for
    choices: tuple[str, ...] = ()
    models: str = "both"  # "tutorial", "serving", "both" (those two) or "training"


def _fraction(name, field, default, csv, label, models="both", none_means="", low=0.01, high=1.0):
    return Assumption(name, field, "", 1, default, low, high, csv, label, none_means, (), models)


REGISTRY: tuple[Assumption, ...] = (
    _fraction("efficiency", "efficiency", 0.5, "compute_efficiency_fraction",
              "Compute efficiency η (fraction of peak FLOP/s)"),
    Assumption("layer_overhead_us", "layer_overhead_s", "µs", 10**6, 10.0, 0.0, 1e6,
               "layer_overhead_us", "Layer overhead τ (µs per layer per step)"),
    Assumption("dispatch_overhead_ms", "dispatch_overhead_s", "ms", 10**3, None, 0.0, 1e4,
               "dispatch_overhead_ms", "Dispatch overhead d (ms per call)",
               none_means="the accelerator's catalogued figure"),
    Assumption("activation_fraction", "activation_fraction", "", 1, 0.1, 0.0, 1e3,
               "activation_traffic_fraction",
               "Activation traffic α (× weight bytes per extra sample)", models="tutorial"),
    Assumption("flop_convention", "flop_convention", "", 1, "catalog", None, None,
               "flop_convention", "FLOP convention", choices=FLOP_CONVENTIONS,
               models="tutorial"),
    _fraction("bandwidth_efficiency", "bandwidth_efficiency", 1.0,
              "bandwidth_efficiency_fraction", "Bandwidth efficiency (fraction of HBM bandwidth)"),
    _fraction("memory_reserve", "memory_reserve", 0.10, "memory_reserve_fraction",
              "Memory reserve (fraction of capacity the runtime keeps)", low=0.0, high=0.99),
    _fraction("attention_efficiency", "attention_efficiency", None,
              "attention_efficiency_fraction", "Attention efficiency (fraction of peak)",
              "serving", "the compute efficiency η"),
    _fraction("expert_efficiency", "expert_efficiency", None, "expert_efficiency_fraction",
              "MoE expert efficiency (fraction of peak)", "serving", "the compute efficiency η"),
    _fraction("link_efficiency", "link_efficiency", 1.0, "link_efficiency_fraction",
              "Link efficiency (fraction of interconnect bandwidth)", "serving"),
    Assumption("link_latency_us", "link_latency_s", "µs", 10**6, None, 0.0, 1e6,
               "link_latency_us", "Link latency α (µs per hop)",
               none_means="the interconnect's catalogued figure", models="serving"),
    _fraction("fp8_efficiency", "fp8_efficiency", None, "fp8_efficiency_fraction",
              "8-bit GEMM efficiency (fraction of the fp8/int8 peak)", "serving",
              "the compute efficiency η"),
    _fraction("kv_reuse", "kv_reuse", 1.0, "kv_reuse_fraction",
              "Grouped-KV reuse (share of the GQA read saving that decode kernels realise)",
              "serving", low=0.0),
    Assumption("prefill_layer_overhead_us", "prefill_layer_overhead_s", "µs", 10**6, None,
               0.0, 1e6, "prefill_layer_overhead_us",
               "Prefill layer overhead (µs per layer per prefill step)",
               none_means="the layer overhead τ", models="serving"),
    Assumption("sequence_overhead_us", "sequence_overhead_s", "µs", 10**6, 0.0, 0.0, 1e5,
               "sequence_overhead_us",
               "Sequence overhead σ (µs per sequence per step: sampling, bookkeeping)",
               models="serving"),
    _fraction("network_efficiency", "network_efficiency", 1.0, "network_efficiency_fraction",
              "Network efficiency (fraction of the inter-node bandwidth)", "training"),
    Assumption("network_latency_us", "network_latency_s", "µs", 10**6, None, 0.0, 1e6,
               "network_latency_us", "Network latency (µs per hop between nodes)",
               none_means="the network's catalogued figure", models="training"),
    _fraction("overlap_fraction", "overlap_fraction", 1.0, "overlap_fraction",
              "Overlap (share of the overlapping compute that hides data-parallel traffic)",
              "training", low=0.0),
    Assumption("attention_backward_factor", "attention_backward_factor", "", 1, 2.5, 1.0, 5.0,
               "attention_backward_factor", "Attention backward (× its forward time)",
               models="training"),
)  # fmt: skip
BY_NAME = {a.name: a for a in REGISTRY}
ASSUMPTION_NAMES = tuple(BY_NAME)
# User name -> (Assumptions field, scale from the user's unit to SI); kept for callers.
ASSUMPTION_UNITS = {a.name: (a.field, 1.0 / a.scale) for a in REGISTRY}
# What the training model reads (docs/model.md, "Training step"): its own assumptions and the
# serving model's per-operator ones (efficiencies, overheads, links, memory reserve).
TRAINING_NAMES = (
    "efficiency", "attention_efficiency", "expert_efficiency", "bandwidth_efficiency",
    "layer_overhead_us", "memory_reserve", "link_efficiency", "link_latency_us",
    *(a.name for a in REGISTRY if a.models == "training"),
)  # fmt: skip


def to_si(a: Assumption, value):
    """A user value in SI: divide by 10**n (exact: 10 µs is exactly 10e-6 s)."""
    return value if value is None or isinstance(value, str) else value / a.scale


def from_si(a: Assumption, value):
    """An SI value in the user's unit."""
    return value if value is None or isinstance(value, str) else value * a.scale


def check_value(a: Assumption, value: object, slack: float = 0.0) -> None:
    """ValueError naming the assumption and its range unless `value` is acceptable (user unit;
    `slack`: a relative tolerance at the ends, for values converted from SI)."""
    if value is None:
        if a.default is None:
            return
        raise ValueError(f"{a.name} must be set")
    if a.choices:
        if value not in a.choices:
            raise ValueError(f"unknown {a.label} {value!r} (known: {', '.join(a.choices)})")
        return
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    low, high = a.low * (1 - slack), a.high * (1 + slack)
    if not (ok and math.isfinite(value) and low <= value <= high):
        unit = f" {a.unit}" if a.unit else ""
        raise ValueError(f"{a.name} must be a number from {a.low:g} to {a.high:g}{unit}, "
                         f"got {value!r}"[:200])  # fmt: skip


@dataclass(frozen=True, slots=True)
class Assumptions:
    """Everything the models assume beyond the catalogue, in SI units; REGISTRY's defaults.

    `dispatch_overhead_s`, `link_latency_s` and `network_latency_s` None mean "the
    catalogue's figure"; `attention_efficiency`, `expert_efficiency` and `fp8_efficiency` None
    mean "the compute efficiency"; `prefill_layer_overhead_s` None means "the layer overhead".
    """

    efficiency: float = 0.5
    layer_overhead_s: float = 10e-6
    dispatch_overhead_s: float | None = None
    activation_fraction: float = 0.1
    flop_convention: str = "catalog"
    bandwidth_efficiency: float = 1.0
    # vLLM's default gpu_memory_utilization is 0.9, i.e. 10 % held back.
    memory_reserve: float = 0.10
    attention_efficiency: float | None = None
    expert_efficiency: float | None = None
    link_efficiency: float = 1.0
    link_latency_s: float | None = None
    fp8_efficiency: float | None = None  # None: `efficiency`
    kv_reuse: float = 1.0  # 1: each KV head read once for its query-head group (ideal GQA)
    prefill_layer_overhead_s: float | None = None  # None: layer_overhead_s
    sequence_overhead_s: float = 0.0
    network_efficiency: float = 1.0
    network_latency_s: float | None = None
    overlap_fraction: float = 1.0
    attention_backward_factor: float = 2.5  # FlashAttention-2: 5 matmuls backward, 2 forward
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        return self._hash

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash(tuple(getattr(self, f) for f in _FIELDS)))
        for a in REGISTRY:
            value = getattr(self, a.field)
            if value is not None and not a.choices:
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise ValueError(f"{a.name} must be a number, got {value!r}"[:200])
                value = from_si(a, value)  # may differ from the user's figure in its last bit
            check_value(a, value, slack=1e-12)

    def as_dict(self) -> dict[str, object]:
        """Every assumption by its user name and unit (None: the catalogue's figure)."""
        return {a.name: from_si(a, getattr(self, a.field)) for a in REGISTRY}


_FIELDS = tuple(a.field for a in REGISTRY)  # every field the hash and make_assumptions read
DEFAULTS = Assumptions()
ASSUMPTION_FIELDS = tuple(f.name for f in fields(Assumptions) if f.init)


def make_assumptions(assumptions: Assumptions | None = None, **overrides: object) -> Assumptions:
    """Assumptions from the defaults (or `assumptions`) with user-unit overrides applied.

    Args:
        assumptions: a starting point; the defaults of docs/model.md if None.
        **overrides: any of ASSUMPTION_NAMES, in the user's unit; None leaves a value as is.

    Raises:
        ValueError: an unknown name, or a value out of its range (the message names it).
    """
    base = assumptions or DEFAULTS
    if not overrides:  # nothing to apply: `base` was checked when it was built
        return base
    unknown = sorted(set(overrides) - set(ASSUMPTION_NAMES))
    if unknown:
        raise ValueError(
            f"unknown assumption {unknown[0]!r} (known: {', '.join(ASSUMPTION_NAMES)})"
        )
    values = {name: value for name, value in overrides.items() if value is not None}
    if not values:
        return base
    for name, value in values.items():
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 1e300:
            raise ValueError(f"{name} is out of range")
        check_value(BY_NAME[name], value)
    kwargs = {f: getattr(base, f) for f in _FIELDS}
    for name, value in values.items():
        a = BY_NAME[name]
        kwargs[a.field] = to_si(a, value)
    return Assumptions(**kwargs)
