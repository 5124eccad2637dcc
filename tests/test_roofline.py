"""Known answers for the SPEC §1 solve, arithmetic in the comments."""

import pytest

import engine
from engine import Assumptions, HardwareSpec, ModelSpec
from engine.roofline import solve_specs

TOY_HW = HardwareSpec(
    id="toy",
    name="Toy",
    peak_flop_per_s={"fp16": 100e12, "fp8": 200e12, "fp32": 10e12},
    memory_bandwidth_bytes_per_s=1e12,
    memory_capacity_bytes=16e9,
    dispatch_overhead_s=1e-3,
    tdp_w=100.0,
    source="test",
    interconnect_name="none",
    interconnect_bandwidth_bytes_per_s=0.0,
    interconnect_latency_s=0.0,
    devices_per_node=1,
)
TOY_MODEL = ModelSpec(
    id="toy-net",
    name="Toy net",
    params=1e9,
    flops_per_sample=10e9,
    flop_convention="mac2",
    layers=10,
    source="test",
)


def test_reference_case_resnet50_a100():
    # SPEC §1 public reference: ResNet-50 (25.6 M params, 4.1 GFLOP as MACs, 50 layers) on A100.
    r = engine.solve("ResNet-50", "A100", batch_size=1, precision="fp16")
    # 4.1e9 / (312e12 · 0.5) = 26.28 µs
    assert r.t_compute_s * 1e3 == pytest.approx(0.02628, rel=1e-3)
    # 25.6e6 · 2 B · (1 + 0.1) = 56.32 MB ; / 2.039e12 B/s = 27.62 µs
    assert r.t_memory_s * 1e3 == pytest.approx(0.02762, rel=1e-3)
    # 0.015 ms + 50 · 10 µs = 0.515 ms
    assert r.t_overhead_s * 1e3 == pytest.approx(0.515, rel=1e-6)
    assert r.latency_s * 1e3 == pytest.approx(0.5426, rel=1e-3)
    assert r.throughput_per_s == pytest.approx(1843, rel=1e-3)
    assert r.arithmetic_intensity_flop_per_byte == pytest.approx(72.80, rel=1e-3)
    assert r.effective_ridge_flop_per_byte == pytest.approx(76.5, rel=1e-3)
    assert r.bottleneck == "memory"
    assert r.achieved_flop_per_s / 1e12 == pytest.approx(7.56, rel=2e-3)
    assert r.attainable_flop_per_s / 1e12 == pytest.approx(148, rel=3e-3)
    assert r.mfu == pytest.approx(0.024, abs=5e-4)
    assert r.warnings == ()


def test_normalised_flops_move_resnet50_to_compute_side():
    # SPEC §3: mac2 doubles 4.1 G MACs to 8.2 GFLOP; AI 145.6 > ridge_eff 76.5.
    r = engine.solve("ResNet-50", "A100", flop_convention="mac2")
    assert r.flops == pytest.approx(8.2e9)
    assert r.bottleneck == "compute"
    assert r.assumptions.flop_convention == "mac2"


def test_toy_memory_bound_known_answer():
    # flops 10e9 ; bytes 1e9·2·(1+0.1) = 2.2e9 ; t_c = 10e9/(100e12·0.5) = 0.2 ms ;
    # t_m = 2.2e9/1e12 = 2.2 ms ; overhead 1 ms + 10·10 µs = 1.1 ms ; latency 3.3 ms
    r = solve_specs(TOY_MODEL, TOY_HW, 1, "fp16")
    assert r.bottleneck == "memory"
    assert r.latency_s == pytest.approx(3.3e-3)
    assert r.overhead_share == pytest.approx(1.1 / 3.3)
    # achieved 10e9 / 3.3e-3 = 3.03 TFLOP/s; roof = 1e12 · (10e9/2.2e9) = 4.545 TFLOP/s
    assert r.achieved_flop_per_s == pytest.approx(10e9 / 3.3e-3)
    assert r.attainable_flop_per_s == pytest.approx(1e12 * 10e9 / 2.2e9)
    assert r.gap_flop_per_s == pytest.approx(r.attainable_flop_per_s - r.achieved_flop_per_s)
    # energy = 100 W · (0.3 + 0.7 · MFU) · 3.3 ms, MFU = 3.03e12 / 100e12
    mfu = 10e9 / 3.3e-3 / 100e12
    assert r.energy_j == pytest.approx(100 * (0.3 + 0.7 * mfu) * 3.3e-3)


