"""Training scenarios: a run, its parallel layout, the layouts a search tries, and failures.

`TrainRun` is what `train`, `train_search`, `training_operators` and `scaling_overheads` take: the
model (a catalogue id, a ModelSpec with shapes or an Architecture) and the accelerator (an id or a
HardwareSpec); the cluster, `gpus` GPUs (one count for `train`; several for `train_search` and
`scaling_overheads`, each count a cluster of its own); a step's global batch of
`global_batch_size` sequences of `seq_len` tokens; the number format of the GEMMs (`precision`,
fp8 under an `fp8_recipe`, its weights kept and gathered in fp8 with `fp8_param_gather`) and the
`attention` kernel; a training profile (its assumptions unless
`assumptions` is given) with `overrides` by the user names of the assumptions the training model
reads (engine/assumptions.py TRAINING_NAMES); the catalogue ids are looked up in; and the
`token_budget` and `price_per_gpu_hour` (USD; None: the catalogue's list price) that the time and
cost to train are counted against.

`TrainLayout` splits the GPUs: tp (tensor, with sequence parallelism) × pp (pipeline stages of
vp virtual stages each, the layers of the first and last given or balanced) × cp (context) × dp,
with ep (experts, MoE; their own tensor parallelism etp, tp by default) folded into tp·cp·dp,
micro-batches of `micro_batch_size` sequences, a ZeRO stage, a recomputation mode and a pipeline
schedule (1F1B, or DeepSeek's DualPipe or DualPipeV). `LayoutSpace` is the layouts
`train_search` tries: each field None (the search's defaults), one value or several.
`Failures` is how often a GPU fails, how long a checkpoint takes to write and how long the job
runs (`scaling_overheads`, `reliability`; MLSys·im tutorial 06).

Each class checks itself in `__post_init__` with the messages every entry point gives. What needs
the catalogue (the model's shapes, the accelerator) and the rules that tie a layout to a model
(tp dividing the heads, dp whole, ...) are checked where they meet (engine/training/setup.py,
engine/training/config.py). docs/model.md, "Training step".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import ClassVar

import numpy as np

from engine.assumptions import TRAINING_NAMES, Assumptions
from engine.catalog.profiles import DEFAULT_TRAINING_PROFILE, Profile, get_training_profile
from engine.catalog.reader import Catalog
from engine.checks import MAX_BATCH, MAX_DEGREE, MAX_TOKENS, as_list, check_whole
from engine.scenarios.bind import Fields
from engine.scenarios.deployment import (
    HardwareRef,
    ModelRef,
    WithAssumptions,
    check_assumptions,
    check_catalog,
    check_overrides,
)

RECOMPUTE = ("none", "selective", "full")  # Korthikanti et al. 2022
# Pipeline schedules: Megatron-LM's 1F1B (interleaved with vp > 1; Narayanan et al. 2021),
# DeepSeek's DualPipe (DeepSeek-V3 report §3.2.1; github.com/deepseek-ai/DualPipe: each device
# holds a stage and its mirror, micro-batches enter from both ends) and its cut-in-half DualPipeV
# (the same repository; torch.distributed.pipelining's ScheduleDualPipeV: 2·pp stages laid out
# in a V, device i holding stages i and 2·pp − 1 − i, every micro-batch entering at device 0).
PP_SCHEDULES = ("1f1b", "dualpipe", "dualpipev")
# How context parallelism exchanges keys and values: Megatron-Core's --cp-comm-type (p2p: the
# ring, each KV block passed on under the attention of the one before, its default; allgather:
# every rank's KV gathered before attention, Llama 3's, §3.3.2; a2a: DeepSpeed-Ulysses, the
# sequence traded for heads by all-to-alls around attention).
CP_COMM_TYPES = ("p2p", "allgather", "a2a")
# What selective recomputation runs again: Megatron-Core's --recompute-modules (default
# core_attn), each its own bit of the kernel's mask (engine/training/memory.py, compute.py).
RECOMPUTE_MODULES = (
    "core_attn",  # the attention core (its score matrices, unfused)
    "moe_act",  # the routed experts' activation function (its output discarded)
    "layernorm",  # the two norms before attention and the MLP (their outputs discarded)
    "mla_up_proj",  # MLA's up-projections and rope (the per-head queries, keys, values)
    "mlp",  # the dense MLP (its input kept)
    "moe",  # the MoE layer: router, routed and shared experts, dispatch and combine
    "shared_experts",  # the MoE layer's shared experts
)
DEFAULT_RECOMPUTE_MODULES = ("core_attn",)
ZERO_STAGES = (0, 1, 2, 3)  # Rajbhandari et al. 2020; 0: plain data parallelism
TRAIN_PRECISIONS = ("bf16", "fp16", "fp8")  # fp8: GEMMs in fp8, everything else 16-bit
# fp8 scaling recipes (engine/training/numerics.py); the default for precision fp8
FP8_RECIPES = ("delayed", "current", "blockwise", "mxfp8")
DEFAULT_FP8_RECIPE = "delayed"
ATTENTION_KERNELS = ("flash", "unfused")  # FlashAttention; the score matrices through memory
MAX_GPUS = 1_000_000
# Count fields and the most each may be (engine/checks.py gives the message).
LIMITS = {
    "gpus": MAX_GPUS,
    "tp": MAX_DEGREE,
    "pp": MAX_DEGREE,
    "cp": MAX_DEGREE,
    "vp": MAX_DEGREE,
    "ep": MAX_DEGREE,
    "micro_batch_size": MAX_BATCH,
    "global_batch_size": MAX_BATCH * 1000,
    "seq_len": MAX_TOKENS,
    "etp": MAX_DEGREE,
    "first_stage_layers": MAX_DEGREE,
    "last_stage_layers": MAX_DEGREE,
}
LAYOUT_COUNTS = ("tp", "pp", "cp", "vp", "ep", "micro_batch_size")
STAGE_COUNTS = ("first_stage_layers", "last_stage_layers")  # None: balanced
DEFAULT_TOKEN_BUDGET = 1e12  # tokens
MAX_TOKEN_BUDGET = 1e17  # tokens; far beyond any published run (Llama 3: 1.5e13)
MAX_PRICE = 1e6  # USD per GPU-hour (excluded)
GPU_MTTF_HOURS = 50_000.0  # the tutorial's single-GPU MTTF
CHECKPOINT_S = 60.0  # the tutorial's checkpoint write time
JOB_HOURS = 30 * 24.0  # the tutorial's 30-day run


def check_count(value: object, name: str) -> int:
    """One count of LIMITS (gpus, tp, ..., seq_len) as an int."""
    return check_whole(value, name, high=LIMITS[name])


def check_counts(values: object, name: str) -> tuple[int, ...]:
    """One count or several, each checked, as a sorted tuple without repeats."""
    return tuple(sorted({check_count(v, name) for v in as_list(values, name)}))


def check_recompute(value: object) -> str:
    if value not in RECOMPUTE:
        raise ValueError(f"recompute must be one of {', '.join(RECOMPUTE)}, got {value!r}"[:200])
    return value


def check_pp_schedule(value: object) -> str:
    if value not in PP_SCHEDULES:
        raise ValueError(
            f"pp_schedule must be one of {', '.join(PP_SCHEDULES)}, got {value!r}"[:200]
        )
    return value


def check_cp_comm_type(value: object) -> str:
    if value not in CP_COMM_TYPES:
        raise ValueError(
            f"cp_comm_type must be one of {', '.join(CP_COMM_TYPES)}, got {value!r}"[:200]
        )
    return value


def check_recompute_modules(value: object) -> tuple[str, ...]:
    """Module names (a list, or one comma-separated string) as a tuple in RECOMPUTE_MODULES'
    order, at least one, each known."""
    items = value.split(",") if isinstance(value, str) else as_list(value, "recompute_modules")
    names = {str(v).strip() for v in items} - {""}
    unknown = sorted(n for n in names if n not in RECOMPUTE_MODULES)
    if unknown or not names:
        known = ", ".join(RECOMPUTE_MODULES)
        got = ", ".join(unknown) if unknown else "none"
        raise ValueError(f"recompute_modules must be some of {known}, got {got}"[:240])
    return tuple(m for m in RECOMPUTE_MODULES if m in names)


def modules_mask(modules: tuple[str, ...]) -> int:
    """The kernel's bit mask of `modules` (bit i: RECOMPUTE_MODULES[i])."""
    return sum(1 << i for i, m in enumerate(RECOMPUTE_MODULES) if m in modules)


