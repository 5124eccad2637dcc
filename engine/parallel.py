"""Several accelerators: tensor-parallel all-reduces, pipeline stages and memory per device.

Tensor parallelism (Shoeybi et al., Megatron-LM, 2019) splits every weight matrix, the heads
and the KV heads TP ways and adds two all-reduces of the step's activations per layer; a ring
all-reduce of N bytes over p devices moves 2·(p−1)/p·N bytes per device in 2·(p−1) hops
(Patarasuk and Yuan 2009). Pipeline parallelism splits the layers into PP stages that a token
passes in turn. The conventions (a static batch is one pipeline micro-batch) are in
docs/model.md, "Serving model". Floats or numpy arrays throughout (`xp`, as in engine/ops.py).
"""

from __future__ import annotations

from engine.ops import kv_bytes_per_token_layer


def ring_all_reduce_s(nbytes, devices, bandwidth, latency):
    """Ring all-reduce of `nbytes` over `devices`: 2·(p−1)/p·N/bw + 2·(p−1)·α (0 for p = 1).

    Args:
        nbytes: bytes each device contributes (and receives reduced).
        devices: p.
        bandwidth: per device, per direction, bytes/s (already scaled by the link efficiency).
        latency: per hop, seconds.
    """
    hops = devices - 1.0
    return 2.0 * hops / devices * nbytes / bandwidth + 2.0 * hops * latency


def send_s(nbytes, bandwidth, latency):
    """One point-to-point transfer (pipeline stage to the next): N/bw + α."""
    return nbytes / bandwidth + latency


def step_comm_s(s: dict, tokens, tp, pp, act_bytes, bandwidth, latency):
    """Communication of one forward step: two all-reduces of T·h activations per layer (TP),
    plus one activation transfer between each pair of consecutive stages (PP)."""
    nbytes = tokens * s["h"] * act_bytes
    all_reduce = 2.0 * s["L"] * ring_all_reduce_s(nbytes, tp, bandwidth, latency)
    return all_reduce + (pp - 1.0) * send_s(nbytes, bandwidth, latency)


def stage_layers(layers, pp, xp):
    """Layers on the fullest pipeline stage: ⌈L/PP⌉."""
    return xp.ceil(layers / pp)


def bubble_fraction(pp):
    """Idle share of each device when one static batch flows through PP stages: (PP−1)/PP."""
    return (pp - 1.0) / pp


def weight_bytes_per_device(ops, s: dict, pp, xp):
    """Weights held by a device of the fullest stage: ⌈L/PP⌉ mean layers (split TP ways, with
    the replicated parts whole), the final norm and one vocabulary table per stage at the ends
    (both tables when PP = 1 and the head is not tied)."""
    per_layer = sum(op.count * op.resident for op in ops if op.layers != "once") / s["L"]
    once = {op.name: op.resident for op in ops if op.layers == "once"}
    ends = once["embedding"] + once["final_norm"] + xp.where(pp > 1, 0.0, once["lm_head"])
    return per_layer * stage_layers(s["L"], pp, xp) + ends


def cached_tokens(s: dict, context, xp):
    """Σ over layers of the tokens each layer caches: global layers c, local ones min(c, w)."""
    return (s["L"] - s["n_local"]) * context + s["n_local"] * xp.minimum(context, s["w"])


def kv_bytes_per_device(s: dict, batch, context, kv_dev, pp, xp):
    """The KV cache of the fullest stage's device: its ⌈L/PP⌉ share of the layers."""
    per_layer = batch * cached_tokens(s, context, xp) * kv_dev / s["L"]
    return per_layer * stage_layers(s["L"], pp, xp)


def memory_terms(s, hw, sc, step, xp) -> dict:
    """Weights and KV cache (room for I + O tokens per sequence) on the fullest device."""
    kv_full, kv_dev = kv_bytes_per_token_layer(s, sc["tp"], sc["b_kv"], xp)
    context = sc["I"] + sc["O"]
    weights = weight_bytes_per_device(step, s, sc["pp"], xp)
    kv_device = kv_bytes_per_device(s, sc["B"], context, kv_dev, sc["pp"], xp)
    usable = hw["capacity"] * (1.0 - hw["reserve"])
    return {
        "kv_cache_bytes": sc["B"] * cached_tokens(s, context, xp) * kv_full,
        "kv_cache_bytes_per_device": kv_device,
        "weight_bytes_per_device": weights,
        "memory_per_device_bytes": weights + kv_device,
        "memory_capacity_bytes": hw["capacity"],
        "usable_memory_bytes": usable,
        "fits_in_memory": weights + kv_device <= usable,
    }
