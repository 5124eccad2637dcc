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
from dataclasses import dataclass, field

from engine.checks import MAX_DEGREE  # noqa: F401  (the limits live in engine/checks.py)
from engine.files import echo

FLOP_CONVENTIONS = ("catalog", "mac2")  # as catalogued | normalise to 2 FLOPs per MAC
# The stacks whose GEMM curves can move a profile's efficiencies between accelerators ("none":
# off) and the accelerators their tables measure (engine/catalog/kernels.py `gemm_transfer`;
# a test checks data/kernels/ measures exactly these).
KERNEL_STACKS = ("none", "trtllm", "vllm", "sglang")
MOE_DISPATCHERS = ("alltoall", "flex")  # Megatron-Core's --moe-token-dispatcher-type
KERNEL_ACCELERATORS = (
    "A100",
    "H100",
    "H200",
    "B200",
    "B300",
    "GB200",
    "GB300",
    "L40S",
    "RTX-PRO-6000",
)


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
    return Assumption(
        name=name,
        field=field,
        unit="",
        scale=1,
        default=default,
        low=low,
        high=high,
        csv=csv,
        label=label,
        none_means=none_means,
        choices=(),
        models=models,
    )


def _bytes(name, default, low, high, label):
    """A training assumption counted in bytes per element (its name says so), alike in code,
    links and CSV."""
    return _fraction(
        name=name,
        field=name,
        default=default,
        csv=name,
        label=label,
        models="training",
        low=low,
        high=high,
    )


def _word(name, default, label, choices, models):
    """A word-valued assumption (one of `choices`), named alike in code, links and CSV."""
    return Assumption(
        name=name,
        field=name,
        unit="",
        scale=1,
        default=default,
        low=None,
        high=None,
        csv=name,
        label=label,
        choices=choices,
        models=models,
    )


