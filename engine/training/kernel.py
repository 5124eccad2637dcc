"""The training step's kernel: every configuration at once, on numpy arrays.

One step (docs/model.md, "Training step"; Narayanan et al. 2021, §2-3): every pipeline stage
runs m = B/(dp·b) micro-batches, each a forward pass, a backward pass and, with recomputation,
part of the forward pass again, one micro-batch slot at a time under the 1F1B schedule. A slot
on the slowest stage (the first with its layers and the embedding, the fullest middle one, or
the last with its layers, the final norm and the LM head: engine/training/stages.py) is its
operators' time (engine/training/compute.py) plus the exposed communication of
its layers (tensor-parallel all-gathers and reduce-scatters, context-parallel KV blocks
beyond what attention hides, MoE all-to-alls), a per-layer overhead τ per pass, and the
activation and gradient sends between stages. The pipeline adds (pp−1)/v slots of bubble
(interleaved schedule, v virtual stages: bubble fraction (pp−1)/(v·m)). Data parallelism then
reduces the gradients (all-reduce, or ZeRO's reduce-scatter and all-gather; ZeRO-3 gathers the
weights for every forward and backward pass) with an `overlap_fraction` of the neighbouring
compute hiding it, and the optimizer reads and writes its state once.

    step = (m + (pp−1)/v)·slot + exposed data-parallel communication + optimizer step

The same arrays carry one configuration (a scalar `train`) or thousands (`train_search`), so
the two agree exactly. Every input is already checked (engine/training/setup.py).
"""

from __future__ import annotations

import numpy as np

from engine.catalog.shapes import Shapes, heads_per_device, kv_bytes_per_token_layer
from engine.serving.kernel import Device, Efficiencies
from engine.serving.operators import Layout, far_nodes, ranks_reached
from engine.training.collectives import (
    Links,
    all_gather_s,
    all_to_all_s,
    deduplicated_all_to_all,
    group_all_to_all,
    group_nodes,
    link_for,
    reduce_scatter_s,
    ring_all_reduce_s,
    send_s,
)
from engine.training.compute import PassTimes, pass_times, roofs, token_flops
from engine.training.config import DOES_NOT_FIT, Config, reason_codes
from engine.training.memory import memory_terms, params_on_device
from engine.training.numerics import Numerics
from engine.training.stages import StageLayers, stage_layers

ACT_BYTES = 2.0  # activations and their gradients travel in 16 bits
# Bytes the optimizer step moves per parameter it updates besides its gradient's read
# (`gradient_bytes`, 2 by default) and its state's read and write (the fp32 master weight and
# Adam's two moments, `optimizer_moment_bytes` each: 2 × 12 by default, 28 in all): the 16-bit
# weight written.
WEIGHT_WRITE_BYTES = 2.0


def _exposed(comm, hidden_by):
    """What `hidden_by` seconds of overlapping compute leave of `comm`: max(0, comm − hidden)."""
    return np.maximum(comm - hidden_by, 0.0)


def _slowest(c: Config, pt: PassTimes, stages: StageLayers, per_layer, fixed) -> dict:
    """The slowest device kind's layers and end operators per micro-batch (forward, backward)
    and the layers of its fuller stage: the first stage's layers and the embedding, the middle
    stages' layers, or the last stage's layers and the final norm and LM head; one stage
    (pp = 1) runs all of them. Each device of a mirrored schedule holds two stages (an end
    device the first and the last, a middle one two middle stages): under DualPipe a
    micro-batch passes one of them (half through each: their mean), under DualPipeV both
    (their sum). `per_layer`: seconds a layer adds to a micro-batch slot; `fixed`: seconds
    every device adds."""
    one = c.pp == 1
    own = {
        "first": (
            stages.first,
            np.where(one, pt.first_fwd + pt.last_fwd, pt.first_fwd),
            np.where(one, pt.first_bwd + pt.last_bwd, pt.first_bwd),
        ),
        "middle": (stages.middle, 0.0 * pt.first_fwd, 0.0 * pt.first_bwd),
        "last": (stages.last, pt.last_fwd, pt.last_bwd),
    }
    share = np.where(c.dualpipev, 1.0, 0.5)  # of the two stages a micro-batch passes
    pair = {  # a mirrored device's two stages
        "first": (own["first"], own["last"]),
        "middle": (own["middle"], own["middle"]),
        "last": (own["first"], own["last"]),
    }
    kinds = {
        k: tuple(
            np.where(c.mirrored, share * (a + b), o)
            for a, b, o in zip(*pair[k], own[k], strict=True)
        )
        for k in own
    }
    fuller = {
        k: np.where(c.mirrored, np.maximum(pair[k][0][0], pair[k][1][0]), own[k][0]) for k in own
    }
    slots = np.stack(
        [n * per_layer + fwd + bwd + fixed + 0.0 * c.pp for n, fwd, bwd in kinds.values()]
    )
    pick = np.argmax(slots, axis=0)
    shape = np.shape(c.pp)
    out = {
        key: np.choose(pick, [np.broadcast_to(v[i], shape) for v in kinds.values()])
        for i, key in enumerate(("layers", "fwd_end", "bwd_end"))
    }
    out["stage_layers"] = np.choose(pick, [np.broadcast_to(f, shape) for f in fuller.values()])
    return out


