"""Several accelerators: tensor-parallel all-reduces, pipeline stages and memory per device.

Tensor parallelism (Shoeybi et al., Megatron-LM, 2019) splits every weight matrix, the heads
and the KV heads TP ways and adds two all-reduces of the step's activations per layer; a ring
all-reduce of N bytes over p devices moves 2·(p−1)/p·N bytes per device in 2·(p−1) hops
(Patarasuk and Yuan 2009). Pipeline parallelism splits the layers into PP stages that a token
passes in turn. The conventions (a static batch is one pipeline micro-batch) are in
docs/model.md, "Serving model". Floats or numpy arrays throughout (`xp`: engine/arrays.py).
"""

from __future__ import annotations


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


def all_reduces_per_layer(s, xp):
    """Tensor-parallel all-reduces per layer: one after attention and one after the MLP, or
    a single one when the two read the same normed input and their outputs are summed before
    it (parallel attention: GPT-J, Falcon; Wang & Komatsuzaki 2021)."""
    return xp.where(s.parallel_attention, 1.0, 2.0)


def comm_line(s, tp, pp, act_bytes, bandwidth, latency, xp) -> tuple:
    """Communication of one forward step of T new tokens as (fixed s, s per token): the
    all-reduces of T·h activations of every layer (TP), plus one activation transfer between
    each pair of consecutive stages (PP). Both are linear in T: latency per hop, bytes per
    token."""
    per_token = s.hidden * act_bytes
    layers = all_reduces_per_layer(s, xp) * s.layers
    fixed = layers * ring_all_reduce_s(0.0, tp, bandwidth, latency)
    fixed = fixed + (pp - 1.0) * send_s(0.0, bandwidth, latency)
    slope = layers * ring_all_reduce_s(per_token, tp, bandwidth, 0.0)
    return fixed, slope + (pp - 1.0) * send_s(per_token, bandwidth, 0.0)


def stage_layers(layers, pp, xp):
    """Layers on the fullest pipeline stage: ⌈L/PP⌉."""
    return xp.ceil(layers / pp)


def bubble_fraction(pp):
    """Idle share of each device when one static batch flows through PP stages: (PP−1)/PP."""
    return (pp - 1.0) / pp


def weight_bytes_per_device(ops, s, pp, xp):
    """Weights held by a device of the fullest stage: ⌈L/PP⌉ mean layers (split TP ways, with
    the replicated parts whole), the final norm and one vocabulary table per stage at the ends
    (both tables when PP = 1 and the head is not tied)."""
    per_layer = once = head = 0.0
    for op in ops:
        if op.layers != "once":
            per_layer = per_layer + op.count * op.resident_bytes
        elif op.name == "lm_head":
            head = op.resident_bytes
        else:
            once = once + op.resident_bytes  # the embedding table and the final norm
    ends = once + xp.where(pp > 1, 0.0, head)
    return per_layer / s.layers * stage_layers(s.layers, pp, xp) + ends
