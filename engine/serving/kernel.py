"""The serving model's kernel: whole requests from operator templates, in two stages.

`fold` takes everything a deployment fixes (the model's operator templates on TP×PP devices,
the accelerator's rates and links, the precision and the assumptions) to coefficients in
seconds and bytes per new token, per sequence and per key of context, with their sums over the
operators. `evaluate` then applies a static batch of B sequences with I input and O output
tokens: the prefill of B·I tokens, then O−1 decode steps at contexts I+1 … I+O−1 summed in
closed form (engine/serving/closed_form.py). Only each operator's max(compute, memory) needs a
pass over the operators; every other total is linear in the batch and tokens.

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
from engine.report.messages import N_
from engine.serving import parallel
from engine.serving.closed_form import step_sums
from engine.serving.operators import (
    OP_CLASSES,
    Layout,
    Template,
    experts_touched,
    kv_read_factor,
    mean_keys,
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


WARNING_TEXT = {
    Warn.PEAK_FALLBACK: N_(
        "no peak listed for this precision: a slower one's is used (see peak_precision)"
    ),
    Warn.TP_BEYOND_NODE: N_(
        "tp beyond one node's devices: all-reduces modelled on the in-node link (optimistic)"
    ),
    Warn.DOES_NOT_FIT: N_(
        "does not fit: memory per device exceeds the usable memory (capacity less the reserve)"
    ),
    Warn.BEYOND_CONTEXT: N_("input + output tokens exceed the model's trained context length"),
    Warn.NO_DECODE: N_(
        "one output token: the prefill produces it and no decode step runs, so "
        "TPOT and tokens/s per user are undefined (NaN)"
    ),
    Warn.KV_HEAD_REPLICATED: N_(
        "fewer KV heads than tensor-parallel devices: each device holds a replicated KV head"
    ),
    Warn.LATENT_REPLICATED: N_(
        "MLA's latent KV cache is replicated on every tensor-parallel device"
    ),
}
WARNINGS = tuple(WARNING_TEXT[w] for w in Warn)  # in bit order


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
    devices_per_node: object
    fallback: object  # bool: the precision has no listed peak (a slower one's is used)
    memory_bandwidth: object = 0.0  # bytes/s as catalogued (the roofline's theoretical roof)


class Efficiencies(NamedTuple):
    """How much of the ideal the kernels realise: the achievable fraction of the datasheet
    peak per operator class (operators.OP_CLASSES), and the share of grouped-query
    attention's KV read saving that decode kernels realise."""

    gemm: object
    attention: object
    expert: object
    other: object
    kv_reuse: object = 1.0


class PrefillOp(NamedTuple):
    """One prefill operator's max(compute, memory) coefficients, seconds per unit."""

    count: object
    compute_per_token: object
    compute_per_seq: object
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
    comm: tuple  # (fixed s, s per new token) of one step
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


def rates(dev: Device, eta: Efficiencies) -> dict[str, object]:
    """Achievable FLOP/s per operator class: its datasheet peak (attention runs on 16-bit or
    wider activations: peak_attn) times its efficiency."""
    return {
        cls: (dev.peak_attn if cls == "attention" else dev.peak) * getattr(eta, cls)
        for cls in OP_CLASSES
    }


def _sums(rows) -> tuple:
    """Σ count × row[i] over the rows for every column after the first (the count)."""
    counts, *columns = zip(*rows, strict=True)
    return tuple(sum(map(operator.mul, counts, column), 0.0) for column in columns)


def _fold_prefill(prefill: list[Template], rate_of: dict, bw) -> tuple:
    ops, attention, rows = [], [], []
    for op in prefill:  # T new tokens from B sequences
        rate = rate_of[op.cls]
        moved = op.weight_bytes_per_token + op.act_bytes_per_token + op.kv_bytes_per_token
        coef = PrefillOp(op.count, op.flop_per_token / rate, op.flop_per_seq / rate,
                         op.weight_bytes / bw, op.weight_bytes_per_expert / bw, moved / bw,
                         op.act_bytes_per_seq / bw)  # fmt: skip
        rows.append((*coef, op.flop_per_token, op.flop_per_seq, op.weight_bytes,
                     op.weight_bytes_per_expert, moved, op.act_bytes_per_seq))  # fmt: skip
        if op.cls == "attention":
            per_key = op.flop_per_key
            attention.append(PrefillAttention(coef, op.window, per_key / rate, per_key))
        else:
            ops.append(coef)
    return tuple(ops), tuple(attention), PrefillSums(*_sums(rows))


