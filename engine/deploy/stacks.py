"""Each serving stack's launch command from one deployment's settings.

The flags, by the stacks' own documentation (retrieved 2026-12):

- vLLM, `vllm serve MODEL` (https://docs.vllm.ai/en/stable/configuration/engine_args.html):
  --tensor-parallel-size, --pipeline-parallel-size, --enable-expert-parallel,
  --data-parallel-size, --max-num-seqs, --max-num-batched-tokens, --enable-chunked-prefill /
  --no-enable-chunked-prefill, --block-size, --gpu-memory-utilization, --dtype, --quantization
  fp8, --kv-cache-dtype fp8, --host, --port (8000).
- SGLang, `python -m sglang.launch_server` (https://docs.sglang.io/advanced_features/server_arguments.html):
  --model-path, --tp, --pp-size, --ep-size, --enable-dp-attention with --dp, --max-running-requests,
  --chunked-prefill-size (-1: off), --max-prefill-tokens, --page-size, --mem-fraction-static,
  --dtype, --quantization fp8, --kv-cache-dtype fp8_e4m3, --host, --port (30000).
- TensorRT-LLM, `trtllm-serve MODEL` (https://nvidia.github.io/TensorRT-LLM/commands/trtllm-serve/trtllm-serve.html):
  --backend pytorch, --tp_size, --pp_size, --ep_size, --max_batch_size, --max_num_tokens,
  --kv_cache_free_gpu_memory_fraction, --host, --port (8000); what has no flag goes in the YAML
  of --extra_llm_api_options (enable_chunked_prefill, enable_attention_dp,
  kv_cache_config.dtype, kv_cache_config.tokens_per_block, and the "on_demand" KV policy as
  scheduler_config.capacity_scheduler_policy MAX_UTILIZATION; the default,
  GUARANTEED_NO_EVICT, is the "reserve" policy;
  https://nvidia.github.io/TensorRT-LLM/1.0.0/commands/trtllm-serve/run-benchmark-with-trtllm-serve.html).

The memory share each stack gives weights and KV cache is 1 − the deployment's memory_reserve
(vLLM's gpu_memory_utilization, SGLang's mem_fraction_static, TensorRT-LLM's
kv_cache_free_gpu_memory_fraction: engine/serving/memory.py reads the same assumption). A number
format the stack cannot produce from the published checkpoint by a flag becomes a note: serve a
checkpoint already in that format.
"""

from __future__ import annotations

from dataclasses import dataclass, field

STACKS = ("vllm", "sglang", "trtllm")
CONFIG_PATH = "/config/extra-llm-api-config.yml"  # TensorRT-LLM's options file in the pod


@dataclass(frozen=True)
class Settings:
    """What a launch command says: the model, layout, formats, scheduler and memory share."""

    hf_id: str
    tp: int
    pp: int
    ep: int
    attention_dp: bool
    precision: str
    kv_precision: str
    max_num_seqs: int
    max_batched_tokens: int
    chunked_prefill: bool
    block_size: int
    memory_fraction: float
    kv_policy: str = "on_demand"  # engine/catalog/scheduler.py KV_POLICIES


@dataclass(frozen=True)
class Launch:
    """A stack's command (argv), its port and health path, an options file (TensorRT-LLM) and
    what the command cannot say (notes)."""

    stack: str
    argv: tuple[str, ...]
    port: int
    health_path: str
    config: dict = field(default_factory=dict)  # the --extra_llm_api_options YAML, or empty
    notes: tuple[str, ...] = ()


DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}
KV_FLAGS = {"vllm": "fp8", "sglang": "fp8_e4m3"}


def _formats(s: Settings, stack: str) -> tuple[list[str], list[str]]:
    """(the format flags, notes) of the weights and the KV cache."""
    flags, notes = [], []
    if s.precision in DTYPES and stack != "trtllm":
        flags += ["--dtype", DTYPES[s.precision]]
    elif s.precision == "fp8" and stack != "trtllm":
        flags += ["--quantization", "fp8"]  # quantized on load from the 16-bit checkpoint
    elif s.precision not in DTYPES:
        notes.append(
            f"weights in {s.precision}: serve a checkpoint already quantized to {s.precision} "
            "(give its Hugging Face id with --hf-id); the command sets no format flag"
        )
    if s.kv_policy == "reserve" and stack != "trtllm":
        notes.append(
            f"the profile's 'reserve' KV policy (TensorRT-LLM's GUARANTEED_NO_EVICT) has no "
            f"{stack} flag: {stack} admits on demand and preempts"
        )
    weights_kv = {"fp16": "fp16", "bf16": "bf16", "fp32": "fp32"}.get(s.precision)
    if s.kv_precision == "fp8" and stack in KV_FLAGS:
        flags += ["--kv-cache-dtype", KV_FLAGS[stack]]
    elif s.kv_precision not in ("fp8", weights_kv, "fp16", "bf16"):
        notes.append(f"KV cache in {s.kv_precision}: {stack} takes it from its own options")
    return flags, notes


