"""The serving model's kernel: whole requests from operator templates, in two stages.

`fold` takes everything a deployment fixes (the model's operator templates on TP×PP devices,
the accelerator's rates and links, the precision and the assumptions) to coefficients in
seconds and bytes per new token, per sequence and per key of context, with their sums over the
operators. `evaluate` then applies a static batch of B sequences with I input and O output
tokens: the prefill of B·I tokens, then O−1 decode steps at contexts I+1 … I+O−1 summed in
closed form (engine/closed_form.py). Only each operator's max(compute, memory) needs a pass over
the operators; every other total is linear in the batch and tokens.

Both stages run on Python floats (`xp=ops.SCALAR`: a scalar `serve` folds once per deployment
and evaluates in microseconds) or on numpy arrays (a sweep: coefficients over the deployment
axes broadcast against the batch and token axes), so the two agree. docs/model.md, "Serving
model", has the model and its conventions.
"""

from __future__ import annotations

import operator
from typing import NamedTuple

from engine.serving import operators as ops
from engine.serving import parallel
from engine.serving.closed_form import step_sums

# Row-level warnings, one bit each (the sweep keeps the bits; the text is looked up once).
WARNINGS = (
    "no peak listed for this precision: a slower one's is used (see peak_precision)",
    "tp beyond one node's devices: all-reduces modelled on the in-node link (optimistic)",
    "does not fit: memory per device exceeds the usable memory (capacity less the reserve)",
    "input + output tokens exceed the model's trained context length",
    "one output token: the prefill produces it and no decode step runs, so TPOT and "
    "tokens/s per user are undefined (NaN)",
    "fewer KV heads than tensor-parallel devices: each device holds a replicated KV head",
    "MLA's latent KV cache is replicated on every tensor-parallel device",
)
NAN = float("nan")


class Folded(NamedTuple):
    """A deployment's coefficients (floats, or arrays over the deployment axes).

    Operators: per operator, only what its own max(compute, memory) needs, seconds per unit;
    sums: Σ count × coefficient over every operator of the phase, for the linear totals.
    """

    s: dict  # the shapes (layers, window, experts, context length)
    pre_ops: tuple  # (k, gt, gb, mw, mx, mt, mb): per new token, per sequence, fixed
    pre_attn: tuple  # (k, gt, gb, mw, mx, mt, mb, w, gk, fk): attention, per key attended
    pre_sums: tuple  # Gt, Gb, Mw, Mx, Mt, Mb (s), Ft, Fb (FLOP), Yw, Yx, Yt, Yb (bytes)
    dec_ops: tuple  # (k, g, mw, mx, m): context-independent operators, per sequence
    dec_attn: tuple  # (k, w, g, mw, mx, m, gk, mk, fk, yk): attention, lines in the context
    dec_sums: tuple  # G, Mw, Mx, M (s), F (FLOP), Yw, Yx, Y (bytes)
    comm: tuple  # (fixed s, s per new token) of one step
    overhead: object  # per-layer and dispatch overhead of one step, s
    weights: object  # weight bytes held by the fullest device
    kv_full: object  # KV bytes per token per layer, whole model
    kv_dev: object  # KV bytes per token per layer, one device
    stage: object  # layers on the fullest pipeline stage
    capacity: object
    usable: object
    static_bits: object  # the WARNINGS that do not depend on the batch or tokens
    devices: object
    bubble: object


def rates(hw: dict, eta: dict) -> dict:
    """Achievable FLOP/s per operator class: its datasheet peak (attention runs on 16-bit or
    wider activations: peak_attn) times its efficiency."""
    return {c: (hw["peak_attn"] if c == "attention" else hw["peak"]) * e for c, e in eta.items()}


def _sums(rows) -> tuple:
    """Σ k × row[i] over the rows for every column after the first (k)."""
    counts, *columns = zip(*rows, strict=True)
    return tuple(sum(map(operator.mul, counts, column), 0.0) for column in columns)