def test_toy_compute_bound_at_large_batch():
    # batch 100: t_c = 1e12/(50e12) = 20 ms ; t_m = 2e9·(1+10)/1e12 = 22 ms -> still memory;
    # with activation traffic 0 : t_m = 2 ms -> compute-bound, latency 20 + 1.1 ms
    r = solve_specs(TOY_MODEL, TOY_HW, 100, "fp16", Assumptions(activation_fraction=0.0))
    assert r.bottleneck == "compute"
    assert r.latency_s == pytest.approx(21.1e-3)
    assert r.throughput_per_s == pytest.approx(100 / 21.1e-3)


def test_dispatch_override_and_echo():
    r = solve_specs(TOY_MODEL, TOY_HW, 1, "fp16", Assumptions(dispatch_overhead_s=0.0))
    assert r.t_overhead_s == pytest.approx(10 * 10e-6)
    default = solve_specs(TOY_MODEL, TOY_HW, 1, "fp16")
    # the result echoes the dispatch figure actually used (the chip's 1 ms)
    assert default.as_dict()["assumptions"]["dispatch_overhead_ms"] == pytest.approx(1.0)


def test_precision_fallback_warns_and_uses_fp16_peak():
    r = solve_specs(TOY_MODEL, TOY_HW, 1, "int8")
    assert r.peak_precision == "fp16" and r.peak_flop_per_s == 100e12
    assert r.weight_bytes == pytest.approx(1e9)  # int8: 1 byte per parameter
    assert len(r.warnings) == 1 and "int8" in r.warnings[0] and "fp16" in r.warnings[0]
    assert solve_specs(TOY_MODEL, TOY_HW, 1, "fp8").warnings == ()
    assert solve_specs(TOY_MODEL, TOY_HW, 1, "bf16").warnings == ()  # bf16 shares fp16


def test_fits_in_memory():
    big = ModelSpec(
        id="big",
        name="Big",
        params=10e9,
        flops_per_sample=20e9,
        flop_convention="mac2",
        layers=1,
        source="test",
    )
    assert not solve_specs(big, TOY_HW, 1, "fp16").fits_in_memory  # 20 GB > 16 GB
    assert solve_specs(big, TOY_HW, 1, "fp8").fits_in_memory  # 10 GB <= 16 GB


def test_as_dict_has_the_cli_contract_keys():
    keys = set(engine.solve("ResNet-50", "A100").as_dict())
    assert {
        "model",
        "hardware",
        "batch_size",
        "precision",
        "bottleneck",
        "latency_ms",
        "t_compute_ms",
        "t_memory_ms",
        "t_overhead_ms",
        "throughput_per_s",
        "flops",
        "bytes",
        "arithmetic_intensity_flop_per_byte",
        "ridge_flop_per_byte",
        "effective_ridge_flop_per_byte",
        "attainable_tflops",
        "achieved_tflops",
        "mfu",
        "energy_j",
        "weight_bytes",
        "fits_in_memory",
        "assumptions",
        "warnings",
    } <= keys


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"batch_size": 0}, "batch size"),
        ({"batch_size": 2.5}, "whole number"),
        ({"precision": "fp12"}, "unknown precision"),
        ({"efficiency": float("nan")}, "efficiency"),
        ({"efficiency": 1.5}, "efficiency"),
        ({"layer_overhead_us": -1}, "layer_overhead"),
        ({"flop_convention": "mac3"}, "FLOP convention"),
        ({"warp_speed": 9}, "unknown assumption"),
    ],
)
def test_bad_arguments_are_refused_with_a_clear_message(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        engine.solve("ResNet-50", "A100", **kwargs)


def test_ids_are_tolerant_and_unknown_ids_list_close_matches():
    assert engine.solve("resnet50", "a100").model == "ResNet-50"
    with pytest.raises(engine.UnknownIdError, match="ResNet-50"):
        engine.solve("resnet5", "A100")
    with pytest.raises(engine.UnknownIdError, match="H100"):
        engine.solve("ResNet-50", "H1000")