def check_attention(value: object) -> str:
    if value not in ATTENTION_KERNELS:
        known = ", ".join(ATTENTION_KERNELS)
        raise ValueError(f"attention must be one of {known}, got {value!r}"[:200])
    return value


def check_zero(value: object) -> int:
    if isinstance(value, bool) or value not in ZERO_STAGES:
        raise ValueError(f"zero must be one of 0, 1, 2, 3 (the ZeRO stage), got {value!r}"[:200])
    return int(value)


def check_train_precision(value: object) -> str:
    if value not in TRAIN_PRECISIONS:
        known = ", ".join(TRAIN_PRECISIONS)
        raise ValueError(f"training precision must be one of {known}, got {value!r}"[:200])
    return value


def check_fp8_recipe(value: object, precision: str) -> str | None:
    """The recipe of an fp8 run (None: the default), None for a 16-bit one (a recipe given
    with a 16-bit precision is refused, not ignored)."""
    if precision != "fp8":
        if value is not None:
            raise ValueError(f"fp8_recipe applies to precision fp8 only, not {precision}")
        return None
    if value is None:
        return DEFAULT_FP8_RECIPE
    if value not in FP8_RECIPES:
        known = ", ".join(FP8_RECIPES)
        raise ValueError(f"fp8_recipe must be one of {known}, got {value!r}"[:200])
    return value