def _bubble(c: Config, slot, windows: dict, wgrad):
    """Seconds of pipeline bubble per step. 1F1B: (pp − 1)/v slots (Narayanan et al. 2021).
    DualPipe and DualPipeV (deepseek-ai/DualPipe's table, S stages): (S/2 − 1)·(F&B + B − 3W),
    each term a stage's chunk: F&B a forward and a backward chunk overlapped (a slot: their
    compute, their communication hidden beneath it), B a backward chunk (with its
    recomputation) and W its weight-gradient GEMMs; never negative. A DualPipe slot is one
    chunk (S = pp); a DualPipeV slot two (S = 2·pp): (pp − 1)·(slot + B − 3W)/2."""
    plain = (c.pp - 1.0) / c.virtual * slot
    backward = windows["bwd"] + windows["rec"]
    chunks = np.where(c.dualpipev, 2.0, 1.0)  # a stage's chunks in a device's slot
    dual = (c.stages / 2.0 - 1.0) * np.maximum(slot + backward - 3.0 * wgrad, 0.0) / chunks
    return np.where(c.mirrored, dual, plain)


def _tp_exposed(comm, gemm, tp, overlap):
    """A pass's tensor-parallel collectives left exposed when `overlap` of them runs under the
    pass's GEMMs: pipelined in tp chunks (Transformer Engine's userbuffers), the first chunk
    waits and the GEMMs hide at most their own time, so at overlap 1 what is left is
    max(comm/tp, comm − gemm); at 0 all of it."""
    pipelined = np.maximum(comm / tp, comm - gemm)
    return (1.0 - overlap) * comm + overlap * pipelined


def _layer_comm(
    s: Shapes,
    c: Config,
    links: Links,
    pt: PassTimes,
    tokens,
    passes,
    imbalance,
    overlap,
    tp_overlap,
    flex: bool = False,
) -> dict:
    """Exposed seconds per layer per micro-batch of TP, CP and EP communication; the busiest
    expert rank receives and returns `imbalance` times the mean routed tokens, `overlap` of the
    layer's compute (the `expert_overlap` assumption) hides its all-to-alls and `tp_overlap`
    of its GEMMs its tensor-parallel all-gathers and reduce-scatters (`_tp_exposed`);
    `flex`: the `moe_dispatcher` assumption is flex (`_dispatch`)."""
    act = tokens * s.hidden * ACT_BYTES  # the layer's activations on the TP group
    half = _gather_scatter(links=links, nbytes=act, devices=c.tp)  # attention's, or the MLP's
    # an MoE layer's experts gather and scatter over their etp ranks, on those ranks' tokens
    etp = c.expert_tp
    moe_half = _gather_scatter(links=links, nbytes=act * etp / c.tp, devices=etp)
    moe_share = s.moe_layers / s.layers
    mlp_half = (1.0 - moe_share) * half + moe_share * moe_half
    per_pass = np.where(s.parallel_attention, half, half + mlp_half)
    fwd = _tp_exposed(per_pass, gemm=pt.layer_fwd - pt.attn_fwd, tp=c.tp, overlap=tp_overlap)
    bwd = _tp_exposed(per_pass, gemm=pt.layer_bwd - pt.attn_bwd, tp=c.tp, overlap=tp_overlap)
    tp = (passes - 1.0) * fwd + bwd  # forward, backward, and a full recomputation's forward
    # a recomputed MLP or MoE block gathers its input and scatters its output again: the MLP's
    # half of a pass's collectives
    again = (
        s.dense_layers * c.runs_again("mlp") * half + s.moe_layers * c.runs_again("moe") * moe_half
    ) / s.layers
    tp = tp + fwd * again / np.where(per_pass > 0, per_pass, 1.0)
    cp = _context_parallel(s=s, c=c, links=links, pt=pt, tokens=tokens)
    per_copy = imbalance * tokens / c.tp * s.hidden * ACT_BYTES  # a token's hidden vector
    a2a = _dispatch(s=s, c=c, links=links, per_copy=per_copy, flex=flex)
    moe_again = c.runs_again("moe")  # a recomputed MoE layer dispatches and combines again
    ep = moe_share * 2.0 * (passes + moe_again) * a2a  # dispatch + combine
    # a full recomputation's forward, or the recomputed MoE layer's
    again = np.select([c.recompute == 2, moe_again], [pt.layer_fwd, pt.moe_fwd], 0.0)
    ep = _exposed(ep, overlap * (pt.layer_fwd + pt.layer_bwd + again))
    return {"tp": tp, "cp": cp, "ep": np.where(c.ep > 1, ep, 0.0)}