def fold(s: dict, hw: dict, sc: dict, eta: dict, xp, steps=None) -> Folded:
    """A deployment's coefficients.

    Args:
        s: ops.shape_values() plus context_length (floats or arrays).
        hw: peak, peak_attn (FLOP/s), bandwidth (bytes/s, times the bandwidth efficiency),
            capacity (bytes), reserve, link_bw (bytes/s, times the link efficiency), link_lat
            (s), dispatch (s), tau (s per layer), devices_per_node, fallback (0/1).
        sc: tp, pp and bw, b_kv, ba (bytes per weight, KV and activation element).
        eta: serve_inputs.eta_by_class().
        xp: ops.SCALAR or numpy.
        steps: ops.step_lists(s, sc, xp) if already built.
    """
    prefill, decode = steps or ops.step_lists(s, sc, xp)
    rate_of, bw = rates(hw, eta), hw["bandwidth"]
    pre_ops, pre_attn, pre_rows = [], [], []
    for op in prefill:  # T new tokens from B sequences
        rate, moved = rate_of[op.cls], op.wt + op.mt + op.kt
        t = (op.count, op.ft / rate, op.fb / rate, op.mw / bw, op.wx / bw, moved / bw, op.mb / bw)
        pre_rows.append((*t, op.ft, op.fb, op.mw, op.wx, moved, op.mb))
        if op.cls == "attention":
            pre_attn.append((*t, op.w, op.fk / rate, op.fk))
        else:
            pre_ops.append(t)
    dec_ops, dec_attn, dec_rows = [], [], []
    for op in decode:  # one new token from each of B sequences
        rate, moved, flops = rate_of[op.cls], op.wt + op.mt + op.kt + op.mb, op.ft + op.fb
        t = (op.count, flops / rate, op.mw / bw, op.wx / bw, moved / bw)
        dec_rows.append((*t, flops, op.mw, op.wx, moved))
        if op.cls == "attention":
            dec_attn.append((*t[:1], op.w, *t[1:], op.fk / rate, op.mk / bw, op.fk, op.mk))
        else:
            dec_ops.append(t)
    return Folded(
        s, tuple(pre_ops), tuple(pre_attn), _sums(pre_rows), tuple(dec_ops), tuple(dec_attn),
        _sums(dec_rows), *_fixed(s, hw, sc, decode, xp),
    )  # fmt: skip


def _fixed(s, hw, sc, decode, xp) -> tuple:
    """Communication, overhead, memory and warnings: the terms no batch or token changes."""
    tp, pp = sc["tp"], sc["pp"]
    comm = parallel.comm_line(s, tp, pp, sc["ba"], hw["link_bw"], hw["link_lat"])
    kv_full, kv_dev = ops.kv_bytes_per_token_layer(s, tp, sc["b_kv"], xp)
    flags = (
        hw["fallback"] > 0,
        tp > hw["devices_per_node"],
        (s["mla"] < 0.5) & (s["K"] < tp),
        (s["mla"] > 0.5) & (tp > 1.5),
    )
    bits = sum(flag * (1 << i) for flag, i in zip(flags, (0, 1, 5, 6), strict=True))
    return (
        comm,
        s["L"] * hw["tau"] + hw["dispatch"],
        parallel.weight_bytes_per_device(decode, s, pp, xp),
        kv_full,
        kv_dev,
        parallel.stage_layers(s["L"], pp, xp),
        hw["capacity"],
        hw["capacity"] * (1.0 - hw["reserve"]),
        bits,
        tp * pp,
        parallel.bubble_fraction(pp),
    )


def bound_code(parts, xp):
    """Index of the largest of (compute, memory, communication, overhead); the first on a tie."""
    if xp is ops.SCALAR:
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
    tokens = B * parallel.cached_tokens(f.s, n_in + n_out, xp)  # Σ over sequences and layers
    kv_device = tokens * f.kv_dev / f.s["L"] * f.stage
    memory = f.weights + kv_device
    fits = memory <= f.usable
    late = (f.s["context_length"] < n_in + n_out) * 8 + (n_out < 1.5) * 16
    per_s = B * n_out / e2e
    return out | {
        "kv_cache_bytes": tokens * f.kv_full,
        "kv_cache_bytes_per_device": kv_device,
        "weight_bytes_per_device": f.weights,
        "memory_per_device_bytes": memory,
        "memory_capacity_bytes": f.capacity,
        "usable_memory_bytes": f.usable,
        "fits_in_memory": fits,
        "devices": f.devices,
        "e2e_latency_s": e2e,
        "output_tokens_per_s": per_s,
        "output_tokens_per_s_per_gpu": per_s / f.devices,
        "tokens_per_s_per_user": 1.0 / out["tpot_s"],
        "pp_bubble_fraction": f.bubble,
        "warning_bits": f.static_bits + (memory > f.usable) * 4 + late,
    }