def check_param_gather(value: object, precision: str) -> None:
    """`fp8_param_gather`: a bool, and True only for an fp8 run."""
    if not isinstance(value, bool):
        raise ValueError(f"fp8_param_gather must be true or false, got {value!r}"[:200])
    if value and precision != "fp8":
        raise ValueError(f"fp8_param_gather applies to precision fp8 only, not {precision}")


def check_budget(token_budget: object, price: object) -> tuple[float, float | None]:
    """The token budget (1 to 1e17 tokens) and a price per GPU-hour (> 0) if one is given."""
    ok = isinstance(token_budget, int | float) and not isinstance(token_budget, bool)
    if not (ok and math.isfinite(token_budget) and 1 <= token_budget <= MAX_TOKEN_BUDGET):
        raise ValueError(
            f"token_budget must be 1 to {MAX_TOKEN_BUDGET:g} tokens, got {token_budget!r}"[:200]
        )
    if price is None:
        return float(token_budget), None
    ok = isinstance(price, int | float) and not isinstance(price, bool)
    if not (ok and math.isfinite(price) and 0 < price < MAX_PRICE):
        raise ValueError(f"price_per_gpu_hour must be a number of USD > 0, got {price!r}"[:200])
    return float(token_budget), float(price)


def check_positive(name: str, value: object) -> float:
    """A finite number above 0, as a float."""
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name}: must be a positive number, got {value!r}")
    return float(value)


def check_gpus(value: object) -> int | tuple[int, ...] | None:
    """A GPU count, several of them (in the order given), or None (not given)."""
    if value is None:
        return None
    try:
        single = np.ndim(value) == 0
    except ValueError:  # a ragged nest of lists: each item is checked below
        single = False
    if single:
        return check_count(value, "gpus")
    return tuple(check_count(g, "gpus") for g in as_list(value, "gpus"))


def check_training_overrides(overrides: object, assumptions: Assumptions | None) -> tuple:
    """Overrides by user name, only of assumptions the training model reads (None values
    dropped), then checked as every assumption is (engine.scenarios.deployment)."""
    pairs = overrides.items() if isinstance(overrides, Mapping) else overrides or ()
    unused = sorted(k for k, v in pairs if v is not None and k not in TRAINING_NAMES)
    if unused:
        known = ", ".join(TRAINING_NAMES)
        raise ValueError(f"the training model does not use {unused[0]!r} (it reads: {known})")
    return check_overrides(overrides, assumptions)