def _dispatch(s: Shapes, c: Config, links: Links, per_copy, flex: bool):
    """One dispatch (or combine) of an MoE layer, `per_copy` bytes a token copy per GPU, by
    Megatron-Core's dispatcher. The expert ranks are ordered etp, ep, edp (MoE parallel
    folding): an ep group's members are etp ranks apart. `alltoall` (not `flex`) sends a token
    once per routed expert (k copies); `flex` (DeepEP) once per expert rank it reaches
    (`ranks_reached`), and over the network once per other node holding its experts
    (`far_nodes`: group-limited routing bounds them; engine/serving/operators.py)."""
    etp = c.expert_tp
    if not flex:
        k = s.experts_per_token
        return group_all_to_all(links=links, nbytes=per_copy * k, devices=c.ep, stride=etp)
    nodes = group_nodes(links=links, devices=c.ep, stride=etp)
    dedup = deduplicated_all_to_all(
        links=links,
        nbytes=per_copy * ranks_reached(s, c.ep),
        net_bytes=per_copy * far_nodes(s, nodes, np),
        stride=etp,
        devices=c.ep,
    )
    return np.where(c.ep > 1, dedup, 0.0)


def _context_parallel(s: Shapes, c: Config, links: Links, pt: PassTimes, tokens):
    """Exposed seconds per layer per micro-batch of context parallelism's key and value
    exchange over the cp ranks (tp ranks apart), by `cp_comm_type` (Megatron-Core's):
    p2p, the ring: every rank's KV block visits every other, (cp − 1) sends hidden under the
    attention they feed, twice in the backward pass (the blocks and their gradients);
    allgather: the same bytes gathered before attention and their gradients reduce-scattered
    after it (gathered again for the backward pass), nothing hidden; a2a (DeepSpeed-Ulysses):
    all-to-alls trade the sequence for heads, the queries, keys and values in and the output
    back, the backward pass their gradients, nothing hidden. A recomputed attention (full, or
    selective's core_attn) exchanges once more."""
    kv_block = tokens * kv_bytes_per_token_layer(s=s, kv_bytes=ACT_BYTES, tp=c.tp, xp=np)[1]
    bw, lat = link_for(links, c.tp * c.cp)
    again = np.where((c.recompute == 2) | c.runs_again("core_attn"), 1.0, 0.0)
    ring = (c.cp - 1.0) * send_s(kv_block, bw, lat)  # every KV block visits every rank
    p2p = (1.0 + again) * _exposed(ring, pt.attn_fwd) + _exposed(2.0 * ring, pt.attn_bwd)
    whole = c.cp * kv_block  # the sequence's keys and values on this rank's heads
    gather = all_gather_s(nbytes=whole, devices=c.cp, bandwidth=bw, latency=lat)
    scatter = reduce_scatter_s(nbytes=whole, devices=c.cp, bandwidth=bw, latency=lat)
    allgather = (1.0 + again) * gather + gather + scatter
    h_dev, k_dev = heads_per_device(s, c.tp, np)
    k_dev = np.where(s.mla, h_dev, k_dev)  # MLA attends with per-head keys and values
    qkvo = tokens * ACT_BYTES * (h_dev * (s.qk_dim + s.v_dim) + k_dev * (s.qk_dim + s.v_dim))
    one = all_to_all_s(nbytes=qkvo, devices=c.cp, bandwidth=bw, latency=lat) + lat
    a2a = (1.0 + again) * one + one  # q, k, v in and o out; their gradients back
    out = np.select([c.cp_exchange("allgather"), c.cp_exchange("a2a")], [allgather, a2a], p2p)
    return np.where(c.cp > 1, out, 0.0)


