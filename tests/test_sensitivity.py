"""Sensitivity, synthesis and weight streaming (engine/serving/sensitivity.py, the CS-3 entry).

Every figure is engine.serve re-run on a perturbed copy of the hardware or assumptions; these
tests check it against hand arithmetic, against the properties a roofline must have, and the
issue's "Must show" figures: Llama-3.1-70B batch-1 decode on an H200 is dominated by
bandwidth, and the synthesis of a 50 ms target is within 1 % of weights ÷ target.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine

CAT = engine.load_catalog(use_env=False)
REQUEST = engine.Batch(input_tokens=1024, output_tokens=128)
NO_OVERHEAD = {"layer_overhead_us": 0.0, "dispatch_overhead_ms": 0.0}
# The hand arithmetic below (efficiency 0.5, full bandwidth, 10 µs per layer, 10 % reserve) and
# the chapter's figures are the tutorial profile's: every deployment here names it.
TUTORIAL = engine.TUTORIAL_PROFILE


def dep(model="Llama-3.1-70B", hardware="H200", **overrides) -> engine.Deployment:
    return engine.Deployment(model, hardware, profile=TUTORIAL, catalog=CAT, overrides=overrides)


# --- sensitivity --------------------------------------------------------------------------


def test_70b_batch1_decode_on_h200_is_dominated_by_bandwidth():
    s = engine.sensitivity(dep(), REQUEST)
    base = engine.serve(dep(), REQUEST)
    e_bw = s.elasticity("memory_bandwidth", "tpot_ms")
    e_flops = s.elasticity("peak_flops", "tpot_ms")
    # TPOT = memory time + overhead; overhead = 80 layers × 10 µs + 10 µs dispatch = 0.81 ms.
    # The memory share is (TPOT − 0.81)/TPOT = (29.851 − 0.81)/29.851 = 0.9729, and a central
    # difference of ±10 % on a 1/β term gives (1/1.1 − 1/0.9)/0.2 = −1.0101: e = −0.9827.
    tpot = base["tpot_ms"]
    assert base["decode_overhead_ms"] == pytest.approx(0.81, rel=1e-9)
    share = (tpot - 0.81) / tpot
    assert e_bw == pytest.approx(-share * (1 / 0.9 - 1 / 1.1) / 0.2, rel=1e-6)
    assert e_bw == pytest.approx(-0.9827, abs=5e-4)
    # Every decode GEMM is memory-bound at batch 1 (intensity ~1 FLOP/B against a ridge of 103
    # at half of 989 TFLOP/s over 4.8 TB/s): ±10 % of FLOP/s moves no term.
    assert e_flops == 0.0
    assert abs(e_bw) > 100 * abs(e_flops) or e_flops == 0.0
    assert s.binding("tpot_ms") == "memory_bandwidth"


def test_prefill_is_dominated_by_flops():
    s = engine.sensitivity(dep(), REQUEST, engine.Perturbation(metrics=("ttft_ms",)))
    # a 1,024-token prefill of a 70 B model is compute-bound: TTFT ∝ 1/(Π·η), so peak FLOP/s
    # and the efficiency have the same elasticity, about −1.01 (the central difference).
    e_peak = s.elasticity("peak_flops", "ttft_ms")
    assert e_peak == pytest.approx(s.elasticity("efficiency", "ttft_ms"), rel=1e-9)
    assert -1.0101 < e_peak < -0.95
    assert s.binding("ttft_ms") in ("peak_flops", "efficiency")


def test_throughput_and_cost_move_against_latency():
    s = engine.sensitivity(dep(), REQUEST)
    # tokens/s = B·O / e2e, cost = price / tokens/s: raising bandwidth raises the first and
    # lowers the second.
    assert s.elasticity("memory_bandwidth", "output_tokens_per_s") > 0.5
    assert s.elasticity("memory_bandwidth", "cost_per_million_output_tokens_usd") < -0.5
    # H200 at $6.31/h: cost = 6.31 / (3600 × tokens/s) × 1e6
    rate = s.baseline["output_tokens_per_s"]
    cost = s.baseline["cost_per_million_output_tokens_usd"]
    assert cost == pytest.approx(6.31 / (3600 * rate) * 1e6, rel=1e-12)


def test_an_efficiency_at_its_ceiling_takes_the_one_sided_difference():
    s = engine.sensitivity(dep(efficiency=1.0), REQUEST, engine.Perturbation(metrics=("ttft_ms",)))
    row = next(r for r in s.rows if r["parameter"] == "efficiency")
    assert row["method"] == "backward" and row["at_plus_step"] is None
    assert row["elasticity"] < -0.9  # (T0 − T(0.9η))/T0/0.1 = (1 − 1/0.9)/0.1 ≈ −1.11 × share


@settings(max_examples=12, deadline=None)
@given(
    step=st.floats(min_value=0.001, max_value=0.3),
    model=st.sampled_from(["Llama-3.1-8B", "Llama-3.1-70B"]),
)
def test_pure_memory_bound_decode_has_bandwidth_elasticity_minus_one(step, model):
    # No overheads: TPOT = bytes/β exactly, so the central difference is
    # (1/(1+h) − 1/(1−h))/(2h) = −1/(1 − h²) → −1 as h → 0.
    p = engine.Perturbation(step=step, parameters=("memory_bandwidth",), metrics=("tpot_ms",))
    e = engine.sensitivity(dep(model, **NO_OVERHEAD), REQUEST, p).rows[0]["elasticity"]
    assert e == pytest.approx(-1.0 / (1.0 - step * step), rel=1e-9)


# --- synthesis ----------------------------------------------------------------------------


def test_50ms_synthesis_is_within_1pct_of_weights_over_target():
    for hardware in ("A100", "H200"):
        syn = engine.synthesis(dep(hardware=hardware), REQUEST)
        base = engine.serve(dep(hardware=hardware), REQUEST)
        weights = base["weight_bytes_per_device"]  # 141.1 GB: 70.6e9 params × 2 B
        assert weights == pytest.approx(141.1e9, rel=1e-3)
        required = syn.required("memory_bandwidth")
        # weights ÷ target = 141.1e9 / 0.05 s = 2.822 TB/s. The engine needs 2.834: a decode
        # step reads the KV cache too (0.36 GB at ~1,100 tokens) but only the rows it uses of
        # the 2.1 GB embedding table, and 0.81 ms of the 50 goes to overheads.
        assert required == pytest.approx(weights / 0.05, rel=0.01)
        # by hand from the engine's own step: bytes ÷ (target − overhead)
        bytes_per_step = base["decode_bytes_per_step"]
        hand = bytes_per_step / (0.050 - base["decode_overhead_ms"] * 1e-3)
        assert required == pytest.approx(hand, rel=2e-3)


def test_synthesis_on_the_a100_against_the_chapter():
    syn = engine.synthesis(dep(hardware="A100"), REQUEST)
    # Chapter 09: "approximately 2.8 TB/s ... 1.4x what the A100 provides" (2.039 TB/s).
    assert syn.required("memory_bandwidth") / 1e12 == pytest.approx(2.8, abs=0.05)
    row = next(r for r in syn.rows if r["parameter"] == "memory_bandwidth")
    assert row["required_over_catalogued"] == pytest.approx(1.39, abs=0.01)
    # No FLOP/s meets 50 ms on the A100's 2.039 TB/s (TPOT 69 ms is memory time); with
    # unbounded bandwidth, 2 × 70.6e9 FLOP at η = 0.5 in 50 − 0.815 ms needs ~5.7 TFLOP/s.
    flops = next(r for r in syn.rows if r["parameter"] == "peak_flops")
    assert flops["required"] is None
    assert flops["required_others_unbounded"] == pytest.approx(
        2 * 70.6e9 / 0.5 / (0.050 - 0.000815), rel=0.02
    )
    # memory: weights + KV at 1,152 tokens over the 90 % the runtime leaves:
    # (141.107e9 + 327,680 B × 1,152) / 0.9 = 157.2 GB
    kv = 2 * 80 * 8 * 128 * 2 * (1024 + 128)
    assert syn.required("memory_capacity") == pytest.approx((141.107e9 + kv) / 0.9, rel=1e-3)


@settings(max_examples=8, deadline=None)
@given(
    a=st.floats(min_value=20.0, max_value=500.0),
    b=st.floats(min_value=20.0, max_value=500.0),
)
def test_synthesis_is_monotone_in_the_target(a, b):
    low, high = sorted((a, b))
    t = lambda v: engine.Target(value=v, parameters=("memory_bandwidth",))  # noqa: E731
    need_tight = engine.synthesis(dep(), REQUEST, t(low)).required("memory_bandwidth")
    need_loose = engine.synthesis(dep(), REQUEST, t(high)).required("memory_bandwidth")
    assert need_tight >= need_loose * (1 - 1e-5)


def test_the_required_figure_meets_the_target_and_a_little_less_does_not():
    syn = engine.synthesis(dep(), REQUEST, engine.Target(value=20.0))
    hw = CAT.hardware["H200"]
    need = syn.required("memory_bandwidth")
    import dataclasses

    def tpot(bw):
        h = dataclasses.replace(hw, memory_bandwidth_bytes_per_s=bw)
        return engine.serve(dataclasses.replace(dep(), hardware=h), REQUEST)["tpot_ms"]

    assert tpot(need * 1.0001) <= 20.0 < tpot(need * 0.999)


def test_bad_names_and_steps_are_refused_with_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown parameter 'bogus'.*memory_bandwidth"):
        engine.Perturbation(parameters=("bogus",))
    with pytest.raises(ValueError, match="step"):
        engine.Perturbation(step=0.0)
    with pytest.raises(ValueError, match="target"):
        engine.Target(value=-5)
    with pytest.raises(ValueError, match="unknown metric"):
        engine.Target(metric="latency")
    # a target the request cannot have: one output token has no TPOT (it once reached scipy's
    # root finder, whose "function value ... is NaN" was the CLI's one line)
    one = engine.Batch(input_tokens=100, output_tokens=1)
    with pytest.raises(ValueError, match=r"tpot_ms: undefined for this request \(with one output"):
        engine.synthesis(engine.Deployment("Llama-3.1-8B", "H100"), one)
    got = engine.synthesis(
        engine.Deployment("Llama-3.1-8B", "H100"), one, engine.Target(metric="ttft_ms", value=5)
    )
    assert got.metric == "ttft_ms" and got.rows  # a metric the request has is solved


# --- weight streaming (Cerebras CS-3) -----------------------------------------------------

GPT3_REQUEST = engine.Batch(input_tokens=2048, output_tokens=128)


def test_cs3_catalogue_figures():
    hw = CAT.hardware["CS-3"]
    assert hw.memory_capacity_bytes == 44e9  # 44 GB on-wafer SRAM (Cerebras)
    assert hw.memory_bandwidth_bytes_per_s == 21e15  # 21 PB/s (Cerebras)
    assert hw.peak_flop_per_s["fp16"] == 62.5e15  # half of the 125 PFLOP/s sparse headline
    assert hw.weight_stream_bandwidth_bytes_per_s == 1.2e12  # the chapter's MemoryX figure
    assert hw.tdp_w == 23000
    assert hw.source.startswith("https://www.cerebras.ai/")
    assert "1.2 Tb/s" in hw.weight_stream_notes  # the datasheet's I/O figure, said


def test_gpt3_decode_on_cs3_streams_its_weights_at_the_injection_bandwidth():
    r = engine.serve(
        engine.Deployment("GPT-3-175B", "CS-3", profile=TUTORIAL, catalog=CAT), GPT3_REQUEST
    )
    # GPT-3 at fp16: 174.6e9 counted params × 2 B = 349.1 GB, far above 44 GB × 0.9: streamed.
    # One decode step injects them at 1.2 TB/s: 349.137e9 / 1.2e12 = 290.95 ms, plus 96 × 10 µs
    # + 10 µs of overhead = 0.97 ms; the KV cache (SRAM, 21 PB/s) adds ~0.5 µs.
    streamed = 349.137e9  # every weight but the embedding rows a step does not read
    assert r["tpot_ms"] == pytest.approx(streamed / 1.2e12 * 1e3 + 0.97, rel=2e-3)
    assert str(r["decode_bottleneck"]) == "memory"
    # KV in SRAM: 2 × 96 layers × 96 heads × 128 × 2 B = 4,718,592 B per token; one layer's
    # weights (349.1 GB / 96 = 3.64 GB) resident. Batch 1 at 2,176 tokens: 10.3 GB + 3.6 fits.
    assert r["weight_bytes_per_device"] == pytest.approx(349.137e9 / 96, rel=1e-3)
    assert r["fits_in_memory"]
    # the largest batch whose KV fits: (39.6e9 − 3.64e9) / (4,718,592 × 2,176) = 3.5 → 3
    assert r["max_batch_size"] == 3


def test_a_model_that_fits_in_sram_is_not_streamed():
    r = engine.serve(
        engine.Deployment("Llama-3.1-8B", "CS-3", profile=TUTORIAL, catalog=CAT), GPT3_REQUEST
    )
    # 16.1 GB of weights < 39.6 GB usable: read from SRAM at 21 PB/s (0.77 ms), not injected
    # (13 ms at 1.2 TB/s): the step is its overhead (32 × 10 µs + 10 µs) and the SRAM reads.
    assert r["tpot_ms"] < 1.5
    assert r["weight_bytes_per_device"] > 15e9


def test_the_batch_where_compute_takes_over_from_injection():
    d = engine.Deployment("GPT-3-175B", "CS-3", profile=TUTORIAL, catalog=CAT)
    b_star = engine.decode_crossover_batch(d, GPT3_REQUEST)
    # By hand: injection 2 B/param ÷ 1.2e12 B/s against compute 2 FLOP/param × B ÷ (62.5e15 ×
    # 0.5): B* = 31.25e15 / 1.2e12 = 26,042. The engine adds attention's FLOPs and the SRAM's
    # KV reads to the two sides, so its B* is within 2 % of that.
    assert b_star == pytest.approx(31.25e15 / 1.2e12, rel=0.02)
    at = lambda b: engine.serve(d, engine.Batch(2048, 128, b))  # noqa: E731
    assert str(at(b_star)["decode_bottleneck"]) == "compute"
    assert str(at(b_star - 1)["decode_bottleneck"]) == "memory"
    assert not at(b_star)["fits_in_memory"]  # the SRAM holds 3 sequences' KV, not 26,000


def test_on_cs3_the_injection_bandwidth_binds():
    s = engine.sensitivity(engine.Deployment("GPT-3-175B", "CS-3", catalog=CAT), GPT3_REQUEST)
    assert s.binding("tpot_ms") == "weight_stream_bandwidth"
    assert s.elasticity("weight_stream_bandwidth", "tpot_ms") < -0.99
    assert abs(s.elasticity("memory_bandwidth", "tpot_ms")) < 1e-3


# --- CLI ----------------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "engine", "sensitivity", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_json_keys():
    out = _cli("--model", "Llama-3.1-70B", "--hardware", "H200", "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) == {"sensitivity", "synthesis"}
    assert set(data["sensitivity"]) == {
        "model",
        "hardware",
        "step",
        "method",
        "baseline",
        "binding",
        "elasticities",
    }
    assert data["sensitivity"]["binding"]["tpot_ms"] == "memory_bandwidth"
    assert set(data["synthesis"]) == {
        "model",
        "hardware",
        "metric",
        "target",
        "baseline",
        "requirements",
    }
    assert set(data["synthesis"]["requirements"][0]) == {
        "parameter",
        "unit",
        "catalogued",
        "required",
        "required_over_catalogued",
        "met_as_catalogued",
        "required_others_unbounded",
    }


def test_cli_csv_has_unit_bearing_headers_and_bad_input_is_one_line():
    out = _cli("--model", "Llama-3.1-8B", "--hardware", "A100", "--format", "csv")
    assert out.returncode == 0, out.stderr
    header = out.stdout.splitlines()[0]
    assert "parameter_value_si" in header and "change_at_plus_step_fraction" in header
    bad = _cli("--model", "Llama-3.1-8B", "--hardware", "A100", "--parameters", "nope")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "unknown parameter 'nope'" in bad.stderr