@dataclass(frozen=True, slots=True)
class TrainRun(WithAssumptions):
    """A model trained on `gpus` GPUs, a step a global batch of `global_batch_size` sequences of
    `seq_len` tokens, under a training profile; the budget and price the cost is counted on.

    `gpus` and `global_batch_size` may be left None where a function does not read them
    (`training_operators`: one micro-batch) or sets them (`scaling_overheads`: the tutorial's
    max(64, gpus) sequences); `train` and `train_search` name them when missing.
    """

    model: ModelRef
    hardware: HardwareRef
    _: KW_ONLY
    gpus: int | tuple[int, ...] | None = None
    global_batch_size: int | None = None
    seq_len: int
    precision: str = "bf16"
    fp8_recipe: str | None = None
    fp8_param_gather: bool = False
    attention: str = "flash"
    profile: str | Profile = DEFAULT_TRAINING_PROFILE
    assumptions: Assumptions | None = None
    overrides: tuple[tuple[str, object], ...] = field(default=())
    catalog: Catalog | None = None
    token_budget: float = DEFAULT_TOKEN_BUDGET
    price_per_gpu_hour: float | None = None

    ARG: ClassVar[str] = "run"
    LEADING: ClassVar[tuple[str, ...]] = ("model", "hardware")

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpus", check_gpus(self.gpus))
        if self.global_batch_size is not None:
            batch = check_count(self.global_batch_size, "global_batch_size")
            object.__setattr__(self, "global_batch_size", batch)
        object.__setattr__(self, "seq_len", check_count(self.seq_len, "seq_len"))
        object.__setattr__(self, "precision", check_train_precision(self.precision))
        recipe = check_fp8_recipe(self.fp8_recipe, self.precision)
        object.__setattr__(self, "fp8_recipe", recipe)
        check_param_gather(self.fp8_param_gather, self.precision)
        object.__setattr__(self, "attention", check_attention(self.attention))
        chosen = get_training_profile(self.profile)  # a Profile is kept, a name normalised
        object.__setattr__(self, "profile", self.profile if chosen is self.profile else chosen.name)
        check_assumptions(self.assumptions)
        overrides = check_training_overrides(self.overrides, self.assumptions)
        object.__setattr__(self, "overrides", overrides)
        check_catalog(self.catalog)
        budget, price = check_budget(self.token_budget, self.price_per_gpu_hour)
        object.__setattr__(self, "token_budget", budget)
        object.__setattr__(self, "price_per_gpu_hour", price)

    @property
    def gpu_counts(self) -> tuple[int, ...]:
        """The cluster sizes: `gpus` as a tuple (empty when not given)."""
        if self.gpus is None:
            return ()
        return self.gpus if isinstance(self.gpus, tuple) else (self.gpus,)

    def needs(self, *names: str) -> None:
        """ValueError naming the fields of `names` this run leaves out (None)."""
        missing = [name for name in names if getattr(self, name) is None]
        if missing:
            raise ValueError(f"TrainRun: give {', '.join(missing)}")

    def one_cluster(self) -> int:
        """The run's one GPU count (ValueError when none or several are given)."""
        self.needs("gpus")
        counts = self.gpu_counts
        if len(counts) > 1:
            raise ValueError(
                f"gpus: one count for one training step, got {len(counts)} "
                "(train_search and scaling_overheads take several)"
            )
        return counts[0]


@dataclass(frozen=True, slots=True)
class TrainLayout(Fields):
    """How a run splits its GPUs: tp × pp (× vp virtual stages) × cp × dp, an MoE layer's
    etp × ep × edp folded into the same tp·cp·dp (etp None: tp);
    micro-batches of `micro_batch_size` sequences; a ZeRO stage and a recomputation mode (with
    selective, the modules it runs again: Megatron-Core's --recompute-modules); the layers of
    the first and the last pipeline stage (Megatron-LM's
    --decoder-first/last-pipeline-num-layers; None: balanced, the ends short first); the
    pipeline schedule (1f1b: Megatron-LM's, interleaved with vp > 1; dualpipe: DeepSeek's;
    dualpipev: its cut-in-half V); how context parallelism exchanges keys and values
    (Megatron-Core's --cp-comm-type: p2p, allgather, a2a)."""

    tp: int = 1
    pp: int = 1
    cp: int = 1
    vp: int = 1
    ep: int = 1
    micro_batch_size: int = 1
    zero: int = 0
    recompute: str = "none"
    first_stage_layers: int | None = None
    last_stage_layers: int | None = None
    recompute_modules: tuple[str, ...] = DEFAULT_RECOMPUTE_MODULES
    etp: int | None = None  # the experts' tensor parallelism (None: tp, Megatron-Core's default)
    pp_schedule: str = "1f1b"  # or dualpipe, dualpipev (PP_SCHEDULES)
    cp_comm_type: str = "p2p"  # or allgather, a2a (CP_COMM_TYPES; with cp > 1)

    ARG: ClassVar[str] = "layout"

    def __post_init__(self) -> None:
        for name in LAYOUT_COUNTS:
            object.__setattr__(self, name, check_count(getattr(self, name), name))
        for name in (*STAGE_COUNTS, "etp"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, check_count(getattr(self, name), name))
        object.__setattr__(self, "zero", check_zero(self.zero))
        object.__setattr__(self, "recompute", check_recompute(self.recompute))
        object.__setattr__(self, "pp_schedule", check_pp_schedule(self.pp_schedule))
        object.__setattr__(self, "cp_comm_type", check_cp_comm_type(self.cp_comm_type))
        modules = check_recompute_modules(self.recompute_modules)
        if self.recompute != "selective" and modules != DEFAULT_RECOMPUTE_MODULES:
            raise ValueError(
                "recompute_modules applies to recompute selective (Megatron-Core's "
                f"--recompute-granularity selective), not {self.recompute}"
            )
        object.__setattr__(self, "recompute_modules", modules)


