"""Several accelerators: a step's collectives, pipeline stages and memory per device.

Tensor parallelism (Shoeybi et al., Megatron-LM, 2019) splits every weight matrix, the heads
and the KV heads TP ways and adds two all-reduces of the step's activations per layer. Expert
parallelism spreads the routed experts over `ep` of those devices; with attention data
parallelism each device runs every other operator whole on its own sequences, and each MoE layer
sends the routed tokens' hidden vectors to the ranks of their experts and back (a dispatch and a
combine all-to-all) instead of all-reducing. Pipeline parallelism splits the layers into PP
stages that a token passes in turn. A group inside the accelerator's link domain runs on the
link, one that leaves it on the scale-out network per device; the collectives themselves, by
algorithm and message size, are engine/serving/collectives.py's. The conventions (a static batch
is one pipeline micro-batch) are in docs/model.md, "Serving model" and "MoE layouts". Floats or
numpy arrays throughout (`xp`: engine/arrays.py).
"""

from __future__ import annotations

from typing import NamedTuple

from engine.serving.collectives import (
    Fabric,
    all_reduce_s,
    deduplicated_all_to_all_s,
    group_all_to_all_s,
    ring_all_reduce_s,
    send_s,
)
from engine.serving.operators import Layout, dispatch_copies, far_nodes

__all__ = [
    "Comm",
    "all_reduces_per_layer",
    "comm_of",
    "comm_s",
    "nodes_spanned",
    "ring_all_reduce_s",
    "send_s",
]


class Comm(NamedTuple):
    """A step's collectives on one device (floats, or arrays over deployments): how many of
    each per step, over how many devices, and their bytes per new token of the step."""

    all_reduces: object  # tensor-parallel all-reduces per step
    reduce_group: object  # devices in each
    reduce_bytes: object  # message per new token: its hidden vector
    all_to_alls: object  # dispatches and combines per step (attention DP: 2 per MoE layer)
    a2a_group: object
    a2a_bytes: object  # bytes a device sends per new token of the step
    a2a_net_bytes: object  # of a prefill step's, over the network once per node (DeepEP)
    sends: object  # stage-to-stage sends per step (pp − 1)
    net_sends: object  # of which cross a node boundary
    send_bytes: object  # per new token
    fabric: Fabric


def all_reduces_per_layer(s, xp):
    """Tensor-parallel all-reduces per layer: one after attention and one after the MLP, or
    a single one when the two read the same normed input and their outputs are summed before
    it (parallel attention: GPT-J, Falcon; Wang & Komatsuzaki 2021)."""
    return xp.where(s.parallel_attention, 1.0, 2.0)


def nodes_spanned(devices, domain, xp):
    """Link domains (nodes) `devices` consecutive devices fill: ⌈devices / domain⌉."""
    return xp.ceil(devices / domain)


def comm_of(s, lay: Layout, fabric: Fabric, xp) -> Comm:
    """The collectives of one forward step of a deployment.

    Without attention DP every layer all-reduces the step's T·h activations over the tp
    devices (expert parallelism too: each device holds every token and the experts' partial
    outputs are summed). With it, attention and dense layers need none, and each MoE layer
    dispatches a device's share of the tokens to the ranks holding their experts and combines
    them back, the busiest rank's bytes (`dispatch_copies` copies per token, times the
    imbalance). Each pair of consecutive stages exchanges the activations once; the pairs
    that straddle a node boundary (⌈tp·pp/domain⌉ − 1 of them at most) send over the network.
    """
    h, ba, share = s.hidden, lay.act_bytes, 1.0 / lay.dp
    plain = lay.dp < 1.5  # attention DP off
    per_token = h * ba
    nodes = nodes_spanned(lay.tp * lay.pp, fabric.domain, xp)
    routed = per_token * share * lay.imbalance  # one copy of a token on the busiest rank
    a2a_nodes = nodes_spanned(lay.tp, fabric.domain, xp)
    return Comm(
        all_reduces=xp.where(plain, all_reduces_per_layer(s, xp) * s.layers, 0.0),
        reduce_group=lay.tp,
        reduce_bytes=per_token,
        all_to_alls=xp.where(plain, 0.0, 2.0 * s.moe_layers),
        a2a_group=lay.tp,
        a2a_bytes=routed * dispatch_copies(s, lay),
        a2a_net_bytes=routed * far_node_copies(s=s, lay=lay, nodes=a2a_nodes, xp=xp),
        sends=lay.pp - 1.0,
        net_sends=xp.minimum(lay.pp - 1.0, nodes - 1.0),
        send_bytes=per_token * share,
        fabric=fabric,
    )


def far_node_copies(s, lay: Layout, nodes, xp):
    """A token's copies a prefill dispatch sends over the network: once to each other node
    holding any of its experts (`far_nodes`), times each expert's tp/ep width slices."""
    return far_nodes(s, nodes, xp) * lay.tp / lay.ep


def all_to_all_step_s(c: Comm, tokens, xp, prefill=False):
    """One dispatch (or combine) of a step carrying `tokens` new tokens: a prefill step on
    DeepEP's normal kernels, a token crossing the network once per node it reaches
    (`deduplicated_all_to_all_s`); a decode step on its low-latency kernels, each rank copy
    sent directly (`group_all_to_all_s`). `prefill`: bool, or an array over steps."""
    nbytes = c.a2a_bytes * tokens
    f = c.fabric
    direct = group_all_to_all_s(nbytes, c.a2a_group, f, xp=xp)
    dedup = deduplicated_all_to_all_s(
        nbytes=nbytes, net_bytes=c.a2a_net_bytes * tokens, devices=c.a2a_group, fabric=f, xp=xp
    )
    return xp.where(prefill, dedup, direct)


def comm_s(c: Comm, tokens, xp, prefill=False):
    """Seconds of a step's collectives when it carries `tokens` new tokens (`prefill`: the
    step has prompt tokens, so its dispatches run DeepEP's normal kernels)."""
    f = c.fabric
    t = c.all_reduces * all_reduce_s(c.reduce_bytes * tokens, c.reduce_group, f, xp=xp)
    a2a = all_to_all_step_s(c, tokens, xp, prefill=prefill)
    t = t + c.all_to_alls * a2a
    nbytes = c.send_bytes * tokens
    inside = send_s(nbytes, f.link_bw, f.link_lat)
    across = send_s(nbytes, f.net_bw, f.net_lat)
    return t + (c.sends - c.net_sends) * inside + c.net_sends * across


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
