"""The serving model's kernel: whole requests from operator templates, in two stages.

`fold` takes everything a deployment fixes (the model's operator templates on TP×PP devices,
the accelerator's rates and links, the precision and the assumptions) to coefficients in
seconds and bytes per new token, per sequence and per key of context, with their sums over the
operators. `evaluate` then applies a static batch of B sequences with I input and O output
tokens: the prefill of B·I tokens, then O−1 decode steps at contexts I+1 … I+O−1, priced by the
serving model's one decode step (engine/serving/decode_step.py) and summed in closed form
(engine/serving/closed_form.py). Only each operator's max(compute, memory) needs a pass over the
operators; every other total is linear in the batch and tokens.

Both stages run on Python floats (`xp=SCALAR`: a scalar `serve` folds once per deployment and
evaluates in microseconds) or on numpy arrays (a sweep: coefficients over the deployment axes
broadcast against the batch and token axes), so the two agree. docs/model.md, "Serving model",
has the model and its conventions.
"""

from __future__ import annotations

import enum
import operator
from typing import NamedTuple

from engine.arrays import SCALAR
from engine.catalog.shapes import Shapes, cached_tokens, kv_bytes_per_token_layer
from engine.checks import MAX_BATCH
from engine.report.messages import MessageKind
from engine.serving import memory, parallel
from engine.serving.collectives import Fabric
from engine.serving.decode_step import static_batch
from engine.serving.operators import (
    ExpertSplit,
    Layout,
    Template,
    local_layout,
    mean_keys,
    rank_experts,
    step_lists,
)

NAN = float("nan")


class Warn(enum.IntFlag):
    """Row-level warnings, one bit each (a sweep keeps the bits; the text is looked up once)."""

    PEAK_FALLBACK = 1
    TP_BEYOND_NODE = 2
    DOES_NOT_FIT = 4
    BEYOND_CONTEXT = 8
    NO_DECODE = 16
    KV_HEAD_REPLICATED = 32
    LATENT_REPLICATED = 64
    EMULATED = 128
    RENAMED_FORMAT = 256
    NO_NETWORK = 512
    STAGES_SPAN_NODES = 1024


WARNING_KINDS = {
    Warn.PEAK_FALLBACK: MessageKind(
        "peak_fallback",
        "no peak listed for this precision: a slower one's is used (see peak_precision)",
    ),
    Warn.TP_BEYOND_NODE: MessageKind(
        "tp_beyond_node",
        "tp beyond one node's devices: the group spans nodes, and its collectives run on the "
        "scale-out network per device, not the in-node link (a prefill's MoE dispatch under "
        "attention DP crosses it once per node its experts reach)",
    ),
    Warn.DOES_NOT_FIT: MessageKind(
        "does_not_fit",
        "does not fit: memory per device exceeds the usable memory (capacity less the stack's "
        "runtime memory and reserve)",
    ),
    Warn.BEYOND_CONTEXT: MessageKind(
        "beyond_trained_context",
        "input + output tokens exceed the model's trained context length",
    ),
    Warn.NO_DECODE: MessageKind(
        "no_decode_step",
        "one output token: the prefill produces it and no decode step runs, so "
        "TPOT and tokens/s per user are undefined (NaN)",
    ),
    Warn.KV_HEAD_REPLICATED: MessageKind(
        "kv_head_replicated",
        "fewer KV heads than tensor-parallel devices: each device holds a replicated KV head",
    ),
    Warn.LATENT_REPLICATED: MessageKind(
        "latent_kv_replicated",
        "MLA's latent KV cache is replicated on every tensor-parallel device",
    ),
    Warn.EMULATED: MessageKind(
        "format_emulated",
        "no tensor cores for this number format here: its weights are dequantised to 16 bits "
        "inside each GEMM (emulated, weight-only), at the fp16 peak plus the dequantisation "
        "cost",
    ),
    Warn.RENAMED_FORMAT: MessageKind(
        "format_renamed",
        "a precision name read as a number format: int4 is w4a16 (4-bit weights, 16-bit "
        "activations: AWQ, GPTQ), fp4 is nvfp4 (see precision and kv_precision)",
    ),
    Warn.NO_NETWORK: MessageKind(
        "no_scale_out_network",
        "the deployment spans nodes but the catalogue gives this accelerator no scale-out "
        "network: traffic between nodes is modelled on the in-node link (optimistic)",
    ),
    Warn.STAGES_SPAN_NODES: MessageKind(
        "stages_span_nodes",
        "pipeline stages span nodes: the sends between stages that cross a node run on the "
        "scale-out network per device",
    ),
}
WARNINGS = tuple(WARNING_KINDS[w]() for w in Warn)  # the Messages, in bit order


