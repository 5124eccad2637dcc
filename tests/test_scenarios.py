"""Typed scenarios: the engine's objects, and the keyword form mapped onto them in one place.

Every public serving function takes scenario objects (engine/scenarios/) or the same fields as
keywords; the two forms must give the same numbers, every field is declared by one class, and a
bad value is refused by the object that holds it, with the message the keyword form gives.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.scenarios.bind import bind
from engine.scenarios.deployment import Deployment, Deployments
from engine.scenarios.requests import Batch, BatchGrid, RateSearch, Traffic
from engine.scenarios.service import SLO, Scheduler
from engine.scenarios.workload import ClosedLoop, MaxThroughput, OpenLoop, Workload

DEP = Deployment("Llama-3.1-8B", "H100", tp=2, precision="fp8", profile="trtllm")
KW = {"tp": 2, "precision": "fp8", "profile": "trtllm"}


def test_serve_typed_equals_keywords():
    typed = engine.serve(DEP, Batch(input_tokens=1000, output_tokens=100, batch_size=8))
    keyword = engine.serve(
        "Llama-3.1-8B", "H100", batch_size=8, input_tokens=1000, output_tokens=100, **KW
    )
    assert typed.as_dict() == keyword.as_dict()


def test_serve_load_typed_equals_keywords_and_an_object_adjusted_by_keywords():
    w = Workload(input_tokens=500, output_tokens=50, arrivals=OpenLoop(2.0), requests=300)
    typed = engine.serve_load(DEP, w, scheduler=Scheduler(max_num_seqs=64), slo=SLO(ttft_ms=500.0))
    keyword = engine.serve_load(
        "Llama-3.1-8B",
        "H100",
        input_tokens=500,
        output_tokens=50,
        rate=2.0,
        requests=300,
        max_num_seqs=64,
        slo_ttft_ms=500.0,
        **KW,
    )
    assert typed.as_dict() == keyword.as_dict()
    faster = engine.serve_load(DEP, w, rate=4.0)  # the workload with its rate replaced
    assert faster["rate_per_s"] == 4.0 and faster["requests"] == 300


def test_max_rate_and_the_grids_typed_equal_keywords():
    w = Workload(input_tokens=500, output_tokens=50, arrivals=OpenLoop(burstiness=1.0))
    typed = engine.max_rate(DEP, dataclasses.replace(w, requests=300), search=RateSearch(0.05))
    keyword = engine.max_rate(
        "Llama-3.1-8B",
        "H100",
        input_tokens=500,
        output_tokens=50,
        requests=300,
        tolerance=0.05,
        **KW,
    )
    assert typed.as_dict() == keyword.as_dict()
    grid = Deployments.of_one(DEP)
    traffic = Traffic(input_tokens=500, output_tokens=50, rates=(1.0, 2.0))
    a = engine.load_grid(grid, traffic=traffic)
    b = engine.load_grid(
        ["Llama-3.1-8B"], ["H100"], rates=[1, 2], input_tokens=500, output_tokens=50, **KW
    )
    assert a.equals(b)
    plan = engine.load_plan(grid, traffic=dataclasses.replace(traffic, rates=None, target_rate=5))
    assert plan["replicas"].iloc[0] >= 1


def test_serve_sweep_operators_and_decode_typed_equal_keywords():
    grid = Deployments(models=("Llama-3.1-8B",), hardware=("H100", "A100"), precisions=("fp16",))
    batches = BatchGrid(input_tokens=(128, 512), output_tokens=16, batch_sizes=(1, 4))
    a = engine.serve_sweep(grid, batches=batches)
    b = engine.serve_sweep(
        "Llama-3.1-8B",
        ["H100", "A100"],
        batch_sizes=[1, 4],
        input_tokens=[128, 512],
        output_tokens=16,
    )
    assert a.equals(b) and len(a) == 8  # 2 accelerators × 2 batches × 2 input lengths
    ops = engine.operators(DEP, context=256)
    assert ops.equals(engine.operators("Llama-3.1-8B", "H100", context=256, **KW))
    # The tutorial's decode view takes the tutorial profile when the keyword form names none;
    # a Deployment always carries a profile (engine.DEFAULT_PROFILE unless named), so the typed
    # form names the tutorial's to ask for the same view.
    one = Deployment("Llama-3.1-8B", "A100", profile=engine.TUTORIAL_PROFILE)
    d = engine.decode(one, batch_size=4, context=2048)
    assert (
        d.as_dict() == engine.decode("Llama-3.1-8B", "A100", batch_size=4, context=2048).as_dict()
    )


@settings(max_examples=25, deadline=None)
@given(
    tp=st.sampled_from([1, 2, 4, 8]),
    batch=st.integers(1, 256),
    i=st.integers(1, 8000),
    o=st.integers(1, 2000),
    eta=st.floats(0.1, 1.0),
)
def test_any_serve_is_the_same_typed_or_by_keywords(tp, batch, i, o, eta):
    dep = Deployment("Llama-3.1-70B", "H100", tp=tp, overrides={"efficiency": eta})
    typed = engine.serve(dep, Batch(input_tokens=i, output_tokens=o, batch_size=batch))
    keyword = engine.serve(
        "Llama-3.1-70B",
        "H100",
        tp=tp,
        efficiency=eta,
        batch_size=batch,
        input_tokens=i,
        output_tokens=o,
    )
    assert repr(typed.as_dict()) == repr(keyword.as_dict())  # NaN-safe: O = 1 has no TPOT


def test_each_keyword_goes_to_the_object_that_declares_it():
    dep, w, sched, slo = bind(
        ("Llama-3.1-8B", "H100"),
        {
            "tp": 2,
            "efficiency": 0.6,
            "concurrency": 8,
            "input_tokens": 100,
            "output_tokens": 10,
            "max_num_seqs": 32,
            "slo_tpot_ms_p99": 50.0,
        },
        Deployment,
        Workload,
        Scheduler,
        SLO,
    )
    assert (dep.tp, dep.overrides) == (2, (("efficiency", 0.6),))
    assert w.arrivals == ClosedLoop(8) and sched.max_num_seqs == 32 and slo.tpot_ms == 50.0
    assert slo.ttft_ms == 2000.0  # the default, said once (engine/scenarios/service.py)


def test_no_keyword_is_declared_by_two_classes_of_one_call():
    calls = [
        (Deployment, Workload, Scheduler, SLO, RateSearch),
        (Deployments, Traffic, Scheduler, SLO),
        (Deployments, BatchGrid),
        (Deployment, Batch),
    ]
    for kinds in calls:
        seen: dict[str, str] = {}
        for kind in kinds:
            for name in kind.keywords():
                assert name not in seen, f"{name}: {seen.get(name)} and {kind.__name__}"
                seen[name] = kind.__name__


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: engine.serve(DEP, Batch(10, 10), batchsize=4), "unknown assumption or argument"),
        (lambda: engine.serve(DEP, "H100"), "a Deployment names its model and hardware"),
        (lambda: engine.serve(DEP, input_tokens=10), "Batch: give output_tokens"),
        (lambda: Deployment("Llama-3.1-8B", "H100", tp=0), "tp: expected a whole number"),
        (lambda: Deployment("Llama-3.1-8B", "H100", precision="fp7"), "unknown precision"),
        (lambda: Deployment.of(model="x", hardware="y", warp=9), "unknown"),
        (lambda: Workload.of(input_tokens=1, output_tokens=1, rate=1, concurrency=2), "exactly"),
        (lambda: Workload(10, 10, ClosedLoop(100), requests=50), "leave none to measure"),
        (lambda: Workload.of(input_tokens=1, output_tokens=1, concurrency=4, burstiness=2), "open"),
        (lambda: OpenLoop(rate_per_s=0), "rate: expected a number of requests per second above"),
        (lambda: SLO(ttft_ms=-1.0), "slo_ttft_ms: expected a number of ms above 0"),
        (lambda: Scheduler(kv_policy="lru"), "kv_policy must be one of"),
        (lambda: SLO.of(slo_ttft_ms=1.0, slo_ttft_ms_p90=2.0), "given twice"),
        (lambda: Traffic(input_tokens=1, output_tokens=1, rates=[0]), "rates: expected numbers"),
        (lambda: RateSearch(tolerance=0.9), "tolerance: expected a fraction"),
    ],
)
def test_bad_values_are_refused_by_the_object_that_holds_them(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_the_keyword_forms_arrivals():
    of = Workload.of
    assert of(input_tokens=1, output_tokens=1, concurrency="max").arrivals == MaxThroughput()
    assert of(input_tokens=1, output_tokens=1, rate=3, burstiness=0.5).arrivals == OpenLoop(
        3.0, 0.5
    )
    # the keyword form's default burstiness with a closed loop changes nothing
    assert of(input_tokens=1, output_tokens=1, concurrency=2, burstiness=1.0).mode == "closed"
    w = of(input_tokens=10, output_tokens=5, rate=2.0, requests=100)
    assert w.at_rate(7.0).rate_per_s == 7.0 and w.at_rate(7.0).requests == 100


def test_remembered_calls_never_take_true_for_one():
    kw = {"input_tokens": 100, "output_tokens": 10}
    engine.serve("Llama-3.1-8B", "H100", tp=1, **kw)  # remembered with tp = 1
    with pytest.raises(ValueError, match="tp: expected a whole number"):
        engine.serve("Llama-3.1-8B", "H100", tp=True, **kw)  # True == 1, hashes alike
