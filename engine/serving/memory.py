"""The memory a device gives its weights and KV pool: one rule per serving stack.

Every number that depends on the KV pool (the static batch's memory check and largest batch,
the load simulator's pool, the planner's capacity) reads `usable_bytes`, so a deployment has
one pool. The pool is `usable − weights`. Three rules (engine/catalog/scheduler.py
KV_MEMORY_RULES; docs/model.md, "The KV pool"), with f = 1 − memory_reserve:

- "capacity": f × capacity (the tutorial's rule: nothing else is set aside);
- "total", vLLM: f × capacity − activations − workspace (at least 0).
  `gpu_memory_utilization` (0.9) is a share of the device's total memory; vLLM profiles one
  forward pass of `max_num_batched_tokens` dummy tokens and gives the KV cache what is left of
  that share after the weights, the activation peak and the non-torch memory (vllm/worker/worker.py,
  `determine_num_available_blocks`; https://docs.vllm.ai/en/stable/configuration/conserving_memory.html);
- "free", TensorRT-LLM: weights + f × (capacity − weights − activations − workspace); weights
  beyond capacity − activations − workspace leave nothing free, and usable is that remainder.
  `free_gpu_memory_fraction` (0.9) is a share of the memory still free after the model, its
  activations and workspaces are allocated
  (https://nvidia.github.io/TensorRT-LLM/reference/memory.html).

Activations at the token budget: one step of `max_batched_tokens` tokens holds, per token, the
residual stream and about three hidden-sized buffers (normed input, attention output, the
projection's output: 4 × hidden) and the gated MLP's up, gate and activated intermediate on
this device (3 × ffn / tp), in 16-bit activations. Under attention data parallelism an MoE
layer gathers every rank's tokens, so its buffers hold dp × the budget (TensorRT-LLM sizes its
MoE for max_num_tokens × dp: "The maximum number of tokens in MoE are multiplied by DP size
when attention DP is enabled", tensorrt_llm/_torch/modules/fused_moe/fused_moe_cutlass.py at
7b437aaa73bf5a44b1102aee5c631074da763b8f).
"""

from __future__ import annotations

from engine.catalog.scheduler import KV_MEMORY_RULES, SchedulerDefaults

RULE_CODES = {rule: float(i) for i, rule in enumerate(KV_MEMORY_RULES)}  # kernel arrays
# CUDA graphs and library (cuBLAS, NCCL) workspaces per device: vLLM logs its captured graphs
# at a few hundred MB to about 2 GiB; TensorRT-LLM reserves its own workspace for the same.
# 1 GiB, set aside under the "total" and "free" rules only.
RUNTIME_WORKSPACE_BYTES = float(2**30)
HIDDEN_BUFFERS = 4.0  # hidden-sized activations per token at the peak
MLP_BUFFERS = 3.0  # up, gate and activated intermediate (per device: ffn / tp each)


def activation_bytes_per_token(s, lay, xp) -> object:
    """Bytes of activations one token of a step holds at the peak on one device; an MoE layer
    under attention data parallelism (`lay.dp` ranks) holds every rank's tokens, gathered."""
    gathered = xp.where(s.experts_per_token > 0, lay.dp, 1.0)
    width = xp.maximum(s.ffn, s.experts_per_token * s.expert_ffn * gathered)  # the widest MLP
    return (HIDDEN_BUFFERS * s.hidden * gathered + MLP_BUFFERS * width / lay.tp) * lay.act_bytes


def runtime_bytes(dev, activations) -> object:
    """Bytes a stack's rule sets aside for the runtime before the reserve: the activations at
    the token budget and the workspace (0 under the capacity rule, whose budget and workspace
    are 0: `rule_values`)."""
    return activations + dev.workspace


def usable_bytes(dev, weights, activations, xp) -> object:
    """Bytes the weights and the KV pool may use on one device under the stack's rule
    (`dev.kv_memory`, a RULE_CODES value; `activations` at the token budget)."""
    share = 1.0 - dev.reserve
    plain = dev.capacity * share
    runtime = runtime_bytes(dev=dev, activations=activations)
    total = xp.maximum(plain - runtime, 0.0)
    # the share of what is free once the weights and the runtime are in; weights that do not
    # fit leave nothing free, and the usable memory is what the runtime leaves (never more
    # than the capacity, as the unclamped rule gave: weights + share × a negative)
    left = dev.capacity - runtime
    free = xp.minimum(weights + share * xp.maximum(left - weights, 0.0), xp.maximum(left, 0.0))
    return xp.where(
        dev.kv_memory == RULE_CODES["free"],
        free,
        xp.where(dev.kv_memory == RULE_CODES["total"], total, plain),
    )


def rule_values(sched: SchedulerDefaults | None) -> dict[str, float]:
    """The Device fields of a stack's KV-pool rule: its code, token budget and workspace."""
    if sched is None or sched.kv_memory == "capacity":
        return {"kv_memory": 0.0, "budget_tokens": 0.0, "workspace": 0.0}
    return {
        "kv_memory": RULE_CODES[sched.kv_memory],
        "budget_tokens": float(sched.max_batched_tokens),
        "workspace": RUNTIME_WORKSPACE_BYTES,
    }
