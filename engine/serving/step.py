"""One iteration of a continuous-batching server, priced from the kernel's coefficients.

A continuous-batching server (Yu et al., "Orca", OSDI 2022; vLLM, Kwon et al., SOSP 2023;
TensorRT-LLM's in-flight batching) runs one forward step after another. A step carries the
next token of every decoding sequence and, when the scheduler adds them, prompt chunks of
sequences in prefill, each with its own prior context. This module prices such a step from the
same folded coefficients (`engine/serving/kernel.py` `Folded`) that `evaluate` uses for a static
batch, and nothing else: every cost here is a `Folded` field times a count of tokens, sequences
or keys, with each operator's max(compute, memory), plus the step's collectives (`f.comm`,
priced by engine/serving/parallel.py `comm_s`) and the overheads (per layer
and call for a prefill or a decode step, and per sequence in the step).

A step with no prompt chunk is the serving model's decode step (engine/serving/decode_step.py,
the one implementation that `evaluate` sums too; its `decode_lines`, `decode_step_s` and
`decode_run_s` are named here for the load simulator), so

- a pure decode step of B sequences at context c costs exactly what `evaluate` charges per
  decode step, and k such steps with contexts growing by one per sequence per step cost what
  `evaluate` sums in closed form;
- a step that prefills B whole prompts of S tokens and decodes nothing costs exactly TTFT
  (`mixed_step_s`); tests/test_load_step.py checks both identities against `engine.serve`.

Conventions (docs/model.md, "Serving under load"): the context-free operators of a mixed step
see all T = m + n new tokens at once (weights read once: the reason continuous batching pays);
attention is two kernels, the decode one over the m sequences' keys (the decode step's
`attention_s`) and the prefill one over the chunks' keys (each chunk token attends to its
prompt's earlier tokens, FlashAttention-style), and a chunk reads its prompt's earlier chunks
from the cache at the decode operator's bytes per key. Floats or numpy arrays throughout
(`xp`: engine/arrays.py).
"""

from __future__ import annotations

from engine.arrays import SCALAR
from engine.serving.decode_step import (
    attention_s,
    decode_lines,
    decode_run_s,
    decode_step_s,
    in_flight,
    pace_of_layers,
    paced,
)
from engine.serving.kernel import Folded
from engine.serving.operators import rank_experts
from engine.serving.parallel import comm_s

__all__ = [  # with the decode step's functions that the load simulator calls
    "chunk_keys",
    "decode_lines",
    "decode_run_s",
    "decode_step_s",
    "mixed_step_s",
    "windows",
]


def chunk_keys(prior, n, w, xp):
    """Keys attended by a prompt chunk: Σ min(j, w) over its token positions j = prior+1 …
    prior+n (causal; w the window, INF for global). chunk_keys(0, S, w) = S·mean_keys(S, w)."""
    hi = xp.minimum(prior + n, w)
    rising = xp.maximum(hi - prior, 0.0)  # chunk tokens still inside the window
    return rising * (2.0 * prior + 1.0 + rising) / 2.0 + (n - rising) * xp.minimum(w, prior + n)


def mixed_step_s(
    f: Folded,
    xp,
    *,
    decode_seqs,
    decode_keys,
    prefill_tokens,
    prefill_seqs,
    done_seqs,
    prefill_keys,
    prior_keys,
):
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
    host = f.overhead_per_seq * (decode_seqs + prefill_seqs)  # every sequence, every batch
    pace = 1.0
    if xp is not SCALAR or f.micro != 1.0:  # pipeline stages: one batch in flight of the μ
        mu = in_flight(f, decode_seqs + prefill_seqs, xp)
        decode_seqs, prefill_tokens = decode_seqs / mu, prefill_tokens / mu
        prefill_seqs, done_seqs = prefill_seqs / mu, done_seqs / mu
        decode_keys, prefill_keys, prior_keys = (
            tuple(x / mu for x in keys) for keys in (decode_keys, prefill_keys, prior_keys)
        )
        pace = pace_of_layers(f, mu, xp)  # the fullest stage sets the pace
        f = paced(f, mu, xp)
    T = decode_seqs + prefill_tokens
    seqs = decode_seqs + done_seqs  # sequences whose last position reaches the LM head
    tau = rank_experts(f.s, f.experts, T, xp=xp)
    per_layer = xp.where(prefill_tokens > 0, f.overhead_prefill, f.overhead_decode)
    t = comm_s(f.comm, T, xp, prefill=prefill_tokens > 0) * pace + per_layer + host
    for (
        count,
        per_token,
        per_seq,
        per_row,
        weights,
        per_expert,
        mem_token,
        mem_seq,
    ) in f.prefill_ops:
        compute = per_token * T + per_seq * seqs + per_row * tau
        t = t + count * xp.maximum(
            compute, weights + per_expert * tau + mem_token * T + mem_seq * seqs
        )
    parts = zip(
        f.prefill_attention, f.decode_attention, decode_keys, prefill_keys, prior_keys, strict=True
    )
    for pa, da, x, keys, prior in parts:
        decode = attention_s(da, m=decode_seqs, experts=tau, keys=x, xp=xp)
        count, p_token, p_seq, _, _, _, p_mem_token, p_mem_seq = pa.op
        prefill = xp.maximum(
            p_token * prefill_tokens + p_seq * prefill_seqs + pa.compute_per_key * keys,
            p_mem_token * prefill_tokens + p_mem_seq * prefill_seqs + da.memory_per_key * prior,
        )
        t = t + count * (decode + prefill)
    return t


def windows(f: Folded) -> tuple:
    """The attention operators' windows, in the order of every per-operator tuple here."""
    return tuple(a.window for a in f.decode_attention)
