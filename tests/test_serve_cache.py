"""The scalar `serve` folds a deployment once and caches it (engine/serve_inputs.py `scenario`,
engine/serve_kernel.py `fold`/`evaluate`): the cache must never change an answer or let a bad
argument through."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import serve
from engine.roofline.api import default_catalog
from engine.serving import inputs as serve_inputs

REQUEST = {"batch_size": 8, "input_tokens": 512, "output_tokens": 64}


def _uncached(model: str, hardware: str, **kw) -> dict:
    """The same scenario through specs (a HardwareSpec cannot be hashed: never cached)."""
    cat = default_catalog()
    return serve(cat.find_model(model), cat.find_hardware(hardware), **kw).as_dict()


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(["Llama-3.1-8B", "Mixtral-8x7B", "DeepSeek-V3", "Gemma-2-9B"]),
       tp=st.sampled_from([1, 2, 8]), batch=st.integers(1, 512), tokens=st.integers(1, 9000),
       out=st.integers(1, 3000))  # fmt: skip
def test_cached_and_uncached_answers_are_identical(model, tp, batch, tokens, out):
    kw = {"tp": tp, "batch_size": batch, "input_tokens": tokens, "output_tokens": out}
    first = serve(model, "H100", **kw).as_dict()
    again = serve(model, "H100", **kw).as_dict()  # from the cache
    fresh = _uncached(model, "H100", **kw)
    # NaN (one output token: no decode step) compares unequal to itself: compare as text
    assert repr(first) == repr(again) == repr(fresh)


def test_a_deployment_is_folded_once_and_reused_across_batches_and_tokens():
    args = ("Llama-3.1-70B", "H100", 4, 1, "fp16", None, "tutorial", None, None, {})
    one = serve_inputs.scenario(*args)
    assert serve_inputs.scenario(*args) is one
    small = serve("Llama-3.1-70B", "H100", tp=4, **REQUEST)
    big = serve("Llama-3.1-70B", "H100", tp=4, **(REQUEST | {"batch_size": 64}))
    assert serve_inputs.scenario(*args) is one
    assert big["output_tokens_per_s"] > small["output_tokens_per_s"]  # a different answer
    serve_inputs.forget_scenarios()
    again = serve_inputs.scenario(*args)
    assert again is not one and again.folded == one.folded  # folded afresh, the same figures


def test_the_cache_lets_no_bad_argument_through():
    serve("Llama-3.1-8B", "H100", tp=1, efficiency=1.0, **REQUEST)  # cached with tp 1, η 1.0
    with pytest.raises(ValueError, match="tp must be a whole number"):
        serve("Llama-3.1-8B", "H100", tp=True, **REQUEST)  # True == 1 and hashes alike
    with pytest.raises(ValueError, match="efficiency must be a number"):
        serve("Llama-3.1-8B", "H100", efficiency=True, **REQUEST)
    with pytest.raises(ValueError, match="batch_size"):
        serve("Llama-3.1-8B", "H100", tp=1, **(REQUEST | {"batch_size": 0}))


def test_another_catalogue_is_another_deployment():
    # The same ids in a catalogue whose H100 has half the bandwidth: a memory-bound decode
    # step (Llama-3.1-8B, batch 1) takes about twice as long, not the cached answer.
    cat = default_catalog()
    h100 = cat.hardware["H100"]
    slow = replace(h100, memory_bandwidth_bytes_per_s=h100.memory_bandwidth_bytes_per_s / 2)
    team = replace(cat, hardware={**cat.hardware, "H100": slow})
    kw = {"batch_size": 1, "input_tokens": 128, "output_tokens": 128}
    base = serve("Llama-3.1-8B", "H100", **kw)
    halved = serve("Llama-3.1-8B", "H100", catalog=team, **kw)
    assert halved["tpot_ms"] == pytest.approx(2 * base["tpot_ms"], rel=0.05)
    assert serve("Llama-3.1-8B", "H100", **kw)["tpot_ms"] == base["tpot_ms"]


def test_the_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(serve_inputs, "SCENARIO_CACHE", 3)
    monkeypatch.setattr(serve_inputs, "_SCENARIOS", {})
    for tp in (1, 2, 4, 8):
        serve("Llama-3.1-8B", "H100", tp=tp, **REQUEST)
        assert len(serve_inputs._SCENARIOS) <= 3
    assert serve("Llama-3.1-8B", "H100", tp=8, **REQUEST)["tp"] == 8