class Device(NamedTuple):
    """An accelerator's figures as the kernel reads them, the assumptions applied (floats, or
    arrays over the deployment axes): serving/inputs.py `device_values`."""

    peak: object  # FLOP/s of the weights' precision (dense datasheet peak)
    peak_attn: object  # FLOP/s of attention (16-bit or wider activations)
    bandwidth: object  # memory bytes/s, times the bandwidth efficiency
    capacity: object  # bytes
    reserve: object  # fraction of capacity the runtime keeps
    link_bw: object  # bytes/s per device per direction, times the link efficiency
    link_lat: object  # s per hop
    dispatch: object  # s per step (per call)
    tau: object  # s per layer per decode step
    tau_prefill: object  # s per layer per prefill step
    seq_overhead: object  # s per sequence per step
    devices_per_node: object  # the link's domain (an HGX node 8, a GB200 NVL72 72)
    fallback: object  # bool: the precision has no listed peak (a slower one's is used)
    memory_bandwidth: object = 0.0  # bytes/s as catalogued (the roofline's theoretical roof)
    # A GEMM whose weights are dequantised inside it (w4a16, an emulated format) takes this many
    # times its tensor-core time: 1 + dequant_overhead (docs/model.md, "Number formats").
    gemm_slowdown: object = 1.0
    format_warnings: object = 0  # Warn bits of the number format (emulated, renamed)
    net_bw: object = 0.0  # scale-out network per device, bytes/s per direction, × efficiency
    net_lat: object = 0.0  # s per step between nodes
    peer: object = False  # bool: every device reads every other's memory over the link
    switch: object = False  # bool: the link's switch reduces (NVLink SHARP)
    has_network: object = False  # bool: the catalogue gives a network (else net_* = link)
    kv_memory: object = 0.0  # the stack's KV pool rule: memory.RULE_CODES (0: capacity)
    budget_tokens: object = 0.0  # tokens of one step whose activations the runtime reserves
    workspace: object = 0.0  # bytes: CUDA graphs and library workspaces
    # weight streaming (0: none): weights that exceed the device's usable memory stream in from
    # external memory at this bandwidth, one layer resident at a time (docs/model.md)
    stream_bw: object = 0.0
    # The profile's GEMM efficiencies moved from its reference accelerator to this one by their
    # kernel curves (engine/catalog/kernels.py `gemm_transfer`): × the GEMMs' and experts'
    # FLOP/s, × the bandwidth the weights stream at.
    kernel_compute: object = 1.0
    kernel_bandwidth: object = 1.0


class Efficiencies(NamedTuple):
    """How much of the ideal the kernels realise: the achievable fraction of the datasheet
    peak per operator class (operators.OP_CLASSES), and the fraction of the achieved memory
    bandwidth decode attention's KV reads reach (each KV head is read once: what the kernels
    lose is this efficiency, never bytes that do not exist)."""

    gemm: object
    attention: object
    expert: object
    other: object
    kv_bandwidth: object = 1.0


class PrefillOp(NamedTuple):
    """One prefill operator's max(compute, memory) coefficients, seconds per unit."""

    count: object
    compute_per_token: object
    compute_per_seq: object
    compute_per_expert: object  # grouped-GEMM rows wasted per routed expert read
    memory_fixed: object  # weights read whatever the step
    memory_per_expert: object  # per routed expert touched
    memory_per_token: object
    memory_per_seq: object


class PrefillAttention(NamedTuple):
    """A prefill attention operator: PrefillOp's terms plus its keys."""

    op: PrefillOp
    window: object
    compute_per_key: object  # s per (token, key attended)
    flop_per_key: object