REGISTRY: tuple[Assumption, ...] = (
    _fraction(
        name="efficiency",
        field="efficiency",
        default=0.5,
        csv="compute_efficiency_fraction",
        label="Compute efficiency η (fraction of peak FLOP/s)",
    ),
    Assumption(
        name="layer_overhead_us",
        field="layer_overhead_s",
        unit="µs",
        scale=10**6,
        default=10.0,
        low=0.0,
        high=1e6,
        csv="layer_overhead_us",
        label="Layer overhead τ (µs per layer per step)",
    ),
    Assumption(
        name="dispatch_overhead_ms",
        field="dispatch_overhead_s",
        unit="ms",
        scale=10**3,
        default=None,
        low=0.0,
        high=1e4,
        csv="dispatch_overhead_ms",
        label="Dispatch overhead d (ms per call)",
        none_means="the accelerator's catalogued figure",
    ),
    Assumption(
        name="activation_fraction",
        field="activation_fraction",
        unit="",
        scale=1,
        default=0.1,
        low=0.0,
        high=1e3,
        csv="activation_traffic_fraction",
        label="Activation traffic α (× weight bytes per extra sample)",
        models="tutorial",
    ),
    _word(
        name="flop_convention",
        default="catalog",
        label="FLOP convention",
        choices=FLOP_CONVENTIONS,
        models="tutorial",
    ),
    _fraction(
        name="bandwidth_efficiency",
        field="bandwidth_efficiency",
        default=1.0,
        csv="bandwidth_efficiency_fraction",
        label="Bandwidth efficiency (fraction of HBM bandwidth)",
    ),
    _fraction(
        name="memory_reserve",
        field="memory_reserve",
        default=0.10,
        csv="memory_reserve_fraction",
        label="Memory reserve (fraction of capacity the runtime keeps)",
        low=0.0,
        high=0.99,
    ),
    _fraction(
        name="attention_efficiency",
        field="attention_efficiency",
        default=None,
        csv="attention_efficiency_fraction",
        label="Attention efficiency (fraction of peak)",
        models="serving",
        none_means="the compute efficiency η",
    ),
    _fraction(
        name="expert_efficiency",
        field="expert_efficiency",
        default=None,
        csv="expert_efficiency_fraction",
        label="MoE expert efficiency (fraction of peak)",
        models="serving",
        none_means="the compute efficiency η",
    ),
    _fraction(
        name="link_efficiency",
        field="link_efficiency",
        default=1.0,
        csv="link_efficiency_fraction",
        label="Link efficiency (fraction of interconnect bandwidth)",
        models="serving",
    ),
    Assumption(
        name="link_latency_us",
        field="link_latency_s",
        unit="µs",
        scale=10**6,
        default=None,
        low=0.0,
        high=1e6,
        csv="link_latency_us",
        label="Link latency α (µs per hop)",
        none_means="the interconnect's catalogued figure",
        models="serving",
    ),
    _fraction(
        name="fp8_efficiency",
        field="fp8_efficiency",
        default=None,
        csv="fp8_efficiency_fraction",
        label="8-bit GEMM efficiency (fraction of the fp8/int8 peak)",
        models="serving",
        none_means="the compute efficiency η",
    ),
    _fraction(
        name="fp4_efficiency",
        field="fp4_efficiency",
        default=None,
        csv="fp4_efficiency_fraction",
        label="4-bit GEMM efficiency (fraction of the nvfp4/mxfp4 peak)",
        models="serving",
        none_means="the 8-bit GEMM efficiency",
    ),
    Assumption(
        name="dequant_overhead",
        field="dequant_overhead",
        unit="",
        scale=1,
        default=0.375,
        low=0.0,
        high=4.0,
        csv="dequant_overhead_fraction",
        label="Dequantisation overhead δ (extra GEMM time when weights are widened in the kernel)",
        models="serving",
    ),
    _fraction(
        name="kv_reuse",
        field="kv_reuse",
        default=1.0,
        csv="kv_reuse_fraction",
        label="Grouped-KV reuse (no longer used: decode attention reads each KV head once; "
        "see kv_bandwidth_efficiency)",
        models="serving",
        low=0.0,
    ),
    _fraction(
        name="kv_bandwidth_efficiency",
        field="kv_bandwidth_efficiency",
        default=1.0,
        csv="kv_bandwidth_efficiency_fraction",
        label="KV read efficiency (fraction of the achieved memory bandwidth decode attention's "
        "KV reads reach)",
        models="serving",
    ),
    Assumption(
        name="prefill_layer_overhead_us",
        field="prefill_layer_overhead_s",
        unit="µs",
        scale=10**6,
        default=None,
        low=0.0,
        high=1e6,
        csv="prefill_layer_overhead_us",
        label="Prefill layer overhead (µs per layer per prefill step)",
        none_means="the layer overhead τ",
        models="serving",
    ),
    Assumption(
        name="sequence_overhead_us",
        field="sequence_overhead_s",
        unit="µs",
        scale=10**6,
        default=0.0,
        low=0.0,
        high=1e5,
        csv="sequence_overhead_us",
        label="Sequence overhead σ (µs per sequence per step: sampling, bookkeeping)",
        models="serving",
    ),
    _fraction(
        name="network_efficiency",
        field="network_efficiency",
        default=1.0,
        csv="network_efficiency_fraction",
        label="Network efficiency (fraction of the inter-node bandwidth)",
        models="serving",
    ),
    Assumption(
        name="network_latency_us",
        field="network_latency_s",
        unit="µs",
        scale=10**6,
        default=None,
        low=0.0,
        high=1e6,
        csv="network_latency_us",
        label="Network latency (µs per hop between nodes)",
        none_means="the network's catalogued figure",
        models="serving",
    ),
    # The busiest of ep expert ranks sets the step. A balanced router's statistical floor at
    # T tokens of top-k over ep ranks is about 1 + √(2·ln(ep)·ep/(T·k)) (1.04 for 2,000 tokens
    # of top-8 on 8 ranks); skewed expert popularity adds to it, which DeepSeek's EPLB and
    # SGLang's balancers exist to cut. 1.2 is an assumption to fit (docs/model.md, "MoE layouts").
    Assumption(
        name="expert_imbalance",
        field="expert_imbalance",
        unit="",
        scale=1,
        default=1.2,
        low=1.0,
        high=8.0,
        csv="expert_imbalance_ratio",
        label="Expert imbalance (busiest expert-parallel rank's routed tokens over the mean)",
        models="serving",
    ),
    # A grouped GEMM with n tokens per expert runs at about n/(n + n0) of a large GEMM's rate:
    # DeepGEMM's masked grouped GEMMs on H800 (README, 256 to 1,024 tokens per expert, six
    # shapes) give n0 from 59 to 130, mean 88 (docs/model.md, "MoE layouts").
    Assumption(
        name="grouped_gemm_tokens",
        field="grouped_gemm_tokens",
        unit="",
        scale=1,
        default=90.0,
        low=0.0,
        high=4096.0,
        csv="grouped_gemm_overhead_tokens",
        label="Grouped-GEMM overhead n0 (token rows per routed expert: n tokens run at n/(n + n0))",
        models="serving",
    ),
    # A profile's GEMM efficiencies are its reference accelerator's; on another one they scale by
    # the ratio of the two accelerators' GEMM curves in the stack's kernel tables (data/kernels/,
    # docs/model.md "Kernel transfer"). "none" keeps one efficiency on every accelerator.
    _word(
        name="kernel_curves",
        default="none",
        label="Kernel curves (the stack whose GEMM tables move efficiencies between accelerators)",
        choices=KERNEL_STACKS,
        models="serving",
    ),
    _word(
        name="kernel_reference",
        default="H100",
        label="Kernel reference (the accelerator the profile's GEMM efficiencies were fitted on)",
        choices=KERNEL_ACCELERATORS,
        models="serving",
    ),
    _fraction(
        name="overlap_fraction",
        field="overlap_fraction",
        default=1.0,
        csv="overlap_fraction",
        label="Overlap (share of the overlapping compute that hides data-parallel traffic)",
        models="training",
        low=0.0,
    ),
    # Megatron-LM's default 1F1B runs an MoE layer's dispatch and combine between its
    # computations (0); DualPipe (DeepSeek-V3 report, §3.2.1) and Megatron-LM's
    # --overlap-moe-expert-parallel-comm run them under another micro-batch's compute (up to 1).
    _fraction(
        name="expert_overlap",
        field="expert_overlap",
        default=0.0,
        csv="expert_overlap",
        label=(
            "Expert all-to-all overlap (share of a layer's compute that hides MoE dispatch and "
            "combine)"
        ),
        models="training",
        low=0.0,
    ),
    # Megatron-Core's MoE token dispatchers (--moe-token-dispatcher-type, megatron/core/
    # transformer/moe/token_dispatcher.py): `alltoall` (the default) sends a token once per
    # routed expert; `flex` (MoEFlexTokenDispatcher over DeepEP or HybridEP) once per expert
    # rank, crossing the network once per other node and forwarded over NVLink there.
    _word(
        name="moe_dispatcher",
        default="alltoall",
        label=(
            "MoE dispatcher (alltoall: a token sent once per routed expert; flex: DeepEP, "
            "once per expert rank and once per node over the network)"
        ),
        choices=MOE_DISPATCHERS,
        models="training",
    ),
    # Megatron-LM runs a layer's tensor-parallel all-gathers and reduce-scatters between its
    # GEMMs by default (0); with --tp-comm-overlap, Transformer Engine's userbuffers split them
    # into tp chunks pipelined with the GEMMs that consume or produce them (up to 1).
    _fraction(
        name="tp_overlap",
        field="tp_overlap",
        default=0.0,
        csv="tp_overlap",
        label=(
            "Tensor-parallel overlap (share of a layer's GEMMs that hides its all-gathers and "
            "reduce-scatters)"
        ),
        models="training",
        low=0.0,
    ),
    # Megatron-LM's hidden and attention dropout (0.1 each by default) keep a 1-byte mask per
    # element they drop from; Llama-family recipes train without dropout (0: no masks, PyTorch
    # returning its input: aten/src/ATen/native/Dropout.cpp, _dropout_impl).
    _fraction(
        name="dropout",
        field="dropout",
        default=0.1,
        csv="dropout_fraction",
        label=(
            "Dropout probability (hidden and attention; above 0 each keeps a 1-byte mask for "
            "the backward pass, Megatron-LM's default 0.1; 0: none, as Llama-family runs)"
        ),
        models="training",
        low=0.0,
        high=0.9,
    ),
    # Gradients held and reduced across the data-parallel ranks: Megatron-LM accumulates and
    # reduces them in fp32 for bf16 (and so fp8) runs unless --grad-reduce-in-bf16
    # (megatron/training/arguments.py: "bfloat16 requires gradient accumulation and all-reduce
    # to be done in fp32"); 2 bytes is bf16 (the shipped profiles' fits and checks).
    _bytes(
        name="gradient_bytes",
        default=2.0,
        low=2.0,
        high=4.0,
        label=(
            "Gradient bytes per parameter, held and reduced over the data-parallel ranks (2: "
            "16-bit; 4: fp32, Megatron-LM's default for bf16 runs)"
        ),
    ),
    # Adam's two moments per parameter: fp32 by default; Megatron-Core's precision-aware
    # optimizer keeps them in 16 bits (--use-precision-aware-optimizer with --exp-avg-dtype and
    # --exp-avg-sq-dtype bf16, megatron/training/arguments.py) or 8, as DeepSeek-V3 kept them
    # in bf16 (report §3.3.3, "Low-Precision Optimizer States"). The fp32 master weight stays.
    _bytes(
        name="optimizer_moment_bytes",
        default=4.0,
        low=1.0,
        high=4.0,
        label=(
            "Adam moment bytes: each of the momentum and variance per parameter, beside the "
            "fp32 master weight (4: fp32; 2: bf16, Megatron-Core's precision-aware optimizer "
            "and DeepSeek-V3)"
        ),
    ),
    # An fp8 GEMM's input kept for its backward pass: Transformer Engine keeps its fp8 copy in
    # the layout the weight-gradient GEMM reads, 1 byte an element (transformer_engine/pytorch/
    # module/linear.py, "Discard row-wise data since it is not needed in backward pass"); a
    # stack that keeps the 16-bit input (torchao's Float8Linear without torch.compile) 2.
    _bytes(
        name="fp8_saved_bytes",
        default=1.0,
        low=1.0,
        high=2.0,
        label=(
            "fp8: bytes per element of a GEMM's input kept for the backward pass "
            "(1: Transformer Engine's fp8 copy; 2: the 16-bit input)"
        ),
    ),
    # DeepSeek-V3's low-precision activation storage (report, arXiv 2412.19437, §3.3.3,
    # "Low-Precision Storage and Communication"): the inputs of the SwiGLU operator in MoE are
    # cached in fp8 (fine-grained 1x128 scaling) and its output recomputed (the `moe_act`
    # module); the input of the Linear after attention, which attention's backward pass reads
    # too, is kept once in a 12-bit E5M6 format. Frameworks keep both at 16 bits by default.
    _bytes(
        name="moe_act_input_bytes",
        default=2.0,
        low=1.0,
        high=2.0,
        label=(
            "MoE activation input bytes: per element of a routed or shared expert's SwiGLU "
            "input kept for the backward pass (2: 16-bit; 1: fp8, as DeepSeek-V3 kept it)"
        ),
    ),
    _bytes(
        name="attention_output_bytes",
        default=2.0,
        low=1.0,
        high=2.0,
        label=(
            "Attention output bytes: per element of attention's output kept for its backward "
            "pass (2: 16-bit, with an fp8 run's copy for the output projection beside it; "
            "below 2: one copy for both, 1.5 for DeepSeek-V3's E5M6)"
        ),
    ),
    Assumption(
        name="attention_backward_factor",
        field="attention_backward_factor",
        unit="",
        scale=1,
        default=2.5,
        low=1.0,
        high=5.0,
        csv="attention_backward_factor",
        label="Attention backward (× its forward time)",
        models="training",
    ),
)
BY_NAME = {a.name: a for a in REGISTRY}
ASSUMPTION_NAMES = tuple(BY_NAME)
# User name -> (Assumptions field, scale from the user's unit to SI); kept for callers.
ASSUMPTION_UNITS = {a.name: (a.field, 1.0 / a.scale) for a in REGISTRY}
# What the training model reads (docs/model.md, "Training step"): its own assumptions and the
# serving model's per-operator ones (efficiencies, overheads, links, memory reserve).
TRAINING_NAMES = (
    "efficiency",
    "attention_efficiency",
    "expert_efficiency",
    "bandwidth_efficiency",
    "layer_overhead_us",
    "memory_reserve",
    "link_efficiency",
    "link_latency_us",
    "network_efficiency",
    "network_latency_us",
    "expert_imbalance",  # MoE with ep > 1: the busiest expert rank's routed tokens
    *(a.name for a in REGISTRY if a.models == "training"),
)


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
            raise ValueError(f"unknown {a.label} {echo(value)} (known: {', '.join(a.choices)})")
        return
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    low, high = a.low * (1 - slack), a.high * (1 + slack)
    if not (ok and math.isfinite(value) and low <= value <= high):
        unit = f" {a.unit}" if a.unit else ""
        raise ValueError(
            f"{a.name} must be a number from {a.low:g} to {a.high:g}{unit}, got {echo(value)}"
        )