def _gather_scatter(links: Links, nbytes, devices):
    """Seconds of one all-gather and one reduce-scatter of `nbytes` over `devices` neighbouring
    ranks (sequence parallelism's pair around a block)."""
    bw, lat = link_for(links, devices)
    return all_gather_s(nbytes=nbytes, devices=devices, bandwidth=bw, latency=lat) + (
        reduce_scatter_s(nbytes=nbytes, devices=devices, bandwidth=bw, latency=lat)
    )


def _stage_sends(s: Shapes, c: Config, links: Links, tokens):
    """Seconds per micro-batch slot of a stage's activation and gradient sends to its
    neighbours (v of each with the interleaved schedule, two under DualPipeV); none without
    pipelining."""
    bw, lat = link_for(links, c.tp * c.cp * c.dp * c.pp)
    one = send_s(tokens * s.hidden * ACT_BYTES / c.tp, bw, lat)
    chunks = np.where(c.dualpipev, 2.0, c.virtual)
    return np.where(c.pp > 1, 2.0 * chunks * one, 0.0)


def _data_parallel(
    s, c: Config, links: Links, windows: dict, overlap: float, stages, num: Numerics
) -> dict:
    """Gradient reduction (of `num.grad_bytes`-byte gradients, and ZeRO's gathers of
    `num.param_bytes`-byte weights) of the stage holding the most weights: total and exposed
    seconds per step."""
    grad_bytes, param_bytes = num.grad_bytes, num.param_bytes
    dense, experts = params_on_device(c=c, s=s, stages=stages)
    group = c.dp * c.cp
    bw, lat = link_for(links, c.tp * c.cp * c.dp)

    def ring(fn, nbytes):  # dense weights over dp·cp ranks, routed experts over edp
        out = fn(nbytes * dense, group, bw, lat)
        moe = fn(nbytes * experts, c.expert_dp, bw, lat)
        return out + np.where(experts > 0, moe, 0.0)

    ar = ring(ring_all_reduce_s, grad_bytes)
    rs = ring(reduce_scatter_s, grad_bytes)
    ag = ring(all_gather_s, param_bytes)  # the weights
    m, full = c.micro_batches, (c.recompute == 2)
    fwd, bwd, rec = (overlap * windows[k] for k in ("fwd", "bwd", "rec"))
    exposed = [
        _exposed(ar, bwd),
        _exposed(rs, bwd) + _exposed(ag, fwd),
        m * _exposed(rs, bwd) + _exposed(ag, fwd),
        m * (_exposed(ag, fwd) + full * _exposed(ag, rec) + _exposed(ag + rs, bwd)),
    ]
    total = [ar, rs + ag, m * rs + ag, m * (ag * (2.0 + full) + rs)]
    stage = [c.zero == z for z in range(4)]
    updated = np.where(c.zero >= 1, dense / group + experts / c.expert_dp, dense + experts)
    return {
        "exposed": np.select(stage, exposed),
        "total": np.select(stage, total),
        "updated_params": updated,
    }


def device_layout(tp, etp, ep, weight_bytes: float, imbalance) -> Layout:
    """One device's operator layout: tp ways, each routed expert etp ways (the serving layout's
    tp/etp expert ranks among the tp devices: a device computes etp/tp of the routed pairs at
    1/etp of an expert's width), 16-bit activations, and with expert parallelism the busiest
    expert rank's load (`imbalance`, the `expert_imbalance` assumption)."""
    return Layout(
        tp=tp,
        pp=1.0,
        weight_bytes=weight_bytes,
        kv_bytes=ACT_BYTES,
        act_bytes=ACT_BYTES,
        ep=tp / etp,
        imbalance=np.where(ep > 1, imbalance, 1.0),
    )