class PrefillSums(NamedTuple):
    """Σ count × coefficient over the prefill's operators (seconds, FLOPs, bytes)."""

    compute_per_token: object
    compute_per_seq: object
    compute_per_expert: object
    memory_fixed: object
    memory_per_expert: object
    memory_per_token: object
    memory_per_seq: object
    flop_per_token: object
    flop_per_seq: object
    bytes_fixed: object
    bytes_per_expert: object
    bytes_per_token: object
    bytes_per_seq: object


class DecodeOp(NamedTuple):
    """One decode operator's max(compute, memory) coefficients, seconds per unit."""

    count: object
    compute_per_seq: object
    compute_per_expert: object  # grouped-GEMM rows wasted per routed expert read
    memory_fixed: object
    memory_per_expert: object
    memory_per_seq: object


class DecodeAttention(NamedTuple):
    """A decode attention operator: DecodeOp's terms plus lines in the (windowed) context."""

    op: DecodeOp
    window: object
    compute_per_key: object  # s per (sequence, context token)
    memory_per_key: object
    flop_per_key: object
    bytes_per_key: object


class DecodeSums(NamedTuple):
    """Σ count × coefficient over one decode step's operators (seconds, FLOPs, bytes)."""

    compute_per_seq: object
    compute_per_expert: object
    memory_fixed: object
    memory_per_expert: object
    memory_per_seq: object
    flop_per_seq: object
    bytes_fixed: object
    bytes_per_expert: object
    bytes_per_seq: object


class Folded(NamedTuple):
    """A deployment's coefficients (floats, or arrays over the deployment axes)."""

    s: Shapes
    prefill_ops: tuple[PrefillOp, ...]
    prefill_attention: tuple[PrefillAttention, ...]
    prefill_sums: PrefillSums
    decode_ops: tuple[DecodeOp, ...]
    decode_attention: tuple[DecodeAttention, ...]
    decode_sums: DecodeSums
    comm: parallel.Comm  # the step's collectives (parallel.comm_s prices them)
    overhead_prefill: object  # per-layer and dispatch overhead of a prefill step, s
    overhead_decode: object  # per-layer and dispatch overhead of a decode step, s
    overhead_per_seq: object  # s per sequence in a step (sampling, bookkeeping)
    weights: object  # weight bytes held by the fullest device
    kv_full: object  # KV bytes per token per layer, whole model
    kv_dev: object  # KV bytes per token per layer, one device
    stage: object  # layers on the fullest pipeline stage
    capacity: object
    usable: object
    static_warnings: object  # Warn bits that no batch or token changes
    devices: object
    bubble: object
    roofs: tuple = ()  # (peak, GEMM rate, bandwidth as catalogued, achievable bandwidth)
    experts: ExpertSplit = ExpertSplit()  # how the routed experts are spread
    runtime: object = 0.0  # activations at the token budget + workspace the stack sets aside
    micro: object = 1.0  # batches in flight under continuous batching: one per pipeline stage
    once: tuple = ()  # per decode_ops entry: runs once per step (embedding, final norm, LM head)
    once_prefill: tuple = ()  # the same, per prefill_ops entry


def rates(dev: Device, eta: Efficiencies) -> dict[str, object]:
    """Achievable FLOP/s per operator class: its datasheet peak (attention runs on 16-bit or
    wider activations: peak_attn) times its efficiency; the GEMMs' and experts' divided by the
    dequantisation's slowdown when their weights are widened inside the kernel."""
    return {
        "gemm": dev.peak * eta.gemm * dev.kernel_compute / dev.gemm_slowdown,
        "attention": dev.peak_attn * eta.attention,
        # a sparse-attention indexer's scores: low-precision GEMMs at the attention efficiency
        "index": dev.peak * eta.attention,
        "expert": dev.peak * eta.expert * dev.kernel_compute / dev.gemm_slowdown,
        "other": dev.peak * eta.other,
    }


def _sums(rows) -> tuple:
    """Σ count × row[i] over the rows for every column after the first (the count)."""
    counts, *columns = zip(*rows, strict=True)
    return tuple(sum(map(operator.mul, counts, column), 0.0) for column in columns)


