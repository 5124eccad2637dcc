"""A serving stack's scheduler defaults: the `[scheduler]` table of a profile.

A continuous-batching server is bounded by its scheduler as much as by its chips: how many
sequences run at once (`max_num_seqs`: vLLM's name; TensorRT-LLM's `max_batch_size`), how many
new tokens one step may carry (`max_batched_tokens`: vLLM's `max_num_batched_tokens`,
TensorRT-LLM's `max_num_tokens`), whether a prompt may be split across steps (chunked prefill;
TensorRT-LLM's chunked context), the KV-cache block (vLLM's `block_size`, TensorRT-LLM's
`tokens_per_block`) and how the KV pool admits requests (`kv_policy`):

- "on_demand": vLLM's paged KV cache (Kwon et al., SOSP 2023): a request is admitted when its
  prompt's blocks are free (less a small watermark), decoding takes one more block every
  `block_size` tokens, and when none is left the newest running request is preempted and later
  recomputed.
- "reserve": TensorRT-LLM's default capacity scheduler, GUARANTEED_NO_EVICT: a request is
  admitted only when the blocks of its whole prompt and output are free, so none is ever evicted.

A profile records the stack whose defaults it carries, with the sources (URLs) in `sources`;
a profile without the table uses `DEFAULT_SCHEDULER` (vLLM's). engine/load reads it; every
value can be overridden per call. See docs/model.md, "Serving under load".
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

from engine.checks import check_whole

KV_POLICIES = ("on_demand", "reserve")
# How the stack sizes its KV pool (engine/serving/memory.py; docs/model.md, "The KV pool"):
# "capacity": capacity × (1 − memory_reserve), less the weights (the tutorial's rule);
# "total": vLLM's gpu_memory_utilization, a share of the total memory less the weights, the
# profiled activation peak and the CUDA graphs; "free": TensorRT-LLM's
# free_gpu_memory_fraction, a share of what is free once weights, activations and workspace
# are allocated.
KV_MEMORY_RULES = ("capacity", "total", "free")
MAX_NUM_SEQS = 16_384  # sequences per step: 8x TensorRT-LLM's default 2,048
MAX_BATCHED_TOKENS = 1_048_576  # new tokens per step
MAX_BLOCK_SIZE = 1024  # tokens per KV block
MAX_WATERMARK = 0.5
VLLM_SOURCES = (
    # EngineArgs.get_batch_defaults: the OpenAI-compatible server's max_num_seqs 256 and
    # max_num_batched_tokens 2048 (GPUs under 70 GiB, and A100; larger GPUs such as H100 get
    # 1024 and 8192); the V1 engine always chunks prefills.
    "https://github.com/vllm-project/vllm/blob/main/vllm/engine/arg_utils.py",
    # CacheConfig.block_size: 16 tokens on CUDA.
    "https://docs.vllm.ai/en/stable/api/vllm/config/cache/",
    # BlockSpaceManager(watermark=0.01): 1 % of the blocks kept free at admission.
    "https://github.com/vllm-project/vllm/blob/v0.2.7/vllm/core/block_manager.py",
)


OVERRIDABLE = (
    "max_num_seqs",
    "max_batched_tokens",
    "chunked_prefill",
    "block_size",
    "kv_policy",
    "watermark",
)


@dataclass(frozen=True, slots=True)
class SchedulerDefaults:
    """A serving stack's scheduler settings (checked when built)."""

    stack: str = "vLLM"
    release: str = "V1 engine, OpenAI-compatible server"
    max_num_seqs: int = 256
    max_batched_tokens: int = 2048
    chunked_prefill: bool = True
    block_size: int = 16
    kv_policy: str = "on_demand"
    watermark: float = 0.01  # fraction of the KV pool left free when admitting (on_demand)
    sources: tuple[str, ...] = VLLM_SOURCES
    kv_memory: str = "capacity"  # how the KV pool is sized (KV_MEMORY_RULES)
    # Under pipeline parallelism a batch is in flight per stage, each with its own token budget;
    # max_num_seqs bounds each of them (TensorRT-LLM: max_batch_size × micro-batches) or all of
    # them together (False: vLLM's V1 engine, one scheduler feeding a queue of pp batches).
    seqs_per_stage: bool = False

    def __post_init__(self) -> None:
        for name, value in (("stack", self.stack), ("release", self.release)):
            if not isinstance(value, str) or len(value) > 100:
                raise ValueError(f"{name} must be text of at most 100 characters")
        for name in OVERRIDABLE:
            check_setting(name, getattr(self, name))
        if not isinstance(self.seqs_per_stage, bool):
            raise ValueError(f"seqs_per_stage must be true or false, got {self.seqs_per_stage!r}")
        if self.kv_memory not in KV_MEMORY_RULES:
            raise ValueError(
                f"kv_memory must be one of {', '.join(KV_MEMORY_RULES)}, got {self.kv_memory!r}"
            )
        if len(self.sources) > 10 or not all(isinstance(s, str) for s in self.sources):
            raise ValueError("sources must be a list of at most 10 URLs")

    @property
    def max_running(self) -> int:
        """Sequences that run at once: max_num_seqs, and at most max_batched_tokens (every
        running sequence puts one token in each step, so a token budget below the sequence
        limit caps the batch: TensorRT-LLM deployments set max_num_tokens below
        max_batch_size, e.g. 2,048 and 1,536)."""
        return min(self.max_num_seqs, self.max_batched_tokens)

    def as_dict(self) -> dict[str, object]:
        return asdict(self) | {"sources": list(self.sources)}