@dataclass(frozen=True, slots=True)
class Assumptions:
    """Everything the models assume beyond the catalogue, in SI units; REGISTRY's defaults.

    `dispatch_overhead_s`, `link_latency_s` and `network_latency_s` None mean "the
    catalogue's figure"; `attention_efficiency`, `expert_efficiency` and `fp8_efficiency` None
    mean "the compute efficiency", `fp4_efficiency` None the 8-bit GEMMs';
    `prefill_layer_overhead_s` None means "the layer overhead".
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
    fp4_efficiency: float | None = None  # None: the 8-bit GEMMs' efficiency
    # Marlin dequantises each 4-bit weight once per 64-token slice in ~1.5 vector instructions
    # beside 64 tensor-core MACs: (1.5/128)/(64/2048) = 0.375 on Hopper (docs/model.md).
    dequant_overhead: float = 0.375
    kv_reuse: float = 1.0  # accepted for old profiles and scripts; not used (a note says so)
    kv_bandwidth_efficiency: float = 1.0  # KV reads at this share of the achieved bandwidth
    prefill_layer_overhead_s: float | None = None  # None: layer_overhead_s
    sequence_overhead_s: float = 0.0
    network_efficiency: float = 1.0
    network_latency_s: float | None = None
    expert_imbalance: float = 1.2  # the busiest expert rank's tokens over the mean (ep > 1)
    grouped_gemm_tokens: float = 90.0  # n0: n tokens per expert run at n/(n + n0)
    kernel_curves: str = "none"  # the stack whose GEMM curves transfer efficiencies (none: off)
    kernel_reference: str = "H100"  # the accelerator the GEMM efficiencies are fitted on
    overlap_fraction: float = 1.0
    expert_overlap: float = 0.0  # share of a layer's compute hiding its MoE all-to-alls
    moe_dispatcher: str = "alltoall"  # training: Megatron-Core's MoE token dispatcher
    tp_overlap: float = 0.0  # share of a layer's GEMMs hiding its tensor-parallel collectives
    dropout: float = 0.1  # training: hidden and attention dropout (masks kept when above 0)
    gradient_bytes: float = 2.0  # per gradient element held and reduced over data parallelism
    optimizer_moment_bytes: float = 4.0  # each of Adam's two moments per parameter
    fp8_saved_bytes: float = 1.0  # an fp8 GEMM's input kept for the backward pass, per element
    moe_act_input_bytes: float = 2.0  # an expert's SwiGLU input kept, per element
    attention_output_bytes: float = 2.0  # attention's output kept, per element
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
            f"unknown assumption {echo(unknown[0])} (known: {', '.join(ASSUMPTION_NAMES)})"
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