def _fold_prefill(prefill: list[Template], rate_of: dict, bw: tuple) -> tuple:
    """The prefill's coefficients; `bw`: (memory bandwidth, the weights' bandwidth)."""
    bw, w_bw = bw
    ops, attention, rows = [], [], []
    for op in prefill:  # T new tokens from B sequences
        rate = rate_of[op.rate or op.cls]
        moved = op.weight_bytes_per_token + op.act_bytes_per_token + op.kv_bytes_per_token
        coef = PrefillOp(
            count=op.count,
            compute_per_token=op.flop_per_token / rate,
            compute_per_seq=op.flop_per_seq / rate,
            compute_per_expert=op.flop_per_expert / rate,
            memory_fixed=op.weight_bytes / w_bw,
            memory_per_expert=op.weight_bytes_per_expert / w_bw,
            memory_per_token=moved / bw,
            memory_per_seq=op.act_bytes_per_seq / bw,
        )
        rows.append(
            (
                *coef,
                op.flop_per_token,
                op.flop_per_seq,
                op.weight_bytes,
                op.weight_bytes_per_expert,
                moved,
                op.act_bytes_per_seq,
            )
        )
        if op.cls == "attention":
            per_key = op.flop_per_key
            attention.append(
                PrefillAttention(
                    op=coef, window=op.window, compute_per_key=per_key / rate, flop_per_key=per_key
                )
            )
        else:
            ops.append(coef)
    return tuple(ops), tuple(attention), PrefillSums(*_sums(rows))


def _fold_decode(decode: list[Template], rate_of: dict, bw: tuple, kv_bw) -> tuple:
    """The decode step's coefficients; `bw`: (memory bandwidth, the weights' bandwidth)."""
    bw, w_bw = bw
    ops, attention, rows = [], [], []
    for op in decode:  # one new token from each of B sequences
        rate = rate_of[op.rate or op.cls]
        moved = (
            op.weight_bytes_per_token
            + op.act_bytes_per_token
            + op.kv_bytes_per_token
            + op.act_bytes_per_seq
        )
        flops = op.flop_per_token + op.flop_per_seq
        coef = DecodeOp(
            count=op.count,
            compute_per_seq=flops / rate,
            compute_per_expert=op.flop_per_expert / rate,
            memory_fixed=op.weight_bytes / w_bw,
            memory_per_expert=op.weight_bytes_per_expert / w_bw,
            memory_per_seq=moved / bw,
        )
        rows.append((*coef, flops, op.weight_bytes, op.weight_bytes_per_expert, moved))
        if op.cls == "attention":
            fk, mk = op.flop_per_key, op.kv_bytes_per_key  # each KV head read once
            attention.append(
                DecodeAttention(
                    op=coef,
                    window=op.window,
                    compute_per_key=fk / rate,
                    memory_per_key=mk / kv_bw,
                    flop_per_key=fk,
                    bytes_per_key=mk,
                )
            )
        else:
            ops.append(coef)
    return tuple(ops), tuple(attention), DecodeSums(*_sums(rows))


def fold(s: Shapes, dev: Device, lay: Layout, eta: Efficiencies, xp, steps=None) -> Folded:
    """A deployment's coefficients.

    Args:
        s: the model's shapes (floats or arrays).
        dev: the accelerator's figures with the assumptions applied.
        lay: tp, pp, ep, attention DP and the bytes per weight, KV and activation element.
        eta: compute efficiency per operator class.
        xp: SCALAR or numpy.
        steps: operators.step_lists(s, lay, xp) if already built.
    """
    prefill, decode = steps or step_lists(s, lay, xp)
    rate_of = rates(dev, eta)
    streamed = streams_weights(s=s, dev=dev, lay=lay, decode=decode, xp=xp)
    # where the weights come from, at the bandwidth this accelerator's GEMMs stream them
    w_bw = xp.where(streamed, dev.stream_bw, dev.bandwidth * dev.kernel_bandwidth)
    pre = _fold_prefill(prefill, rate_of, (dev.bandwidth, w_bw))
    kv_bw = dev.bandwidth * eta.kv_bandwidth  # decode attention's KV reads
    dec = _fold_decode(decode=decode, rate_of=rate_of, bw=(dev.bandwidth, w_bw), kv_bw=kv_bw)
    roofs = (dev.peak, rate_of["gemm"], dev.memory_bandwidth, dev.bandwidth)
    *fixed, runtime = _fixed(s=s, dev=dev, lay=lay, decode=decode, xp=xp, streamed=streamed)
    experts = ExpertSplit(lay.ep, lay.imbalance)
    once = tuple(op.layers == "once" for op in decode if op.cls != "attention")
    once_prefill = tuple(op.layers == "once" for op in prefill if op.cls != "attention")
    return Folded(
        s,
        *pre,
        *dec,
        *fixed,
        roofs,
        experts,
        runtime,
        micro=lay.pp,
        once=once,
        once_prefill=once_prefill,
    )