@dataclass(frozen=True, slots=True)
class LayoutSpace(Fields):
    """The layouts `train_search` tries: every combination of the values of each field (one or
    several, sorted; None: the search's defaults, every ZeRO stage, every recomputation mode);
    `recompute_modules`, one set, is what its selective layouts run again; `pp_schedule` the
    pipeline schedules tried (1F1B only unless asked), `cp_comm_type` the context-parallel
    exchanges (p2p only unless asked)."""

    tp: tuple[int, ...] | None = None
    pp: tuple[int, ...] | None = None
    cp: tuple[int, ...] | None = None
    vp: tuple[int, ...] | None = None
    ep: tuple[int, ...] | None = None
    micro_batch_size: tuple[int, ...] | None = None
    zero: tuple[int, ...] | None = None
    recompute: tuple[str, ...] | None = None
    recompute_modules: tuple[str, ...] = DEFAULT_RECOMPUTE_MODULES
    etp: tuple[int, ...] | None = None  # None: each layout's tp
    pp_schedule: tuple[str, ...] = ("1f1b",)  # the pipeline schedules to try
    cp_comm_type: tuple[str, ...] = ("p2p",)  # how the cp > 1 layouts exchange keys and values

    ARG: ClassVar[str] = "space"

    def __post_init__(self) -> None:
        for name in (*LAYOUT_COUNTS, "etp"):
            values = getattr(self, name)
            if values is not None:
                object.__setattr__(self, name, check_counts(values, name))
        if self.zero is not None:
            stages = {check_zero(z) for z in as_list(self.zero, "zero")}
            object.__setattr__(self, "zero", tuple(sorted(stages)))
        if self.recompute is not None:
            modes = {check_recompute(r) for r in as_list(self.recompute, "recompute")}
            object.__setattr__(self, "recompute", tuple(m for m in RECOMPUTE if m in modes))
        schedules = {check_pp_schedule(p) for p in as_list(self.pp_schedule, "pp_schedule")}
        object.__setattr__(self, "pp_schedule", tuple(p for p in PP_SCHEDULES if p in schedules))
        kinds = {check_cp_comm_type(k) for k in as_list(self.cp_comm_type, "cp_comm_type")}
        object.__setattr__(self, "cp_comm_type", tuple(k for k in CP_COMM_TYPES if k in kinds))
        modules = check_recompute_modules(self.recompute_modules)
        tried = RECOMPUTE if self.recompute is None else self.recompute
        if "selective" not in tried and modules != DEFAULT_RECOMPUTE_MODULES:
            raise ValueError(
                "recompute_modules applies to recompute selective, which this search does not "
                f"try (recompute {', '.join(tried)})"
            )
        object.__setattr__(self, "recompute_modules", modules)


@dataclass(frozen=True, slots=True)
class Failures(Fields):
    """A GPU's mean time to failure (hours), a checkpoint's write time (s) and the job's length
    (hours): the tutorial's defaults."""

    gpu_mttf_hours: float = GPU_MTTF_HOURS
    checkpoint_s: float = CHECKPOINT_S
    job_hours: float = JOB_HOURS

    ARG: ClassVar[str] = "failures"

    def __post_init__(self) -> None:
        for name in ("gpu_mttf_hours", "checkpoint_s", "job_hours"):
            object.__setattr__(self, name, check_positive(name, getattr(self, name)))