def _fold_decode(decode: list[Template], rate_of: dict, bw, kv_factor) -> tuple:
    ops, attention, rows = [], [], []
    for op in decode:  # one new token from each of B sequences
        rate = rate_of[op.cls]
        moved = (
            op.weight_bytes_per_token
            + op.act_bytes_per_token
            + op.kv_bytes_per_token
            + op.act_bytes_per_seq
        )
        flops = op.flop_per_token + op.flop_per_seq
        coef = DecodeOp(op.count, flops / rate, op.weight_bytes / bw,
                        op.weight_bytes_per_expert / bw, moved / bw)  # fmt: skip
        rows.append((*coef, flops, op.weight_bytes, op.weight_bytes_per_expert, moved))
        if op.cls == "attention":
            fk, mk = op.flop_per_key, op.kv_bytes_per_key * kv_factor  # KV re-reads (GQA)
            attention.append(DecodeAttention(coef, op.window, fk / rate, mk / bw, fk, mk))
        else:
            ops.append(coef)
    return tuple(ops), tuple(attention), DecodeSums(*_sums(rows))


def fold(s: Shapes, dev: Device, lay: Layout, eta: Efficiencies, xp, steps=None) -> Folded:
    """A deployment's coefficients.

    Args:
        s: the model's shapes (floats or arrays).
        dev: the accelerator's figures with the assumptions applied.
        lay: tp, pp and the bytes per weight, KV and activation element.
        eta: compute efficiency per operator class.
        xp: SCALAR or numpy.
        steps: operators.step_lists(s, lay, xp) if already built.
    """
    prefill, decode = steps or step_lists(s, lay, xp)
    rate_of = rates(dev, eta)
    pre = _fold_prefill(prefill, rate_of, dev.bandwidth)
    kv_factor = kv_read_factor(s, lay.tp, eta.kv_reuse, xp)
    dec = _fold_decode(decode, rate_of, dev.bandwidth, kv_factor)
    roofs = (dev.peak, rate_of["gemm"], dev.memory_bandwidth, dev.bandwidth)
    return Folded(s, *pre, *dec, *_fixed(s, dev, lay, decode, xp), roofs)


