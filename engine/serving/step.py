"""One iteration of a continuous-batching server, priced from the kernel's coefficients.

A continuous-batching server (Yu et al., "Orca", OSDI 2022; vLLM, Kwon et al., SOSP 2023;
TensorRT-LLM's in-flight batching) runs one forward step after another. A step carries the
next token of every decoding sequence and, when the scheduler adds them, prompt chunks of
sequences in prefill, each with its own prior context. This module prices such a step from the
same folded coefficients (`engine/serving/kernel.py` `Folded`) that `evaluate` uses for a static
batch, and nothing else: every cost here is a `Folded` field times a count of tokens, sequences
or keys, with each operator's max(compute, memory), plus `f.comm` and the overheads (per layer
and call for a prefill or a decode step, and per sequence in the step). So

- a pure decode step of B sequences at context c costs exactly what `evaluate` charges per
  decode step (`decode_lines`, `decode_step_s`), and k such steps with contexts growing by one
  per sequence per step cost what `evaluate` sums in closed form (`decode_run_s`, with
  `engine/serving/closed_form.py`'s `step_sums`);
- a step that prefills B whole prompts of S tokens and decodes nothing costs exactly TTFT
  (`mixed_step_s`); tests/test_load_step.py checks both identities against `engine.serve`.

When the kernel's physics changes, this module is the one place to follow it. Conventions
(docs/model.md, "Serving under load"): the context-independent operators of a mixed step see all
T = m + n new tokens at once (weights read once: the reason continuous batching pays); attention
is two kernels, the decode one over the m sequences' keys and the prefill one over the chunks'
keys (each chunk token attends to its prompt's earlier tokens, FlashAttention-style), and a chunk
reads its prompt's earlier chunks from the cache at the decode operator's bytes per key.
Floats or numpy arrays throughout (`xp`: engine/arrays.py).
"""

from __future__ import annotations

from typing import NamedTuple

from engine.arrays import INF, SCALAR
from engine.serving.closed_form import run_sum, step_sums
from engine.serving.kernel import Folded
from engine.serving.operators import experts_touched


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
    """A decode step of m sequences: `fixed` seconds (context-free operators at their own
    max(compute, memory), communication and overheads) plus the attention lines."""

    fixed: object
    attention: tuple[AttentionLine, ...]


def decode_lines(f: Folded, m, xp) -> DecodeLines:
    """The lines of one decode step of m sequences (evaluate's `_decode` per step, unsummed)."""
    tau = experts_touched(f.s, m)
    fixed = f.comm[0] + f.comm[1] * m + f.overhead_decode + f.overhead_per_seq * m
    for count, per_seq, weights, per_expert, mem_seq in f.decode_ops:
        fixed = fixed + count * xp.maximum(per_seq * m, weights + per_expert * tau + mem_seq * m)
    lines = tuple(
        AttentionLine(a.op.count, a.op.compute_per_seq * m,
                      a.op.memory_fixed + a.op.memory_per_expert * tau + a.op.memory_per_seq * m,
                      a.compute_per_key, a.memory_per_key, a.window)
        for a in f.decode_attention
    )  # fmt: skip
    return DecodeLines(fixed, lines)


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
            total = run_sum(g0, g1, m0, m1, k)
        else:
            total = step_sums(g0, g1, m0, m1, 0.0, k - 1.0, INF, xp)[0]
        t = t + line.count * total
    return t


def chunk_keys(prior, n, w, xp):
    """Keys attended by a prompt chunk: Σ min(j, w) over its token positions j = prior+1 …
    prior+n (causal; w the window, INF for global). chunk_keys(0, S, w) = S·mean_keys(S, w)."""
    hi = xp.minimum(prior + n, w)
    rising = xp.maximum(hi - prior, 0.0)  # chunk tokens still inside the window
    return rising * (2.0 * prior + 1.0 + rising) / 2.0 + (n - rising) * xp.minimum(w, prior + n)


def mixed_step_s(f: Folded, xp, *, decode_seqs, decode_keys, prefill_tokens, prefill_seqs,
                 done_seqs, prefill_keys, prior_keys):  # fmt: skip
    """Seconds of one step: m decoding sequences plus prompt chunks.

    Args:
        f: the deployment's coefficients.
        xp: SCALAR or numpy.
        decode_seqs: m, sequences producing their next token (one new token each).
        decode_keys: per attention operator, Σ over the m sequences of min(context, window).
        prefill_tokens: n, prompt tokens in the step's chunks.
        prefill_seqs: sequences with a chunk in the step.
        done_seqs: of those, the ones whose prompt ends here (their first token: the LM head).
        prefill_keys: per attention operator, keys attended by the chunks (`chunk_keys`).
        prior_keys: per attention operator, earlier prompt tokens the chunks read from the cache.
    """
    T = decode_seqs + prefill_tokens
    seqs = decode_seqs + done_seqs  # sequences whose last position reaches the LM head
    tau = experts_touched(f.s, T)
    per_layer = xp.where(prefill_tokens > 0, f.overhead_prefill, f.overhead_decode)
    t = f.comm[0] + f.comm[1] * T + per_layer + f.overhead_per_seq * (decode_seqs + prefill_seqs)
    for count, per_token, per_seq, weights, per_expert, mem_token, mem_seq in f.prefill_ops:
        compute = per_token * T + per_seq * seqs
        t = t + count * xp.maximum(compute, weights + per_expert * tau + mem_token * T
                                   + mem_seq * seqs)  # fmt: skip
    parts = zip(f.prefill_attention, f.decode_attention, decode_keys, prefill_keys, prior_keys,
                strict=True)  # fmt: skip
    for pa, da, x, keys, prior in parts:
        count, per_seq, weights, per_expert, mem_seq = da.op
        decode = xp.maximum(per_seq * decode_seqs + da.compute_per_key * x,
                            weights + per_expert * tau + mem_seq * decode_seqs
                            + da.memory_per_key * x)  # fmt: skip
        _, p_token, p_seq, _, _, p_mem_token, p_mem_seq = pa.op
        prefill = xp.maximum(
            p_token * prefill_tokens + p_seq * prefill_seqs + pa.compute_per_key * keys,
            p_mem_token * prefill_tokens + p_mem_seq * prefill_seqs + da.memory_per_key * prior,
        )
        t = t + count * (decode + prefill)
    return t


def windows(f: Folded) -> tuple:
    """The attention operators' windows, in the order of every per-operator tuple here."""
    return tuple(a.window for a in f.decode_attention)