def _prefill(f: Folded, B, S, xp) -> dict:
    """TTFT: the prefill of B prompts of S tokens (T = B·S new tokens) as one step."""
    T = B * S
    tau = ops.experts_touched(f.s, T)
    Gt, Gb, Mw, Mx, Mt, Mb, Ft, Fb, Yw, Yx, Yt, Yb = f.pre_sums
    compute, flops, t_ops = Gt * T + Gb * B, Ft * T + Fb * B, 0.0
    for k, gt, gb, mw, mx, mt, mb in f.pre_ops:
        t_ops = t_ops + k * xp.maximum(gt * T + gb * B, mw + mx * tau + mt * T + mb * B)
    for k, gt, gb, mw, mx, mt, mb, w, gk, fk in f.pre_attn:
        keys = T * ops.mean_keys(S, w, xp)  # keys attended, summed over the new tokens
        g = gt * T + gb * B + gk * keys
        t_ops = t_ops + k * xp.maximum(g, mw + mx * tau + mt * T + mb * B)
        compute, flops = compute + k * gk * keys, flops + k * fk * keys
    memory = Mw + Mx * tau + Mt * T + Mb * B
    comm = f.comm[0] + f.comm[1] * T
    ttft = t_ops + comm + f.overhead
    return {
        "ttft_s": ttft,
        "prefill_comm_s": comm,
        "prefill_overhead_share": f.overhead / ttft,
        "prefill_flop": flops,
        "prefill_bytes": Yw + Yx * tau + Yt * T + Yb * B,
        "prefill_bound": bound_code((compute, memory, comm, f.overhead), xp),
    }


def _decode(f: Folded, B, n_in, n_out, xp) -> dict:
    """The O−1 decode steps of B sequences at contexts I+1 … I+O−1 (I = n_in, O = n_out), summed
    in closed form."""
    a, b, steps = n_in + 1.0, n_in + n_out - 1.0, n_out - 1.0
    tau = ops.experts_touched(f.s, B)
    one = 0.0  # one step of the context-independent operators
    for k, g, mw, mx, m in f.dec_ops:
        one = one + k * xp.maximum(g * B, mw + mx * tau + m * B)
    G, Mw, Mx, M, F, Yw, Yx, Y = f.dec_sums
    t_ops, compute, flops = steps * one, steps * G * B, steps * F * B
    memory, nbytes = steps * (Mw + Mx * tau + M * B), steps * (Yw + Yx * tau + Y * B)
    for k, w, g, mw, mx, m, gk, mk, fk, yk in f.dec_attn:  # lines in x = min(c, w)
        g1, m1 = gk * B, mk * B
        t_sum, _, x = step_sums(g * B, g1, mw + mx * tau + m * B, m1, a, b, w, xp)
        t_ops, compute, memory = t_ops + k * t_sum, compute + k * g1 * x, memory + k * m1 * x
        flops, nbytes = flops + k * fk * B * x, nbytes + k * yk * B * x
    comm = f.comm[0] + f.comm[1] * B
    total = t_ops + steps * (comm + f.overhead)
    per = xp.maximum(steps, 1.0)  # O = 1: no step; the means below are NaN then
    none = steps < 0.5
    tpot = xp.where(none, NAN, total / per)
    code = bound_code((compute, memory, steps * comm, steps * f.overhead), xp)
    return {
        "decode_total_s": total,
        "tpot_s": tpot,
        "decode_comm_s": xp.where(none, NAN, comm),
        "decode_comm_share": comm / tpot,
        "decode_overhead_share": f.overhead / tpot,
        "decode_flop_per_step": xp.where(none, NAN, flops / per),
        "decode_bytes_per_step": xp.where(none, NAN, nbytes / per),
        "decode_bound": xp.where(none, 4, code),
        "experts_touched_per_layer": tau,
    }


def request_terms(s: dict, hw: dict, sc: dict, eta: dict, xp, steps=None) -> dict:
    """`evaluate(fold(...))`: sc also carries B, I and O (floats or arrays)."""
    return evaluate(fold(s, hw, sc, eta, xp, steps), sc["B"], sc["I"], sc["O"], xp)