def _fixed(s: Shapes, dev: Device, lay: Layout, decode, xp) -> tuple:
    """Communication, overhead, memory and warnings: the terms no batch or token changes."""
    tp, pp = lay.tp, lay.pp
    comm = parallel.comm_line(s, tp, pp, lay.act_bytes, dev.link_bw, dev.link_lat, xp)
    kv_full, kv_dev = kv_bytes_per_token_layer(s, lay.kv_bytes, tp, xp)
    flags = (
        (dev.fallback, Warn.PEAK_FALLBACK),
        (tp > dev.devices_per_node, Warn.TP_BEYOND_NODE),
        (~s.mla & (s.kv_heads < tp) if xp is not SCALAR else (not s.mla and s.kv_heads < tp),
         Warn.KV_HEAD_REPLICATED),
        (s.mla & (tp > 1.5) if xp is not SCALAR else (s.mla and tp > 1.5),
         Warn.LATENT_REPLICATED),
    )  # fmt: skip
    bits = sum(flag * int(bit) for flag, bit in flags)
    return (
        comm,
        s.layers * dev.tau_prefill + dev.dispatch,
        s.layers * dev.tau + dev.dispatch,
        dev.seq_overhead,
        parallel.weight_bytes_per_device(decode, s, pp, xp),
        kv_full,
        kv_dev,
        parallel.stage_layers(s.layers, pp, xp),
        dev.capacity,
        dev.capacity * (1.0 - dev.reserve),
        bits,
        tp * pp,
        parallel.bubble_fraction(pp),
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
    out = _prefill(f, B, n_in, xp) | _decode(f, B, n_in, n_out, xp)
    e2e = out["ttft_s"] + out.pop("decode_total_s")
    per_seq = cached_tokens(f.s, n_in + n_out, xp)  # Σ over layers, one sequence
    tokens = B * per_seq  # Σ over sequences and layers
    kv_device = tokens * f.kv_dev / f.s.layers * f.stage
    memory = f.weights + kv_device
    fits = memory <= f.usable
    late = (f.s.context_length < n_in + n_out) * int(Warn.BEYOND_CONTEXT)
    late = late + (n_out < 1.5) * int(Warn.NO_DECODE)
    per_s = B * n_out / e2e
    return (
        out
        | _roofline(f, out, B, xp)
        | {
            "kv_cache_bytes": tokens * f.kv_full,
            "kv_cache_bytes_per_device": kv_device,
            "weight_bytes_per_device": f.weights,
            "memory_per_device_bytes": memory,
            "memory_capacity_bytes": f.capacity,
            "usable_memory_bytes": f.usable,
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


def _roofline(f: Folded, out: dict, B, xp) -> dict:
    """A decode step on the accelerator's roofline: the roofs (datasheet peak; the GEMM rate
    and the bandwidth the profile achieves), the roof at the step's intensity, its MFU, its
    overhead and its tokens/s."""
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
        "decode_overhead_s": f.overhead_decode + f.overhead_per_seq * B,
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
    tau = experts_touched(f.s, T)
    m = f.prefill_sums
    compute = m.compute_per_token * T + m.compute_per_seq * B
    flops = m.flop_per_token * T + m.flop_per_seq * B
    t_ops = 0.0
    for count, per_token, per_seq, fixed, per_expert, mem_token, mem_seq in f.prefill_ops:
        memory = fixed + per_expert * tau + mem_token * T + mem_seq * B
        t_ops = t_ops + count * xp.maximum(per_token * T + per_seq * B, memory)
    for att in f.prefill_attention:
        count, per_token, per_seq, fixed, per_expert, mem_token, mem_seq = att.op
        keys = T * mean_keys(S, att.window, xp)  # keys attended, summed over the new tokens
        memory = fixed + per_expert * tau + mem_token * T + mem_seq * B
        busy = per_token * T + per_seq * B + att.compute_per_key * keys
        t_ops = t_ops + count * xp.maximum(busy, memory)
        compute = compute + count * att.compute_per_key * keys
        flops = flops + count * att.flop_per_key * keys
    memory = m.memory_fixed + m.memory_per_expert * tau + m.memory_per_token * T
    memory = memory + m.memory_per_seq * B
    comm = f.comm[0] + f.comm[1] * T
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
    """The O−1 decode steps of B sequences at contexts I+1 … I+O−1 (I = n_in, O = n_out), summed
    in closed form."""
    a, b, steps = n_in + 1.0, n_in + n_out - 1.0, n_out - 1.0
    tau = experts_touched(f.s, B)
    one = 0.0  # one step of the context-independent operators
    for count, per_seq, fixed, per_expert, mem_seq in f.decode_ops:
        one = one + count * xp.maximum(per_seq * B, fixed + per_expert * tau + mem_seq * B)
    m = f.decode_sums
    t_ops, compute, flops = steps * one, steps * m.compute_per_seq * B, steps * m.flop_per_seq * B
    memory = steps * (m.memory_fixed + m.memory_per_expert * tau + m.memory_per_seq * B)
    nbytes = steps * (m.bytes_fixed + m.bytes_per_expert * tau + m.bytes_per_seq * B)
    for att in f.decode_attention:  # lines in x = min(c, w)
        k, per_seq, fixed, per_expert, mem_seq = att.op
        g1, m1 = att.compute_per_key * B, att.memory_per_key * B
        m0 = fixed + per_expert * tau + mem_seq * B
        t_sum, _, x = step_sums(per_seq * B, g1, m0, m1, a, b, att.window, xp)
        t_ops, compute, memory = t_ops + k * t_sum, compute + k * g1 * x, memory + k * m1 * x
        flops = flops + k * att.flop_per_key * B * x
        nbytes = nbytes + k * att.bytes_per_key * B * x
    comm = f.comm[0] + f.comm[1] * B
    overhead = f.overhead_decode + f.overhead_per_seq * B  # per decode step
    total = t_ops + steps * (comm + overhead)
    per = xp.maximum(steps, 1.0)  # O = 1: no step; the means below are NaN then
    none = steps < 0.5
    tpot = xp.where(none, NAN, total / per)
    code = bound_code((compute, memory, steps * comm, steps * overhead), xp)
    return {
        "decode_total_s": total,
        "tpot_s": tpot,
        "decode_comm_s": xp.where(none, NAN, comm),
        "decode_comm_share": comm / tpot,
        "decode_overhead_share": overhead / tpot,
        "decode_flop_per_step": xp.where(none, NAN, flops / per),
        "decode_bytes_per_step": xp.where(none, NAN, nbytes / per),
        "decode_arithmetic_intensity_flop_per_byte": xp.where(none, NAN, flops / (nbytes + none)),
        "decode_achieved_flop_per_s": xp.where(none, NAN, flops / per / tpot),
        "decode_bound": xp.where(none, 4, code),
        "experts_touched_per_layer": tau,
    }