def _layout(c: Config, weight_bytes: float, a) -> Layout:
    return device_layout(
        tp=c.tp,
        etp=c.expert_tp,
        ep=c.ep,
        weight_bytes=weight_bytes,
        imbalance=a.expert_imbalance,
    )


def recompute_s(c: Config, pt: PassTimes) -> np.ndarray:
    """Seconds per micro-batch and mean layer that recomputation runs again: full, the layer's
    forward; selective, the forward of each of its modules (moe includes moe_act's activation
    and the shared experts)."""
    moe = c.runs_again("moe")
    selective = (
        c.runs_again("core_attn") * pt.attn_fwd
        + c.runs_again("layernorm") * pt.norm_fwd
        + c.runs_again("mla_up_proj") * pt.up_fwd
        + c.runs_again("mlp") * pt.mlp_fwd
        + moe * pt.moe_fwd
        + (c.runs_again("moe_act") & ~moe) * pt.act_fwd
        + (c.runs_again("shared_experts") & ~moe) * pt.shared_fwd
    )
    return np.select([c.recompute == 2, c.recompute == 1], [pt.layer_fwd, selective], 0.0)


def evaluate(
    s: Shapes, c: Config, dev: Device, links: Links, eta: Efficiencies, a, num: Numerics
) -> dict:
    """Every configuration's step, in SI units (keys: see TrainResult / train_search).

    Args:
        s: the model's shapes (floats, or arrays over rows, e.g. the measurements of a fit).
        c: the configurations (engine/training/config.py).
        dev: the accelerator with the assumptions applied (engine.serving.inputs.device_values).
        links: the in-node link and the network per GPU, efficiencies applied.
        eta: compute efficiency per operator class.
        a: the Assumptions (overlap_fraction, attention_backward_factor).
        num: bytes per weight, fp8 casts and the LM head's format, the attention kernel
            (engine/training/numerics.py; unfused attention: scores in memory, compute.py).
    """
    tokens = c.micro_batch * c.seq_len / c.cp
    lay = _layout(c=c, weight_bytes=num.weight_bytes, a=a)
    pt = pass_times(
        s=s,
        lay=lay,
        tokens=tokens,
        seq=c.seq_len,
        ep=c.ep,
        rate_of=roofs(dev, eta),
        bandwidth=dev.bandwidth,
        attention_backward=a.attention_backward_factor,
        num=num,
    )
    recompute = recompute_s(c, pt)
    passes = 2.0 + (c.recompute == 2)
    comm = _layer_comm(
        s=s,
        c=c,
        links=links,
        pt=pt,
        tokens=tokens,
        passes=passes,
        imbalance=lay.imbalance,
        overlap=a.expert_overlap,
        tp_overlap=a.tp_overlap,
        flex=num.flex_dispatch,
    )
    p2p = _stage_sends(s=s, c=c, links=links, tokens=tokens)
    stages = stage_layers(layers=s.layers, pp=c.stages, first=c.first_layers, last=c.last_layers)
    exchanged = comm["tp"] + comm["cp"] + comm["ep"]  # a layer's exposed collectives
    per_layer = pt.layer_fwd + pt.layer_bwd + recompute + exchanged + dev.tau * passes
    slow = _slowest(c=c, pt=pt, stages=stages, per_layer=per_layer, fixed=p2p)
    n_st = slow["layers"]
    windows = {
        "fwd": n_st * pt.layer_fwd + slow["fwd_end"],
        "bwd": n_st * pt.layer_bwd + slow["bwd_end"],
        "rec": n_st * recompute,
    }
    compute = windows["fwd"] + windows["bwd"] + windows["rec"]
    overhead = n_st * dev.tau * passes
    layer_comm = n_st * exchanged
    slot = compute + layer_comm + overhead + p2p
    m = c.micro_batches
    bubble = _bubble(c=c, slot=slot, windows=windows, wgrad=n_st * pt.wgrad)
    dp = _data_parallel(
        s=s,
        c=c,
        links=links,
        windows=windows,
        overlap=a.overlap_fraction,
        stages=stages,
        num=num,
    )
    moved = num.grad_bytes + 2.0 * num.optimizer_bytes + WEIGHT_WRITE_BYTES
    optimizer = dp["updated_params"] * moved / dev.bandwidth
    step = m * slot + bubble + dp["exposed"] + optimizer
    return _metrics(
        s=s,
        c=c,
        dev=dev,
        links=links,
        step=step,
        parts={
            "compute_s": m * compute,
            "comm_tp_s": m * n_st * comm["tp"],
            "comm_cp_s": m * n_st * comm["cp"],
            "comm_ep_s": m * n_st * comm["ep"],
            "comm_pp_s": m * p2p,
            "comm_dp_s": dp["exposed"],
            "comm_dp_total_s": dp["total"],
            "overhead_s": m * overhead,
            "optimizer_s": optimizer,
            "bubble_s": bubble,
            "bubble_fraction": bubble / (m * slot),
        },
        stage_n=slow["stage_layers"],
        stages=stages,
        num=num,
    )


