"""Known answers for the single-model solve (docs/model.md), arithmetic in the comments."""

import dataclasses
import pickle

import numpy as np
import pytest

import engine
from engine import Assumptions, HardwareSpec, ModelSpec
from engine.roofline.solve import solve_specs

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
    # The reference case (docs/model.md): ResNet-50 (25.6 M params, 4.1 GFLOP as MACs,
    # 50 layers) on an A100.
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
    # docs/model.md, "FLOP conventions": mac2 doubles 4.1 G MACs to 8.2 GFLOP;
    # AI 145.6 > ridge_eff 76.5.
    r = engine.solve("ResNet-50", "A100", flop_convention="mac2")
    assert r.flops == pytest.approx(8.2e9)
    assert r.bottleneck == "compute"
    assert r.assumptions.flop_convention == "mac2"


def test_toy_memory_bound_known_answer():
    # flops 10e9 ; bytes 1e9·2·(1+0.1) = 2.2e9 ; t_c = 10e9/(100e12·0.5) = 0.2 ms ;
    # t_m = 2.2e9/1e12 = 2.2 ms ; overhead 1 ms + 10·10 µs = 1.1 ms ; latency 3.3 ms
    r = solve_specs(model=TOY_MODEL, hw=TOY_HW, batch_size=1, precision="fp16")
    assert r.bottleneck == "memory"
    assert r.latency_s == pytest.approx(3.3e-3)
    assert r.overhead_share == pytest.approx(1.1 / 3.3)
    # achieved 10e9 / 3.3e-3 = 3.03 TFLOP/s; roof = 1e12 · (10e9/2.2e9) = 4.545 TFLOP/s
    assert r.achieved_flop_per_s == pytest.approx(10e9 / 3.3e-3)
    assert r.attainable_flop_per_s == pytest.approx(1e12 * 10e9 / 2.2e9)
    assert r.overhead_gap_flop_per_s == pytest.approx(
        r.attainable_flop_per_s - r.achieved_flop_per_s
    )
    # energy = 100 W · (0.3 + 0.7 · MFU) · 3.3 ms, MFU = 3.03e12 / 100e12
    mfu = 10e9 / 3.3e-3 / 100e12
    assert r.energy_j == pytest.approx(100 * (0.3 + 0.7 * mfu) * 3.3e-3)


def test_toy_compute_bound_at_large_batch():
    # batch 100: t_c = 1e12/(50e12) = 20 ms ; t_m = 2e9·(1+10)/1e12 = 22 ms -> still memory;
    # with activation traffic 0 : t_m = 2 ms -> compute-bound, latency 20 + 1.1 ms
    r = solve_specs(
        model=TOY_MODEL,
        hw=TOY_HW,
        batch_size=100,
        precision="fp16",
        assumptions=Assumptions(activation_fraction=0.0),
    )
    assert r.bottleneck == "compute"
    assert r.latency_s == pytest.approx(21.1e-3)
    assert r.throughput_per_s == pytest.approx(100 / 21.1e-3)


def test_dispatch_override_and_echo():
    r = solve_specs(
        model=TOY_MODEL,
        hw=TOY_HW,
        batch_size=1,
        precision="fp16",
        assumptions=Assumptions(dispatch_overhead_s=0.0),
    )
    assert r.t_overhead_s == pytest.approx(10 * 10e-6)
    default = solve_specs(model=TOY_MODEL, hw=TOY_HW, batch_size=1, precision="fp16")
    # the result echoes the dispatch figure actually used (the chip's 1 ms)
    assert default.as_dict()["assumptions"]["dispatch_overhead_ms"] == pytest.approx(1.0)