def fabric_of(dev: Device) -> Fabric:
    """The links a device's collectives run on (engine/serving/collectives.py)."""
    return Fabric(
        link_bw=dev.link_bw,
        link_lat=dev.link_lat,
        net_bw=dev.net_bw,
        net_lat=dev.net_lat,
        domain=dev.devices_per_node,
        peer=dev.peer,
        switch=dev.switch,
    )


def _flags(s: Shapes, dev: Device, lay: Layout, xp) -> object:
    """The Warn bits no batch or token changes."""
    tp_local = local_layout(lay).tp
    devices, domain = lay.tp * lay.pp, dev.devices_per_node
    if xp is SCALAR:
        kv_replicated = not s.mla and s.kv_heads < tp_local
        latent_replicated = s.mla and tp_local > 1.5
        no_network = devices > domain and not dev.has_network
    else:
        kv_replicated = ~s.mla & (s.kv_heads < tp_local)
        latent_replicated = s.mla & (tp_local > 1.5)
        no_network = (devices > domain) & ~xp.asarray(dev.has_network, dtype=bool)
    flags = (
        (dev.fallback, Warn.PEAK_FALLBACK),
        (lay.tp > domain, Warn.TP_BEYOND_NODE),
        (kv_replicated, Warn.KV_HEAD_REPLICATED),
        (latent_replicated, Warn.LATENT_REPLICATED),
        (no_network, Warn.NO_NETWORK),
        ((lay.tp <= domain) & (devices > domain), Warn.STAGES_SPAN_NODES),
    )
    return sum(flag * int(bit) for flag, bit in flags) + dev.format_warnings


def streams_weights(s: Shapes, dev: Device, lay: Layout, decode, xp) -> object:
    """True where the device streams its weights: it has a weight stream and its weights
    exceed its memory less the runtime's reserve (docs/model.md, "Weight streaming")."""
    if xp is SCALAR and not dev.stream_bw:
        return False
    weights = parallel.weight_bytes_per_device(ops=decode, s=s, pp=lay.pp, xp=xp)
    return (dev.stream_bw > 0) & (weights > dev.capacity * (1.0 - dev.reserve))


def _fixed(s: Shapes, dev: Device, lay: Layout, decode, xp, streamed=False) -> tuple:
    """Communication, overhead, memory and warnings: the terms no batch or token changes (in
    Folded's order, then the runtime memory the stack's KV-pool rule sets aside).
    Under attention DP a device caches its own sequences' whole KV: 1/dp of the replica's.
    A device that streams its weights holds one layer's at a time."""
    tp, pp = lay.tp, lay.pp
    comm = parallel.comm_of(s=s, lay=lay, fabric=fabric_of(dev), xp=xp)
    tp_local = local_layout(lay).tp
    kv_full, kv_dev = kv_bytes_per_token_layer(s=s, kv_bytes=lay.kv_bytes, tp=tp_local, xp=xp)
    weights = parallel.weight_bytes_per_device(ops=decode, s=s, pp=pp, xp=xp)
    weights = xp.where(streamed, weights / s.layers, weights)
    activations = dev.budget_tokens * memory.activation_bytes_per_token(s=s, lay=lay, xp=xp)
    return (
        comm,
        s.layers * dev.tau_prefill + dev.dispatch,
        s.layers * dev.tau + dev.dispatch,
        dev.seq_overhead,
        weights,
        kv_full,
        kv_dev / lay.dp,
        parallel.stage_layers(s.layers, pp, xp),
        dev.capacity,
        memory.usable_bytes(dev=dev, weights=weights, activations=activations, xp=xp),
        _flags(s=s, dev=dev, lay=lay, xp=xp),
        tp * pp,
        parallel.bubble_fraction(pp),
        memory.runtime_bytes(dev=dev, activations=activations),
    )


