"""The decode step of the serving model: what one step of m sequences costs, and k such steps.

This is the one implementation of a decode step's time. `kernel.evaluate` sums a static batch's
steps with it (`static_batch`), the load simulator prices its runs of pure decode steps with it
(`decode_lines`, `decode_run_s`, through engine/serving/step.py), a mixed step's decode
attention is its `attention_s`, and the operator table and training price their operators with
its `operator_s`.

Every operator runs on its own roofline (Williams et al., "Roofline", CACM 2009): the larger of
its FLOPs at its class's achievable rate and its bytes at the achievable bandwidth
(`operator_s`). The kernel divides once per deployment (`kernel.fold`: seconds per sequence,
per routed expert touched and per key of context), so a decode step of m sequences costs

    fixed + Σ_attention count · max(compute0 + compute_per_key·X, memory0 + memory_per_key·X)

with `fixed` the context-free operators (projections, MLP or experts, norms, embedding, LM
head) each at its own max(compute, memory) (`operators_s`), the step's collectives and its
overheads (per layer and call, and per sequence); compute0 and memory0 an attention operator's
terms at no key (`attention_terms`); and X its keys, Σ over the m sequences of min(context,
window). A step is a max of two lines in X, so k steps whose keys grow by a fixed number per
step sum in closed form (engine/serving/closed_form.py): `decode_run_s` for the simulator's
runs (keys X + s·t in step t, no window crossed), `static_batch` for a static batch (B
sequences at one context c, c+1, …, each operator's keys B·min(c, w)). docs/model.md, "Serving
model" and "Serving under load". Floats or numpy arrays throughout (`xp`: engine/arrays.py);
`f` is a deployment's coefficients (engine/serving/kernel.py `Folded`), `a` one of its folded
decode attention operators (`kernel.DecodeAttention`).
"""

from __future__ import annotations

from typing import NamedTuple

from engine.arrays import INF, SCALAR
from engine.serving.closed_form import run_sum, step_sums
from engine.serving.operators import experts_touched, rank_experts
from engine.serving.parallel import comm_s


def operator_s(flop, moved_bytes, rate, bandwidth, xp):
    """An operator on its own roofline: (compute seconds, memory seconds, the larger of them).

    Args:
        flop: its FLOPs; moved_bytes: the bytes it reads and writes.
        rate: its class's achievable FLOP/s (kernel.rates); bandwidth: achievable bytes/s.
    """
    compute, memory = flop / rate, moved_bytes / bandwidth
    return compute, memory, xp.maximum(compute, memory)


def operators_s(f, m, experts, xp, start=0.0):
    """`start` plus, one by one, the context-free operators of a decode step of m sequences
    (projections, MLP or experts, norms, embedding, LM head), each count · max(compute, memory);
    `experts`: the routed experts the device reads per MoE layer (`rank_experts`).

    A static batch adds them onto 0 and the load simulator onto the step's collectives and
    overheads: the orders their figures have always been summed in, kept to the last bit (the
    simulator compares event times with arrival times; profiles are fitted to these figures)."""
    t = start
    for count, per_seq, per_row, weights, per_expert, mem_seq in f.decode_ops:
        busy = per_seq * m + per_row * experts
        t = t + count * xp.maximum(busy, weights + per_expert * experts + mem_seq * m)
    return t


def attention_terms(a, m, experts) -> tuple:
    """(compute0, memory0): a decode attention operator's seconds at no key in a step of m
    sequences (their per-sequence compute; weights, Q/O activations and the new K/V)."""
    op = a.op
    memory0 = op.memory_fixed + op.memory_per_expert * experts + op.memory_per_seq * m
    return op.compute_per_seq * m + op.compute_per_expert * experts, memory0


def attention_s(a, m, experts, keys, xp):
    """Seconds of one decode attention operator (not times its count) in a step of m sequences
    attending `keys`: the larger of its compute and memory lines."""
    compute0, memory0 = attention_terms(a, m, experts)
    return xp.maximum(compute0 + a.compute_per_key * keys, memory0 + a.memory_per_key * keys)


