"""One continuous-batching step (engine/serving/step.py): identities with `engine.serve` and a
hand-computed toy step. The identities move with the kernel's physics: they compare with
`serve`, never with copied numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_serving_operators import TOY, TOY_HW

from engine import DEFAULT_PROFILE, TUTORIAL_PROFILE, serve
from engine.arrays import SCALAR
from engine.scenarios.deployment import Deployment
from engine.serving import inputs as si
from engine.serving.decode_step import operators_s
from engine.serving.operators import mean_keys
from engine.serving.step import (
    chunk_keys,
    decode_lines,
    decode_run_s,
    decode_step_s,
    mixed_step_s,
    windows,
)

CASES = [  # a dense GQA model, sliding windows, a mixture of experts, MLA on 8 devices
    ("Llama-3.1-8B", "H200", 1),
    ("Gemma-2-9B", "H200", 1),
    ("Mixtral-8x7B", "H100", 2),
    ("DeepSeek-V3", "H200", 8),
]


def folded(model, hardware, tp=1, pp=1, profile=DEFAULT_PROFILE, **overrides):
    dep = Deployment(model, hardware, tp=tp, pp=pp, profile=profile, overrides=overrides)
    p = si.scenario(dep)
    return p.folded


def zeros(f):
    return tuple(0.0 for _ in windows(f))


def prefill_only(f, B, S):
    """A step that prefills B whole prompts of S tokens and decodes nothing."""
    keys = tuple(B * chunk_keys(prior=0.0, n=S, w=w, xp=SCALAR) for w in windows(f))
    return mixed_step_s(
        f,
        SCALAR,
        decode_seqs=0.0,
        decode_keys=zeros(f),
        prefill_tokens=B * S,
        prefill_seqs=B,
        done_seqs=B,
        prefill_keys=keys,
        prior_keys=zeros(f),
    )


@pytest.mark.parametrize(("model", "hardware", "tp"), CASES)
def test_a_decode_step_costs_what_serve_charges_per_step(model, hardware, tp):
    # O = 2: one decode step at context I + 1, so TPOT is that one step.
    B, n_in = 6, 700
    f = folded(model, hardware, tp)
    keys = tuple(B * min(n_in + 1.0, w) for w in windows(f))
    step = decode_step_s(decode_lines(f, B, SCALAR), keys, SCALAR)
    r = serve(model, hardware, tp=tp, batch_size=B, input_tokens=n_in, output_tokens=2)
    assert step * 1e3 == pytest.approx(r["tpot_ms"], rel=1e-12)
    # the same step priced as a mixed step with no prompt chunk
    mixed = mixed_step_s(
        f,
        SCALAR,
        decode_seqs=B,
        decode_keys=keys,
        prefill_tokens=0.0,
        prefill_seqs=0.0,
        done_seqs=0.0,
        prefill_keys=zeros(f),
        prior_keys=zeros(f),
    )
    assert mixed == pytest.approx(step, rel=1e-12)


@pytest.mark.parametrize(("model", "hardware", "tp"), CASES)
def test_a_whole_prompt_prefill_costs_ttft(model, hardware, tp):
    f = folded(model, hardware, tp)
    for B, S in ((1, 1), (1, 3000), (4, 5000)):  # 5000 > Gemma 2's 4096-token window
        r = serve(model, hardware, tp=tp, batch_size=B, input_tokens=S, output_tokens=4)
        assert prefill_only(f, B, S) * 1e3 == pytest.approx(r["ttft_ms"], rel=1e-12)


@pytest.mark.parametrize(("model", "hardware", "tp"), [c for c in CASES if c[0] != "Gemma-2-9B"])
def test_a_run_of_decode_steps_sums_to_serves_decode_time(model, hardware, tp):
    # O − 1 steps at contexts I+1 … I+O−1: keys B·(I+1) growing by B per step
    B, n_in, n_out = 3, 900, 257
    f = folded(model, hardware, tp)
    lines = decode_lines(f, B, SCALAR)
    total = decode_run_s(
        lines=lines, keys=(B * (n_in + 1.0),), slopes=(float(B),), k=n_out - 1.0, xp=SCALAR
    )
    r = serve(model, hardware, tp=tp, batch_size=B, input_tokens=n_in, output_tokens=n_out)
    assert total * 1e3 == pytest.approx(r["e2e_latency_ms"] - r["ttft_ms"], rel=1e-12)
    loop = sum(decode_step_s(lines, (B * (n_in + 1.0 + t),), SCALAR) for t in range(n_out - 1))
    assert total == pytest.approx(loop, rel=1e-12)


def test_toy_mixed_step_by_hand():
    # One sequence decoding at context 10 and a 2-token chunk of a new prompt (not its last):
    # T = 3 new tokens, one of them reaching the LM head. Every toy operator is memory-bound
    # (tests/test_serving_operators.py): bytes per operator, weights read once, activations per
    # token:
    #   norms 4·(16 + 32·3) = 448; qkv 2·(256 + 48·3) = 800; o_proj 2·(128 + 32·3) = 448;
    #   mlp 2·(768 + 160·3) = 2496; embedding 32·3 = 96; final norm 16 + 32·3 = 112;
    #   lm_head 512 + 80·1 = 592; decode attention 2·(32 + 16 + 16·10) = 416;
    #   chunk attention 2·(2 tokens·(32 Q/O + 16 K/V written + 16 read once)) = 256
    # = 5664 B at 1 GB/s = 5.664 µs, plus 2 layers · 10 µs: 25.664 µs (the tutorial profile's
    # full bandwidth and 10 µs per layer).
    f = folded(TOY, TOY_HW, profile=TUTORIAL_PROFILE)
    t = mixed_step_s(
        f,
        SCALAR,
        decode_seqs=1.0,
        decode_keys=(10.0,),
        prefill_tokens=2.0,
        prefill_seqs=1.0,
        done_seqs=0.0,
        prefill_keys=(3.0,),
        prior_keys=(0.0,),
    )
    assert t == pytest.approx(25.664e-6)
    # the chunk's next 2 tokens read the first 2 from the cache: 2 layers · 2 keys · 16 B more
    t2 = mixed_step_s(
        f,
        SCALAR,
        decode_seqs=1.0,
        decode_keys=(10.0,),
        prefill_tokens=2.0,
        prefill_seqs=1.0,
        done_seqs=0.0,
        prefill_keys=(7.0,),
        prior_keys=(2.0,),
    )
    assert t2 - t == pytest.approx(64e-9)


def test_pipeline_stages_each_carry_a_batch():
    """Under continuous batching a pp-stage deployment keeps pp batches in flight, one per
    stage: a step of m sequences lasts as long as one batch of m/pp takes to pass every stage
    (its keys too divided), at most one batch per sequence, plus what the fullest stage adds:
    each batch passes the once-per-step operators (the LM head) on its own, and the host
    handles every sequence. By hand, against the same kernel with one batch in flight."""
    f = folded("Llama-3.1-70B", "H100", tp=2, pp=4)  # 80 layers: 20 a stage, none extra
    one = f._replace(micro=1.0)
    assert f.micro == 4 and f.stage / f.s.layers == 0.25
    # the once-per-step operators of a batch of 16 (embedding, final norm, LM head), priced by
    # the kernel: the LM head reads 128,256 × 8,192 / tp 2 fp16 weights = 1.05 GB per device
    # at 3.35 TB/s × the profile's bandwidth efficiency 0.669299 × H100's fp16-to-fp8 GEMM
    # memory fraction 0.974838 (the kernel transfer) = 2.186 TB/s: 0.481 ms
    pairs = zip(one.decode_ops, one.once, strict=True)
    only = one._replace(decode_ops=tuple(op for op, first in pairs if first))
    once = operators_s(only, 16.0, experts=0.0, xp=SCALAR)
    assert once == pytest.approx(128256 * 8192 / 2 * 2 / (3.35e12 * 0.669299 * 0.974838), rel=0.03)
    host = one.overhead_per_seq  # s per sequence per step
    keys = tuple(64 * 3000.0 for _ in windows(f))  # 64 sequences at 3,000 tokens of context
    quarter = tuple(x / 4 for x in keys)
    step = decode_step_s(decode_lines(f, 64.0, SCALAR), keys, SCALAR)
    batch = decode_step_s(decode_lines(one, 16.0, SCALAR), quarter, SCALAR)
    assert step == pytest.approx(batch + 3 * once + 48 * host)  # 4 heads, 64 sequences' host
    # the simulator's mixed step with no prompt is the same step (the fast path prices it so)
    none = tuple(0.0 for _ in windows(f))
    mixed = mixed_step_s(
        f,
        SCALAR,
        decode_seqs=64.0,
        decode_keys=keys,
        prefill_tokens=0.0,
        prefill_seqs=0.0,
        done_seqs=0.0,
        prefill_keys=none,
        prior_keys=none,
    )
    assert mixed == pytest.approx(step)
    # two sequences fill two of the four stages' batches: each batch holds one sequence
    two = tuple(2 * 3000.0 for _ in windows(f))
    lone = decode_step_s(decode_lines(one, 1.0, SCALAR), tuple(x / 2 for x in two), SCALAR)
    single = operators_s(only, 1.0, experts=0.0, xp=SCALAR)
    assert decode_step_s(decode_lines(f, 2.0, SCALAR), two, SCALAR) == pytest.approx(
        lone + single + host
    )
    # one whole prompt cannot be split over the stages: its prefill is TTFT, as without PP
    assert prefill_only(f, 1, 4096) == pytest.approx(prefill_only(one, 1, 4096))


def test_chunk_keys_by_hand():
    # positions 4, 5, 6 attend 4 + 5 + 6 = 15 keys; with a window of 5: 4 + 5 + 5 = 14
    assert chunk_keys(prior=3.0, n=3.0, w=math.inf, xp=SCALAR) == 15
    assert chunk_keys(prior=3.0, n=3.0, w=5.0, xp=SCALAR) == 14
    assert chunk_keys(prior=10.0, n=2.0, w=5.0, xp=SCALAR) == 10  # wholly past the window


@settings(max_examples=200, deadline=None)
@given(
    prior=st.integers(0, 300),
    n=st.integers(1, 300),
    w=st.one_of(st.integers(1, 400), st.just(None)),
)
def test_chunk_keys_equal_a_loop_and_chunks_add_up(prior, n, w):
    win = math.inf if w is None else float(w)
    loop = sum(min(j, win) for j in range(prior + 1, prior + n + 1))
    assert chunk_keys(prior=float(prior), n=float(n), w=win, xp=SCALAR) == pytest.approx(loop)
    whole = chunk_keys(prior=0.0, n=float(prior + n), w=win, xp=SCALAR)
    parts = chunk_keys(prior=0.0, n=float(prior), w=win, xp=SCALAR) + chunk_keys(
        prior=float(prior), n=float(n), w=win, xp=SCALAR
    )
    assert parts == pytest.approx(whole)
    assert whole == pytest.approx((prior + n) * mean_keys(prior + n, win, SCALAR))


def test_step_functions_run_on_arrays():
    f = folded("Llama-3.1-8B", "A100")
    m = np.arange(1.0, 65.0)
    lines = decode_lines(f, m, np)
    keys = (m * 1000.0,)
    vector = decode_step_s(lines, keys, np)
    for i in (0, 31, 63):
        one = decode_step_s(decode_lines(f, m[i], SCALAR), (m[i] * 1000.0,), SCALAR)
        assert vector[i] == pytest.approx(one, rel=1e-12)