def test_precision_fallback_warns_and_uses_fp16_peak():
    r = solve_specs(model=TOY_MODEL, hw=TOY_HW, batch_size=1, precision="int8")
    assert r.peak_precision == "fp16" and r.peak_flop_per_s == 100e12
    assert r.weight_bytes == pytest.approx(1e9)  # int8: 1 byte per parameter
    (warning,) = r.warnings
    assert warning.code == "precision_fallback" and warning.fields["precision"] == "int8"
    assert "int8" in str(warning) and "fp16" in str(warning)
    assert solve_specs(model=TOY_MODEL, hw=TOY_HW, batch_size=1, precision="fp8").warnings == ()
    assert (
        solve_specs(model=TOY_MODEL, hw=TOY_HW, batch_size=1, precision="bf16").warnings == ()
    )  # bf16 shares fp16


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
    assert not solve_specs(
        model=big, hw=TOY_HW, batch_size=1, precision="fp16"
    ).fits_in_memory  # 20 GB > 16 GB
    assert solve_specs(
        model=big, hw=TOY_HW, batch_size=1, precision="fp8"
    ).fits_in_memory  # 10 GB <= 16 GB


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
        ({"batch_size": 0}, "batch_size: expected a whole number from 1 to 1,000,000, got 0"),
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


# ---------------------------------------------------------------- regime (docs/model.md)


def test_reference_case_regime_is_overhead_while_bottleneck_stays_memory():
    # 0.515 ms of fixed overhead in 0.5426 ms of latency: 94.9 % >= 50 % -> "overhead";
    # the bottleneck (t_memory 27.6 µs > t_compute 26.3 µs) is still "memory".
    r = engine.solve("ResNet-50", "A100", batch_size=1, precision="fp16")
    assert r.overhead_share == pytest.approx(0.515 / 0.5426, rel=1e-3)
    assert (r.bottleneck, r.regime) == ("memory", "overhead")
    d = r.as_dict()
    assert (d["bottleneck"], d["regime"]) == ("memory", "overhead")


def test_toy_regimes_follow_the_half_latency_rule():
    # memory-bound toy: overhead 1.1 ms of 3.3 ms = 33 % < 50 % -> the bottleneck, "memory"
    assert (
        solve_specs(model=TOY_MODEL, hw=TOY_HW, batch_size=1, precision="fp16").regime == "memory"
    )
    # batch 100 without activation traffic: 1.1 ms of 21.1 ms -> "compute"
    big = solve_specs(
        model=TOY_MODEL,
        hw=TOY_HW,
        batch_size=100,
        precision="fp16",
        assumptions=Assumptions(activation_fraction=0.0),
    )
    assert big.regime == "compute"
    # dispatch 10 ms: overhead 10.1 ms of 12.3 ms = 82 % -> "overhead", bottleneck "memory"
    slow = solve_specs(
        model=TOY_MODEL,
        hw=TOY_HW,
        batch_size=1,
        precision="fp16",
        assumptions=Assumptions(dispatch_overhead_s=10e-3),
    )
    assert (slow.bottleneck, slow.regime) == ("memory", "overhead")
    assert slow.latency_s == pytest.approx(12.3e-3)


def test_memory_bandwidth_and_energy_constants_are_exposed():
    r = engine.solve("ResNet-50", "A100")
    assert r.memory_bandwidth_bytes_per_s == pytest.approx(2.039e12)  # A100 80 GB SXM
    assert r.as_dict()["memory_bandwidth_bytes_per_s"] == pytest.approx(2.039e12)
    assert engine.IDLE_POWER_FRACTION == 0.3
    assert engine.ENERGY_FORMULA == "TDP × (0.3 + 0.7·MFU) × latency"
    assert engine.REGIMES == ("memory", "compute", "overhead")


# ---------------------------------------------------------------- the exact crossover batch


def test_compute_bound_batch_reference_case_by_hand():
    # per-sample compute 4.1e9 / (312e12 · 0.5) = 26.28 µs; per-sample activation traffic
    # 51.2e6 B · 0.1 / 2.039e12 = 2.511 µs; weights 51.2e6 / 2.039e12 = 25.11 µs.
    # Compute-bound when B · (26.28 - 2.511) > 25.11, i.e. B > 1.056: the crossover is 2.
    assert engine.compute_bound_batch("ResNet-50", "A100") == 2
    assert engine.solve("ResNet-50", "A100", 1).bottleneck == "memory"
    assert engine.solve("ResNet-50", "A100", 2).bottleneck == "compute"