def vllm(s: Settings) -> Launch:
    argv = ["vllm", "serve", s.hf_id, "--tensor-parallel-size", str(s.tp)]
    if s.pp > 1:
        argv += ["--pipeline-parallel-size", str(s.pp)]
    if s.ep > 1:
        argv += ["--enable-expert-parallel"]
    if s.attention_dp:  # data-parallel attention ranks: one engine per rank, tp 1 each
        argv[4] = "1"
        argv += ["--data-parallel-size", str(s.tp)]
    argv += ["--max-num-seqs", str(s.max_num_seqs)]
    argv += ["--max-num-batched-tokens", str(s.max_batched_tokens)]
    argv += ["--enable-chunked-prefill" if s.chunked_prefill else "--no-enable-chunked-prefill"]
    argv += ["--block-size", str(s.block_size)]
    argv += ["--gpu-memory-utilization", f"{s.memory_fraction:g}"]
    flags, notes = _formats(s, "vllm")
    argv += [*flags, "--host", "0.0.0.0", "--port", "8000"]
    return Launch(
        stack="vllm", argv=tuple(argv), port=8000, health_path="/health", notes=tuple(notes)
    )


def sglang(s: Settings) -> Launch:
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", s.hf_id, "--tp", str(s.tp)]
    if s.pp > 1:
        argv += ["--pp-size", str(s.pp)]
    if s.ep > 1:
        argv += ["--ep-size", str(s.ep)]
    if s.attention_dp:
        argv += ["--enable-dp-attention", "--dp", str(s.tp)]
    argv += ["--max-running-requests", str(s.max_num_seqs)]
    chunk = s.max_batched_tokens if s.chunked_prefill else -1
    argv += ["--chunked-prefill-size", str(chunk)]
    argv += ["--max-prefill-tokens", str(s.max_batched_tokens)]
    argv += ["--page-size", str(s.block_size)]
    argv += ["--mem-fraction-static", f"{s.memory_fraction:g}"]
    flags, notes = _formats(s, "sglang")
    argv += [*flags, "--host", "0.0.0.0", "--port", "30000"]
    return Launch(
        stack="sglang", argv=tuple(argv), port=30000, health_path="/health", notes=tuple(notes)
    )


def trtllm(s: Settings) -> Launch:
    argv = ["trtllm-serve", s.hf_id, "--backend", "pytorch", "--tp_size", str(s.tp)]
    argv += ["--pp_size", str(s.pp)]
    if s.ep > 1:
        argv += ["--ep_size", str(s.ep)]
    argv += ["--max_batch_size", str(s.max_num_seqs)]
    argv += ["--max_num_tokens", str(s.max_batched_tokens)]
    argv += ["--kv_cache_free_gpu_memory_fraction", f"{s.memory_fraction:g}"]
    kv_cache: dict = {"tokens_per_block": s.block_size}
    if s.kv_precision == "fp8":
        kv_cache["dtype"] = "fp8"
    config = {
        "enable_chunked_prefill": s.chunked_prefill,
        "enable_attention_dp": s.attention_dp,
        "kv_cache_config": kv_cache,
    }
    if s.kv_policy == "on_demand":  # vLLM's admission: fill the pool, evict when it overflows
        config["scheduler_config"] = {"capacity_scheduler_policy": "MAX_UTILIZATION"}
    argv += ["--extra_llm_api_options", CONFIG_PATH, "--host", "0.0.0.0", "--port", "8000"]
    _, notes = _formats(s, "trtllm")
    return Launch(
        stack="trtllm",
        argv=tuple(argv),
        port=8000,
        health_path="/health",
        config=config,
        notes=tuple(notes),
    )


BUILDERS = {"vllm": vllm, "sglang": sglang, "trtllm": trtllm}
