"""The scalar `serve` folds a deployment once and caches it (engine/serving/inputs.py `scenario`,
engine/serving/kernel.py `fold`/`evaluate`): the cache must never change an answer or let a bad
argument through, and a call with spec objects (a page's) hits the entry a call by id made."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import serve
from engine.catalog.resolve import default_catalog
from engine.scenarios.deployment import Deployment
from engine.serving import inputs as serve_inputs

REQUEST = {"batch_size": 8, "input_tokens": 512, "output_tokens": 64}


def _uncached(model: str, hardware: str, **kw) -> dict:
    """The same scenario folded afresh (the cache emptied first), through copies of the specs."""
    cat = default_catalog()
    serve_inputs.forget_scenarios()
    m, hw = replace(cat.find_model(model)), replace(cat.find_hardware(hardware))
    return serve(m, hw, **kw).as_dict()


def test_a_call_with_spec_objects_hits_the_entry_a_call_by_id_made():
    cat = default_catalog()
    serve_inputs.forget_scenarios()
    by_id = serve("Llama-3.1-8B", "A100", **REQUEST)
    before = serve_inputs._folded.cache_info()
    by_spec = serve(cat.find_model("Llama-3.1-8B"), cat.find_hardware("A100"), **REQUEST)
    copies = serve(
        replace(cat.find_model("Llama-3.1-8B")), replace(cat.hardware["A100"]), **REQUEST
    )
    after = serve_inputs._folded.cache_info()
    assert (after.hits - before.hits, after.currsize) == (2, before.currsize) == (2, 1)
    assert by_id.as_dict() == by_spec.as_dict() == copies.as_dict()


@settings(max_examples=40, deadline=None)
@given(
    model=st.sampled_from(["Llama-3.1-8B", "Mixtral-8x7B", "DeepSeek-V3", "Gemma-2-9B"]),
    tp=st.sampled_from([1, 2, 8]),
    batch=st.integers(1, 512),
    tokens=st.integers(1, 9000),
    out=st.integers(1, 3000),
)
def test_cached_and_uncached_answers_are_identical(model, tp, batch, tokens, out):
    kw = {"tp": tp, "batch_size": batch, "input_tokens": tokens, "output_tokens": out}
    first = serve(model, "H100", **kw).as_dict()
    again = serve(model, "H100", **kw).as_dict()  # from the cache
    fresh = _uncached(model, "H100", **kw)
    # NaN (one output token: no decode step) compares unequal to itself: compare as text
    assert repr(first) == repr(again) == repr(fresh)


def test_a_deployment_is_folded_once_and_reused_across_batches_and_tokens():
    dep = Deployment("Llama-3.1-70B", "H100", tp=4)
    one = serve_inputs.scenario(dep)
    assert serve_inputs.scenario(dep) is one
    small = serve("Llama-3.1-70B", "H100", tp=4, **REQUEST)
    big = serve("Llama-3.1-70B", "H100", tp=4, **(REQUEST | {"batch_size": 64}))
    assert serve_inputs.scenario(dep) is one
    assert big["output_tokens_per_s"] > small["output_tokens_per_s"]  # a different answer
    serve_inputs.forget_scenarios()
    again = serve_inputs.scenario(dep)
    assert again is not one and again.folded == one.folded  # folded afresh, the same figures


def test_the_cache_lets_no_bad_argument_through():
    serve("Llama-3.1-8B", "H100", tp=1, efficiency=1.0, **REQUEST)  # cached with tp 1, η 1.0
    with pytest.raises(ValueError, match="tp: expected a whole number"):
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


def test_the_cache_is_bounded():
    serve_inputs.forget_scenarios()
    for i in range(serve_inputs.SCENARIO_CACHE + 10):  # distinct deployments: efficiencies
        serve("Llama-3.2-1B", "H100", efficiency=0.5 + i / 1e5, **REQUEST)
    info = serve_inputs._folded.cache_info()
    assert info.currsize == serve_inputs.SCENARIO_CACHE and info.maxsize == info.currsize
    assert serve("Llama-3.1-8B", "H100", tp=8, **REQUEST)["tp"] == 8