class AttentionLine(NamedTuple):
    """One decode attention operator of a step of m sequences, as two lines in its keys X
    (Σ over the sequences of min(context, window)): count·max(compute0 + compute_per_key·X,
    memory0 + memory_per_key·X)."""

    count: object
    compute0: object  # s: the per-sequence compute of the step's m sequences
    memory0: object  # s: weights, Q/O activations and the new K/V written
    compute_per_key: object
    memory_per_key: object
    window: object  # tokens (INF: global attention)


class DecodeLines(NamedTuple):
    """A decode step of m sequences: `fixed` seconds (the collectives, the overheads and the
    context-free operators) plus the attention lines."""

    fixed: object
    attention: tuple[AttentionLine, ...]


def in_flight(f, seqs, xp):
    """Batches a continuous-batching server keeps in flight in a step of `seqs` sequences: one
    per pipeline stage (`f.micro`), at most one per sequence, at least one. The stages work on
    different batches at once, so a step of m sequences lasts as long as one batch of m/μ takes
    to pass every stage (docs/model.md, "Pipeline stages under load")."""
    return xp.minimum(xp.maximum(seqs, 1.0), f.micro)


def paced(f, mu, xp):
    """A deployment's coefficients for one pipeline cycle of μ batches in flight: the fullest
    stage sets the pace. Each batch passes the operators that run once per step (the LM head
    on the last stage, the embedding on the first) on its own, so a cycle runs them μ times;
    the per-layer work, collectives and per-layer overheads take the fullest stage's share of
    the layers μ times, ⌈L/pp⌉/L · μ, never less than one pass (docs/model.md, "Pipeline
    stages under load")."""
    layers = pace_of_layers(f, mu, xp)

    def scaled(ops, once):
        return tuple(
            op._replace(count=op.count * (mu if first else layers))
            for op, first in zip(ops, once, strict=True)
        )

    def each_layer(attention):
        return tuple(a._replace(op=a.op._replace(count=a.op.count * layers)) for a in attention)

    return f._replace(
        prefill_ops=scaled(f.prefill_ops, f.once_prefill),
        decode_ops=scaled(f.decode_ops, f.once),
        prefill_attention=each_layer(f.prefill_attention),
        decode_attention=each_layer(f.decode_attention),
        overhead_prefill=f.overhead_prefill * layers,
        overhead_decode=f.overhead_decode * layers,
    )


def pace_of_layers(f, mu, xp):
    """The per-layer factor of `paced`: ⌈L/pp⌉/L · μ, at least 1 (the collectives' too)."""
    return xp.maximum(1.0, mu * f.stage / f.s.layers)


def decode_lines(f, m, xp) -> DecodeLines:
    """The lines of one decode step of m sequences (floats, or arrays over deployments or m):
    under pipeline parallelism those of one batch in flight, m/μ sequences (`in_flight`), with
    the keys still counted over all m (each line's per-key terms divided by μ) and the host's
    per-sequence work over all m (every sequence's token passes through it each step)."""
    mu = in_flight(f, m, xp)
    per_seq = f.overhead_per_seq * m  # the host handles every sequence's token, whatever batch
    m = m / mu
    comm = comm_s(f.comm, m, xp)
    if xp is not SCALAR or f.micro != 1.0:  # pipeline stages: the fullest one sets the pace
        comm = comm * pace_of_layers(f, mu, xp)
        f = paced(f, mu, xp)
    experts = rank_experts(f.s, f.experts, m, xp=xp)
    comm_overhead = comm + f.overhead_decode + per_seq
    fixed = operators_s(f, m, experts=experts, xp=xp, start=comm_overhead)
    lines = []
    for a in f.decode_attention:
        compute0, memory0 = attention_terms(a, m, experts)
        line = AttentionLine(
            count=a.op.count,
            compute0=compute0,
            memory0=memory0,
            compute_per_key=a.compute_per_key / mu,
            memory_per_key=a.memory_per_key / mu,
            window=a.window,
        )
        lines.append(line)
    return DecodeLines(fixed, tuple(lines))