def bound_code(parts, xp):
    """Index of the largest of (compute, memory, communication, overhead); the first on a tie."""
    if xp is SCALAR:
        return parts.index(max(parts))
    code, best = 0, parts[0]
    for i, part in enumerate(parts[1:], 1):
        code = xp.where(part > best, i, code)
        best = xp.maximum(best, part)
    return code


def evaluate(f: Folded, B, n_in, n_out, xp) -> dict:
    """Everything about a static batch of B sequences of n_in input and n_out output tokens (or
    a grid of them), in SI units: the keys of serve.METRICS' terms plus warning_bits."""
    out = _prefill(f=f, B=B, S=n_in, xp=xp)
    out.update(_decode(f=f, B=B, n_in=n_in, n_out=n_out, xp=xp))
    e2e = out["ttft_s"] + out.pop("decode_total_s")
    per_seq = cached_tokens(f.s, n_in + n_out, xp)  # Σ over layers, one sequence
    tokens = B * per_seq  # Σ over sequences and layers
    kv_device = tokens * f.kv_dev / f.s.layers * f.stage
    memory = f.weights + kv_device
    fits = memory <= f.usable
    late = (f.s.context_length < n_in + n_out) * int(Warn.BEYOND_CONTEXT)
    late = late + (n_out < 1.5) * int(Warn.NO_DECODE)
    per_s = B * n_out / e2e
    out.update(_roofline(f=f, out=out, B=B, xp=xp))
    out.update(
        {
            "kv_cache_bytes": tokens * f.kv_full,
            "kv_cache_bytes_per_device": kv_device,
            "weight_bytes_per_device": f.weights,
            "memory_per_device_bytes": memory,
            "memory_capacity_bytes": f.capacity,
            "usable_memory_bytes": f.usable,
            "runtime_memory_bytes": f.runtime + 0.0 * memory,
            "fits_in_memory": fits,
            "max_batch_size": max_batch(f, per_seq, xp),
            "devices": f.devices,
            "e2e_latency_s": e2e,
            "output_tokens_per_s": per_s,
            "output_tokens_per_s_per_gpu": per_s / f.devices,
            "tokens_per_s_per_user": 1.0 / out["tpot_s"],
            "pp_bubble_fraction": f.bubble,
            "warning_bits": f.static_warnings + (memory > f.usable) * int(Warn.DOES_NOT_FIT) + late,
        }
    )
    return out


def _roofline(f: Folded, out: dict, B, xp) -> dict:
    """A decode step on the accelerator's roofline: the roofs (datasheet peak; the GEMM rate
    and the bandwidth the profile achieves), the roof at the step's intensity, its MFU and its
    tokens/s."""
    peak, rate, bandwidth, achievable = f.roofs
    ai = out["decode_arithmetic_intensity_flop_per_byte"]
    return {
        "peak_flop_per_s": peak,
        "achievable_flop_per_s": rate,
        "memory_bandwidth_bytes_per_s": bandwidth,
        "achievable_bytes_per_s": achievable,
        "ridge_flop_per_byte": peak / bandwidth,
        "effective_ridge_flop_per_byte": rate / achievable,
        "decode_attainable_flop_per_s": xp.minimum(achievable * ai, rate),  # NaN stays NaN
        "decode_mfu": out["decode_achieved_flop_per_s"] / peak,
        "decode_tokens_per_s": B / out["tpot_s"],
    }


def max_batch(f: Folded, per_seq, xp):
    """The largest batch whose KV cache fits beside the weights at this request's tokens (0:
    not even one sequence), at most MAX_BATCH: the room divided by one sequence's cache,
    checked one step either way with the very expression `fits_in_memory` uses."""

    def memory(n):
        return f.weights + n * per_seq * f.kv_dev / f.s.layers * f.stage

    one = per_seq * f.kv_dev / f.s.layers * f.stage
    n = xp.minimum(xp.maximum(xp.floor((f.usable - f.weights) / one), 0.0), float(MAX_BATCH))
    n = xp.where((n < MAX_BATCH) & (memory(n + 1.0) <= f.usable), n + 1.0, n)
    return xp.where((n > 0) & (memory(n) > f.usable), n - 1.0, n)


