"""Hypothesis properties of the single-model solve (docs/model.md): monotonicity, consistency,
conservation, the regime rule and the exact crossover batch."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine import Assumptions, HardwareSpec, ModelSpec
from engine.checks import MAX_BATCH
from engine.roofline.solve import solve_specs

positive = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False)
hardware = st.builds(
    lambda peak, bw, cap, d, tdp: HardwareSpec(
        id="h",
        name="H",
        peak_flop_per_s={"fp16": peak * 1e12, "fp32": peak * 1e11},
        memory_bandwidth_bytes_per_s=bw * 1e11,
        memory_capacity_bytes=cap * 1e9,
        dispatch_overhead_s=d * 1e-5,
        tdp_w=tdp,
        source="test",
        interconnect_name="none",
        interconnect_bandwidth_bytes_per_s=0.0,
        interconnect_latency_s=0.0,
        devices_per_node=1,
    ),
    positive,
    positive,
    positive,
    positive,
    positive,
)
models = st.builds(
    lambda p, f, n: ModelSpec(
        id="m",
        name="M",
        params=p * 1e7,
        flops_per_sample=f * 1e9,
        flop_convention="mac1",
        layers=n,
        source="test",
    ),
    positive,
    positive,
    st.integers(1, 500),
)
assumptions = st.builds(
    Assumptions,
    efficiency=st.floats(min_value=0.01, max_value=1.0),
    layer_overhead_s=st.floats(min_value=0.0, max_value=1e-3),
    activation_fraction=st.floats(min_value=0.0, max_value=10.0),
    flop_convention=st.sampled_from(["catalog", "mac2"]),
)
batches = st.integers(1, 100_000)
precisions = st.sampled_from(engine.PRECISIONS)


@settings(max_examples=200)
@given(models, hardware, batches, batches, precisions, assumptions)
def test_latency_grows_with_batch_and_throughput_is_consistent(m, h, b1, b2, p, a):
    lo, hi = sorted((b1, b2))
    r_lo, r_hi = (
        solve_specs(model=m, hw=h, batch_size=lo, precision=p, assumptions=a),
        solve_specs(model=m, hw=h, batch_size=hi, precision=p, assumptions=a),
    )
    assert r_hi.latency_s >= r_lo.latency_s * (1 - 1e-12)
    assert r_lo.throughput_per_s == pytest.approx(lo / r_lo.latency_s)


@settings(max_examples=200)
@given(models, hardware, batches, precisions, assumptions)
def test_bottleneck_agrees_with_effective_ridge(m, h, b, p, a):
    r = solve_specs(model=m, hw=h, batch_size=b, precision=p, assumptions=a)
    ai, ridge_eff = r.arithmetic_intensity_flop_per_byte, r.effective_ridge_flop_per_byte
    if not math.isclose(ai, ridge_eff, rel_tol=1e-9):
        assert (r.bottleneck == "compute") == (ai > ridge_eff)
    assert r.ridge_flop_per_byte >= ridge_eff * (1 - 1e-12)


@settings(max_examples=200)
@given(models, hardware, batches, precisions, assumptions)
def test_roof_is_above_the_operating_point_and_latency_is_conserved(m, h, b, p, a):
    r = solve_specs(model=m, hw=h, batch_size=b, precision=p, assumptions=a)
    assert r.attainable_flop_per_s >= r.achieved_flop_per_s * (1 - 1e-12)
    assert 0 <= r.mfu <= 1 and 0 <= r.overhead_share <= 1
    # conservation: latency is exactly the binding term plus the fixed overhead
    assert r.latency_s == pytest.approx(max(r.t_compute_s, r.t_memory_s) + r.t_overhead_s)
    # units: FLOP/s = FLOP / s, FLOP/byte = FLOP / byte
    assert r.achieved_flop_per_s == pytest.approx(r.flops / r.latency_s)
    assert r.arithmetic_intensity_flop_per_byte == pytest.approx(r.flops / r.bytes)
    assert r.energy_j > 0


@settings(max_examples=100)
@given(models, hardware, batches, assumptions)
def test_lower_precision_never_moves_more_bytes(m, h, b, a):
    byte_counts = [
        solve_specs(model=m, hw=h, batch_size=b, precision=p, assumptions=a).bytes
        for p in ("fp32", "fp16", "fp8", "int4")
    ]
    assert byte_counts == sorted(byte_counts, reverse=True)


@settings(max_examples=100)
@given(models, hardware, batches, precisions, assumptions)
def test_more_efficiency_never_slows_down(m, h, b, p, a):
    better = Assumptions(
        efficiency=min(1.0, a.efficiency * 1.5),
        layer_overhead_s=a.layer_overhead_s,
        activation_fraction=a.activation_fraction,
        flop_convention=a.flop_convention,
    )
    assert (
        solve_specs(model=m, hw=h, batch_size=b, precision=p, assumptions=better).latency_s
        <= solve_specs(model=m, hw=h, batch_size=b, precision=p, assumptions=a).latency_s
    )


@settings(max_examples=200)
@given(models, hardware, batches, precisions, assumptions)
def test_regime_is_overhead_at_half_latency_else_the_bottleneck(m, h, b, p, a):
    r = solve_specs(model=m, hw=h, batch_size=b, precision=p, assumptions=a)
    expected = "overhead" if r.t_overhead_s / r.latency_s >= 0.5 else r.bottleneck
    assert r.regime == expected


@settings(max_examples=200)
@given(models, hardware, precisions, assumptions)
def test_compute_bound_batch_is_where_the_solve_flips(m, h, p, a):
    first = engine.compute_bound_batch(m, h, precision=p, assumptions=a)
    if first is None:  # latency is linear in batch, so never compute-bound up to the cap
        assert (
            solve_specs(model=m, hw=h, batch_size=MAX_BATCH, precision=p, assumptions=a).bottleneck
            == "memory"
        )
        return
    assert (
        solve_specs(model=m, hw=h, batch_size=first, precision=p, assumptions=a).bottleneck
        == "compute"
    )
    if first > 1:
        assert (
            solve_specs(model=m, hw=h, batch_size=first - 1, precision=p, assumptions=a).bottleneck
            == "memory"
        )