def test_compute_bound_batch_toy_by_hand_and_never():
    # toy: per-sample compute 10e9 / 50e12 = 0.2 ms; activation 2e9 · 0.1 / 1e12 = 0.2 ms:
    # slope 0 -> more batch never helps -> None.
    assert engine.compute_bound_batch(TOY_MODEL, TOY_HW) is None
    # activation_fraction 0.05: slope 0.2 - 0.1 = 0.1 ms; weights 2 ms -> B > 20 -> 21
    assert engine.compute_bound_batch(TOY_MODEL, TOY_HW, activation_fraction=0.05) == 21
    a = Assumptions(activation_fraction=0.05)
    assert (
        solve_specs(
            model=TOY_MODEL, hw=TOY_HW, batch_size=20, precision="fp16", assumptions=a
        ).bottleneck
        == "memory"
    )
    assert (
        solve_specs(
            model=TOY_MODEL, hw=TOY_HW, batch_size=21, precision="fp16", assumptions=a
        ).bottleneck
        == "compute"
    )


def _brute_force_crossover(model, hw, precision, limit):
    for batch in range(1, limit + 1):
        if (
            solve_specs(model=model, hw=hw, batch_size=batch, precision=precision).bottleneck
            == "compute"
        ):
            return batch
    return None


@pytest.mark.parametrize("precision", ["fp16", "int8", "fp32"])
def test_compute_bound_batch_matches_a_brute_force_loop_over_the_catalogue(precision):
    catalog = engine.default_catalog()
    checked = 0
    for model in catalog.models.values():
        for hw in catalog.hardware.values():
            exact = engine.compute_bound_batch(model, hw, precision=precision)
            if exact is None or exact <= 400:  # the loop below covers these exactly
                brute = _brute_force_crossover(model=model, hw=hw, precision=precision, limit=400)
                assert exact == brute or (exact is None and brute is None), (model.id, hw.id)
                checked += 1
            else:  # beyond the loop: the solve flips exactly there
                assert (
                    solve_specs(
                        model=model, hw=hw, batch_size=exact - 1, precision=precision
                    ).bottleneck
                    == "memory"
                )
                assert (
                    solve_specs(
                        model=model, hw=hw, batch_size=exact, precision=precision
                    ).bottleneck
                    == "compute"
                )
    assert checked >= 20


# ---------------------------------------------------------------- whole numbers


@pytest.mark.parametrize(
    "batch", [4, 4.0, np.int64(4), np.int32(4), np.uint16(4), np.float64(4.0), np.float32(4)]
)
def test_numpy_and_whole_float_batches_are_accepted(batch):
    r = engine.solve("ResNet-50", "A100", batch_size=batch)
    assert r.batch_size == 4 and type(r.batch_size) is int
    assert r.latency_s == engine.solve("ResNet-50", "A100", batch_size=4).latency_s


@pytest.mark.parametrize(
    "batch", [True, np.bool_(True), np.float64(2.5), "4", [4], None, 10**400, np.int64(0)]
)
def test_non_whole_batches_are_refused_with_the_range(batch):
    with pytest.raises(ValueError, match="batch_size: expected a whole number from 1 to"):
        engine.solve("ResNet-50", "A100", batch_size=batch)


def test_one_whole_number_check_for_scalars_and_lists():
    assert engine.check_whole(np.int64(7), "n", high=10) == 7
    assert engine.check_whole_numbers(np.arange(1, 4), "n", high=10).tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match=r"n: expected a whole number from 2 to 10, got 11"):
        engine.check_whole_numbers([2, 11], "n", low=2, high=10)
    with pytest.raises(ValueError, match="give at least one"):
        engine.check_whole_numbers([], "n", high=10)


def test_results_are_complete_frozen_dataclasses():
    # The solve fills the result's fields in one step (engine.roofline.solve._result): it must set
    # exactly the declared fields, compare equal to one built field by field, and stay frozen.
    r = engine.solve("ResNet-50", "A100", batch_size=8)
    names = [f.name for f in dataclasses.fields(engine.SolveResult)]
    assert set(vars(r)) == set(names)
    assert r == engine.SolveResult(**{n: getattr(r, n) for n in names})
    assert pickle.loads(pickle.dumps(r)) == r
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.latency_s = 0.0