def _prefill(f: Folded, B, S, xp) -> dict:
    """TTFT: the prefill of B prompts of S tokens (T = B·S new tokens) as one step."""
    T = B * S
    tau = rank_experts(f.s, f.experts, T, xp=xp)
    m = f.prefill_sums
    compute = m.compute_per_token * T + m.compute_per_seq * B + m.compute_per_expert * tau
    flops = m.flop_per_token * T + m.flop_per_seq * B
    t_ops = 0.0
    for count, per_token, per_seq, per_row, fixed, per_expert, mem_token, mem_seq in f.prefill_ops:
        memory = fixed + per_expert * tau + mem_token * T + mem_seq * B
        busy = per_token * T + per_seq * B + per_row * tau
        t_ops = t_ops + count * xp.maximum(busy, memory)
    for att in f.prefill_attention:
        count, per_token, per_seq, _, fixed, per_expert, mem_token, mem_seq = att.op
        keys = T * mean_keys(S, att.window, xp)  # keys attended, summed over the new tokens
        memory = fixed + per_expert * tau + mem_token * T + mem_seq * B
        busy = per_token * T + per_seq * B + att.compute_per_key * keys
        t_ops = t_ops + count * xp.maximum(busy, memory)
        compute = compute + count * att.compute_per_key * keys
        flops = flops + count * att.flop_per_key * keys
    memory = m.memory_fixed + m.memory_per_expert * tau + m.memory_per_token * T
    memory = memory + m.memory_per_seq * B
    comm = parallel.comm_s(f.comm, T, xp, prefill=True)
    overhead = f.overhead_prefill + f.overhead_per_seq * B
    ttft = t_ops + comm + overhead
    nbytes = m.bytes_fixed + m.bytes_per_expert * tau + m.bytes_per_token * T
    return {
        "ttft_s": ttft,
        "prefill_comm_s": comm,
        "prefill_overhead_share": overhead / ttft,
        "prefill_flop": flops,
        "prefill_bytes": nbytes + m.bytes_per_seq * B,
        "prefill_arithmetic_intensity_flop_per_byte": flops / (nbytes + m.bytes_per_seq * B),
        "prefill_achieved_flop_per_s": flops / ttft,
        "prefill_bound": bound_code((compute, memory, comm, overhead), xp),
    }


def _decode(f: Folded, B, n_in, n_out, xp) -> dict:
    """The O−1 decode steps of B sequences at contexts I+1 … I+O−1 (I = n_in, O = n_out), priced
    by the decode step (engine/serving/decode_step.py) and summed in closed form."""
    steps = n_out - 1.0
    run = static_batch(f, batch=B, context=n_in + 1.0, k=steps, xp=xp)
    total, comm, overhead, flops = run.seconds, run.comm_s, run.overhead_s, run.flop
    per = xp.maximum(steps, 1.0)  # O = 1: no step, and the means below are NaN
    none = steps < 0.5
    defined = xp.where(none, NAN, 1.0)  # times a mean: NaN without a step, else the mean itself
    tpot = total / per * defined
    code = bound_code((run.compute_s, run.memory_s, steps * comm, steps * overhead), xp)
    return {
        "decode_total_s": total,
        "tpot_s": tpot,
        "decode_comm_s": comm * defined,
        "decode_comm_share": comm / tpot,
        "decode_overhead_s": overhead,
        "decode_overhead_share": overhead / tpot,
        "decode_flop_per_step": flops / per * defined,
        "decode_bytes_per_step": run.bytes / per * defined,
        "decode_arithmetic_intensity_flop_per_byte": flops / (run.bytes + none) * defined,
        "decode_achieved_flop_per_s": flops / per / tpot * defined,
        "decode_bound": xp.where(none, 4, code),
        "experts_touched_per_layer": run.experts,
    }