def _rebuilt(c: Config, flops) -> np.ndarray:
    """Matrix-product FLOPs per token that selective recomputation runs again (the norms' and
    the activation's elementwise work is not counted, as in model FLOPs)."""
    moe = c.runs_again("moe")
    return (
        c.runs_again("core_attn") * flops.recompute_selective
        + c.runs_again("mla_up_proj") * flops.recompute_up
        + c.runs_again("mlp") * flops.recompute_mlp
        + moe * flops.recompute_moe
        + (c.runs_again("shared_experts") & ~moe) * flops.recompute_shared
    )


def _metrics(
    s: Shapes,
    c: Config,
    dev: Device,
    links: Links,
    step,
    parts: dict,
    stage_n,
    stages: StageLayers,
    num: Numerics,
) -> dict:
    """Throughput, FLOPs, utilisation and memory from the step and its parts."""
    flops = token_flops(s, c.seq_len)
    rebuilt = np.select(
        [c.recompute == 2, c.recompute == 1], [flops.recompute_full, _rebuilt(c, flops)], 0.0
    )
    tokens_per_s = c.global_batch * c.seq_len / step
    per_gpu = tokens_per_s / c.gpus
    mem = memory_terms(c=c, s=s, stages=stages, num=num)
    usable = dev.capacity * (1.0 - dev.reserve)
    total = mem.total
    # one accelerator per call: its network is catalogued or not (rows may differ in efficiency)
    has_network = bool(np.isfinite(links.net_bw).all())
    codes = reason_codes(c=c, s=s, per_node=links.per_node, has_network=has_network)
    codes = np.where((codes == 0) & (total > usable), DOES_NOT_FIT, codes)
    comm = sum(parts[k] for k in ("comm_tp_s", "comm_cp_s", "comm_ep_s", "comm_pp_s", "comm_dp_s"))
    return parts | {
        "step_time_s": step,
        "comm_exposed_s": comm,
        "tokens_per_s": tokens_per_s,
        "tokens_per_s_per_gpu": per_gpu,
        "model_flops_per_token": flops.model + 0.0 * step,
        "hardware_flops_per_token": flops.model + rebuilt,
        "model_tflops_per_gpu": flops.model * per_gpu / 1e12,
        "hardware_tflops_per_gpu": (flops.model + rebuilt) * per_gpu / 1e12,
        "mfu": flops.model * per_gpu / dev.peak,
        "hfu": (flops.model + rebuilt) * per_gpu / dev.peak,
        "weight_bytes_per_gpu": mem.weights,
        "gradient_bytes_per_gpu": mem.gradients,
        "optimizer_bytes_per_gpu": mem.optimizer,
        "activation_bytes_per_gpu": mem.activations,
        "memory_per_gpu_bytes": total,
        "usable_memory_bytes": usable + 0.0 * step,
        "memory_headroom_bytes": usable - total,
        "fits_in_memory": total <= usable,
        "dp": c.dp,
        "micro_batches": c.micro_batches,
        "reason_code": codes,
        "peak_flop_per_s": dev.peak + 0.0 * step,
        "matmul_params": flops.matmul_params + 0.0 * step,
        "stage_layers": stage_n + 0.0 * step,
        "first_stage_layers": stages.first + 0.0 * step,
        "last_stage_layers": stages.last + 0.0 * step,
    }