def decode_step_s(lines: DecodeLines, keys: tuple, xp):
    """Seconds of one decode step whose attention operators attend `keys` (one X per line)."""
    t = lines.fixed
    for line, x in zip(lines.attention, keys, strict=True):
        t = t + line.count * xp.maximum(
            line.compute0 + line.compute_per_key * x, line.memory0 + line.memory_per_key * x
        )
    return t


def decode_run_s(lines: DecodeLines, keys: tuple, slopes: tuple, k, xp):
    """Seconds of k decode steps of the same sequences, the j-th line's keys X_j + s_j·t in step
    t = 0 … k−1 (s_j: sequences still inside its window), summed in closed form."""
    t = lines.fixed * k
    for line, x, s in zip(lines.attention, keys, slopes, strict=True):
        g0, m0 = line.compute0 + line.compute_per_key * x, line.memory0 + line.memory_per_key * x
        g1, m1 = line.compute_per_key * s, line.memory_per_key * s
        if xp is SCALAR:  # the simulator's hot path: the same sum, for floats
            total = run_sum(g0=g0, g1=g1, m0=m0, m1=m1, n=k)
        else:
            total = step_sums(g0=g0, g1=g1, m0=m0, m1=m1, a=0.0, b=k - 1.0, w=INF, xp=xp)[0]
        t = t + line.count * total
    return t


class StaticRun(NamedTuple):
    """k decode steps of a static batch, summed: their seconds, and the terms of their bound
    and roofline (seconds of compute and of memory over the operators, FLOPs, bytes)."""

    seconds: object
    compute_s: object
    memory_s: object
    flop: object
    bytes: object
    comm_s: object  # one step's collectives
    overhead_s: object  # one step's overheads
    experts: object  # routed experts the step's tokens touch per MoE layer (whole model)


def static_batch(f, batch, context, k, xp) -> StaticRun:
    """k decode steps of `batch` sequences at contexts context … context + k − 1 (k = 0: none),
    summed in closed form; their FLOPs, bytes, compute and memory are lines in the steps and
    in the keys attended."""
    experts = rank_experts(f.s, f.experts, batch, xp=xp)  # what the busiest device reads
    comm = comm_s(f.comm, batch, xp)  # the step's collectives and stage sends
    overhead = f.overhead_decode + f.overhead_per_seq * batch  # per layer, call and sequence
    m = f.decode_sums
    seconds = k * operators_s(f, batch, experts=experts, xp=xp)
    compute = k * m.compute_per_seq * batch + k * m.compute_per_expert * experts
    flops = k * m.flop_per_seq * batch
    memory = k * (m.memory_fixed + m.memory_per_expert * experts + m.memory_per_seq * batch)
    nbytes = k * (m.bytes_fixed + m.bytes_per_expert * experts + m.bytes_per_seq * batch)
    last = context + k - 1.0
    for a in f.decode_attention:  # keys batch·x, x = min(c, w)
        count = a.op.count
        compute0, memory0 = attention_terms(a, batch, experts)
        g1, m1 = a.compute_per_key * batch, a.memory_per_key * batch
        total, _, x = step_sums(
            g0=compute0, g1=g1, m0=memory0, m1=m1, a=context, b=last, w=a.window, xp=xp
        )
        seconds = seconds + count * total
        compute, memory = compute + count * g1 * x, memory + count * m1 * x
        flops = flops + count * a.flop_per_key * batch * x
        nbytes = nbytes + count * a.bytes_per_key * batch * x
    return StaticRun(
        seconds=seconds + k * (comm + overhead),
        compute_s=compute,
        memory_s=memory,
        flop=flops,
        bytes=nbytes,
        comm_s=comm,
        overhead_s=overhead,
        experts=experts_touched(f.s, batch),
    )
