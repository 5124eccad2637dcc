"""The serving model's one decode step (engine/serving/decode_step.py): a static batch's closed
form is the sum of its steps one by one, sliding windows and experts included, and is what
`engine.serve` charges; the operator rule by hand."""

from __future__ import annotations

import numpy as np
import pytest
from test_load_step import folded

from engine import serve
from engine.arrays import SCALAR
from engine.serving.decode_step import decode_lines, decode_step_s, operator_s, static_batch
from engine.serving.step import windows

CASES = [  # a sliding window crossed mid-request, a mixture of experts, MLA on 8 devices
    ("Gemma-2-9B", "H200", 1),
    ("Mixtral-8x7B", "H100", 2),
    ("DeepSeek-V3", "H200", 8),
]


@pytest.mark.parametrize(("model", "hardware", "tp"), CASES)
def test_a_static_batch_is_its_steps_summed_one_by_one(model, hardware, tp):
    # contexts 4000 … 4299: Gemma 2's 4096-token window fills at step 96
    B, first, k = 5, 4000, 300
    f = folded(model, hardware, tp)
    lines = decode_lines(f, float(B), SCALAR)
    loop = sum(
        decode_step_s(lines, tuple(B * min(c, w) for w in windows(f)), SCALAR)
        for c in range(first, first + k)
    )
    run = static_batch(f, batch=float(B), context=float(first), k=float(k), xp=SCALAR)
    assert run.seconds == pytest.approx(loop, rel=1e-12)
    r = serve(model, hardware, tp=tp, batch_size=B, input_tokens=first - 1, output_tokens=k + 1)
    assert run.seconds * 1e3 == pytest.approx(r["e2e_latency_ms"] - r["ttft_ms"], rel=1e-12)


def test_no_output_step_costs_nothing():
    f = folded("Llama-3.1-8B", "H100")
    run = static_batch(f, batch=3.0, context=101.0, k=0.0, xp=SCALAR)
    assert (run.seconds, run.flop, run.bytes) == (0.0, 0.0, 0.0)  # 0·x, exactly


def test_the_static_batch_runs_on_arrays_as_on_floats():
    f = folded("Gemma-2-9B", "H200")
    batch = np.array([1.0, 7.0, 64.0])
    k = np.array([0.0, 10.0, 5000.0])
    many = static_batch(f, batch=batch, context=1000.0, k=k, xp=np)
    for i in range(3):
        one = static_batch(f, batch=batch[i], context=1000.0, k=k[i], xp=SCALAR)
        assert many.seconds[i] == pytest.approx(one.seconds, rel=1e-12)
        assert many.flop[i] == pytest.approx(one.flop, rel=1e-12)


def test_operator_roofline_by_hand():
    # 2e9 FLOP at 1e12 FLOP/s = 2 ms; 6e9 B at 2e12 B/s = 3 ms: memory-bound, 3 ms
    assert operator_s(flop=2e9, moved_bytes=6e9, rate=1e12, bandwidth=2e12, xp=SCALAR) == (
        pytest.approx(2e-3),
        pytest.approx(3e-3),
        pytest.approx(3e-3),
    )
    # arrays: one compute-bound and one memory-bound operator at once
    _, _, t = operator_s(
        flop=np.array([8e9, 1e9]),
        moved_bytes=np.array([2e9, 4e9]),
        rate=1e12,
        bandwidth=1e12,
        xp=np,
    )
    assert t == pytest.approx([8e-3, 4e-3])