def check_setting(name: str, value: object) -> object:
    """One scheduler setting, checked (the value, or ValueError naming it)."""
    if name == "max_num_seqs":
        return check_whole(value, name, high=MAX_NUM_SEQS)
    if name == "max_batched_tokens":
        return check_whole(value, name, high=MAX_BATCHED_TOKENS)
    if name == "block_size":
        return check_whole(value, name, high=MAX_BLOCK_SIZE)
    if name == "chunked_prefill":
        if not isinstance(value, bool):
            raise ValueError(f"chunked_prefill must be true or false, got {value!r}")
        return value
    if name == "kv_policy":
        if value not in KV_POLICIES:
            raise ValueError(
                f"kv_policy must be one of {', '.join(KV_POLICIES)}, got {value!r}"[:200]
            )
        return value
    if name == "watermark":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not (ok and math.isfinite(value) and 0 <= value <= MAX_WATERMARK):
            raise ValueError(f"watermark must be a fraction from 0 to {MAX_WATERMARK}")
        return value
    raise ValueError(f"unknown scheduler setting {name!r}")


DEFAULT_SCHEDULER = SchedulerDefaults()
SCHEDULER_KEYS = tuple(f.name for f in fields(SchedulerDefaults))


def scheduler_from_table(table: object, label: str) -> SchedulerDefaults:
    """A profile's `[scheduler]` table (missing keys take vLLM's defaults); errors name it."""
    if not isinstance(table, dict):
        raise ValueError(f"{label}: [scheduler] must be a table")
    unknown = sorted(set(table) - set(SCHEDULER_KEYS))
    if unknown:
        raise ValueError(
            f"{label}: unknown scheduler key {unknown[0]!r} (known: {', '.join(SCHEDULER_KEYS)})"
        )
    values = dict(table)
    if "sources" in values:
        if not isinstance(values["sources"], list):
            raise ValueError(f"{label}: [scheduler] sources must be a list of URLs")
        values["sources"] = tuple(values["sources"])
    try:
        return SchedulerDefaults(**values)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{label}: [scheduler] {exc}") from None


def with_overrides(base: SchedulerDefaults, **overrides: object) -> SchedulerDefaults:
    """`base` with the OVERRIDABLE values that are not None replaced (checked)."""
    unknown = sorted(set(overrides) - set(OVERRIDABLE))
    if unknown:
        raise ValueError(f"unknown scheduler setting {unknown[0]!r}")
    values = {k: v for k, v in overrides.items() if v is not None}
    if not values:
        return base
    fixed = {f.name: getattr(base, f.name) for f in fields(SchedulerDefaults)} | values
    fixed["release"] = base.release + " (overridden)" if base.release else "overridden"
    return SchedulerDefaults(**fixed)


def scheduler_toml_lines(s: SchedulerDefaults, value) -> list[str]:
    """The `[scheduler]` table's TOML lines (`value` writes one TOML value)."""
    lines = ["[scheduler]"]
    for f in fields(SchedulerDefaults):
        v = getattr(s, f.name)
        lines.append(f"{f.name} = {value(list(v) if f.name == 'sources' else v)}")
    return lines
