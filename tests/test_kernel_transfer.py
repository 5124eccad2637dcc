"""Kernel transfer (engine/catalog/kernels.py `gemm_transfer`, docs/model.md "Kernel transfer"):
a profile's GEMM efficiencies, fitted on its reference accelerator, move to another accelerator
by the ratio of the two accelerators' GEMM curves in the stack's kernel tables.

The curve parameters quoted below are data/kernels/trtllm.toml's (TensorRT-LLM 1.3.0rc20 GEMM
tables at aiconfigurator commit 095f58a51c4ca8e61b66ec108d86f223f8d559ce).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import engine
from engine.assumptions import make_assumptions
from engine.catalog import kernels as k
from engine.catalog.profiles import get_profile, profile_from_toml, profile_to_toml
from engine.serving import inputs as si
from engine.serving.kernel import rates

H100_FP8 = (0.677057, 0.835216)  # (η_c, η_m) of H100's fp8 GEMMs
B200_NVFP4 = (0.361703, 0.592352)
RTX_NVFP4 = (0.581213, 1.0)


def test_b200_nvfp4_moves_from_h100_fp8_by_the_ratio_of_their_curves():
    t = k.gemm_transfer("trtllm", reference="H100", accelerator="B200", fmt="nvfp4")
    # no nvfp4 curve on H100: the 4-bit GEMMs inherit the 8-bit GEMMs' efficiency, so the
    # reference is H100's fp8 curve. 0.361703 / 0.677057 = 0.53423; 0.592352 / 0.835216 = 0.70922
    assert (t.target.dtype, t.reference.dtype) == ("nvfp4", "fp8")
    assert t.compute == pytest.approx(0.53423, abs=1e-5)
    assert t.bandwidth == pytest.approx(0.70922, abs=1e-5)
    assert t.compute == pytest.approx(B200_NVFP4[0] / H100_FP8[0], rel=1e-12)


def test_rtx_pro_6000_streams_its_weights_faster_than_h100_relative_to_its_datasheet():
    t = k.gemm_transfer("trtllm", reference="H100", accelerator="RTX-PRO-6000", fmt="nvfp4")
    # 1.0 / 0.835216 = 1.19729: its GDDR7 reaches all of its 1,597 GB/s in the tables
    assert t.bandwidth == pytest.approx(RTX_NVFP4[1] / H100_FP8[1], rel=1e-12)
    assert t.bandwidth == pytest.approx(1.19729, abs=1e-5)


@pytest.mark.parametrize(
    ("stack", "reference", "accelerator", "fmt"),
    [
        ("none", "H100", "B200", "nvfp4"),  # switched off
        ("trtllm", "H100", "H100", "fp8"),  # the reference itself: ratio 1 exactly
        ("trtllm", "H100", "MI300X", "fp8"),  # no table for the accelerator
        ("trtllm", "H100", "H100-PCIe", "fp8"),  # a variant the tables do not measure
        ("trtllm", "H100", "B200", "mxfp4"),  # a format without a curve
        ("trtllm", "H100", "A100", "w4a16"),  # the reference lacks the format's curve
    ],
)
def test_no_curve_no_transfer(stack, reference, accelerator, fmt):
    t = k.gemm_transfer(stack, reference=reference, accelerator=accelerator, fmt=fmt)
    assert (t.compute, t.bandwidth) == (1.0, 1.0)


def test_every_accelerator_a_reference_can_name_has_serving_stack_tables():
    measured = {c.accelerator for c in engine.kernel_curves().curves if c.stack != "nccl"}
    assert set(k.KERNEL_ACCELERATORS) == measured


def test_the_deployment_prices_its_gemms_with_the_transfer():
    """B200 nvfp4 under trtllm-1.0: the GEMM rate is the fp4 peak × fp8_efficiency × the
    compute transfer, and the weights stream at bandwidth × the bandwidth transfer."""
    profile = get_profile("trtllm-1.0")
    a = profile.assumptions
    assert (a.kernel_curves, a.kernel_reference) == ("trtllm", "H100")
    hw = engine.hardware("B200") if hasattr(engine, "hardware") else None
    hw = hw or engine.default_catalog().hardware["B200"]
    dev, used = si.format_values(hw, "nvfp4", a)
    eta = si.efficiencies(a, used)
    t = k.gemm_transfer("trtllm", reference="H100", accelerator="B200", fmt="nvfp4")
    assert rates(dev, eta)["gemm"] == pytest.approx(9e15 * a.fp8_efficiency * t.compute)
    assert dev.kernel_bandwidth == t.bandwidth
    off = make_assumptions(a, kernel_curves="none")
    plain_dev, _ = si.format_values(hw, "nvfp4", off)
    assert (plain_dev.kernel_compute, plain_dev.kernel_bandwidth) == (1.0, 1.0)


def test_the_transfer_slows_a_b200_nvfp4_decode_and_leaves_h100_fp8_alone():
    kw = dict(batch_size=64, input_tokens=1024, output_tokens=256, profile="trtllm-1.0")
    moved = engine.serve("Llama-3.1-8B", "B200", precision="nvfp4", **kw)
    flat = engine.serve("Llama-3.1-8B", "B200", precision="nvfp4", kernel_curves="none", **kw)
    # slower GEMMs and weights: a longer decode step (each factor is below 1 on B200 nvfp4)
    assert moved["tpot_ms"] > flat["tpot_ms"] * 1.05
    same = engine.serve("Llama-3.1-8B", "H100", precision="fp8", **kw)
    same_flat = engine.serve("Llama-3.1-8B", "H100", precision="fp8", kernel_curves="none", **kw)
    assert same["tpot_ms"] == same_flat["tpot_ms"]  # the reference: ratio 1, to the bit
    assert moved.assumptions["kernel_curves"] == "trtllm"  # recorded with the result


def test_a_profile_with_words_writes_and_reads_back_unchanged():
    profile = get_profile("trtllm-1.0")
    again = profile_from_toml(profile_to_toml(profile), "again.toml")
    assert again.assumptions == profile.assumptions
    assert again.values()["kernel_curves"] == "trtllm"


def test_an_unknown_stack_or_reference_is_refused_by_name():
    with pytest.raises(ValueError, match="Kernel curves"):
        make_assumptions(kernel_curves="tgi")
    with pytest.raises(ValueError, match="Kernel reference"):
        make_assumptions(kernel_reference="MI300X")


def test_the_operator_table_sums_to_the_transferred_step():
    """The operator table prices weights at the transferred bandwidth, like the kernel."""
    kw = dict(precision="nvfp4", profile="trtllm-1.0")
    rows = engine.operators("Llama-3.1-8B", "B200", batch_size=32, context=2048, **kw)
    weights = rows[rows["weight_bytes"] > 0]
    t = k.gemm_transfer("trtllm", reference="H100", accelerator="B200", fmt="nvfp4")
    assert t.bandwidth < 1.0
    memory_bound = weights[weights["bottleneck"] == "memory"]
    assert not memory_bound.empty
    row = memory_bound.iloc[0]
    # its memory time is weights at bandwidth × transfer plus the rest at the bandwidth
    bw = row["achievable_bytes_per_s"]
    rest = row["bytes"] - row["weight_bytes"]
    expected = (row["weight_bytes"] / (bw * t.bandwidth) + rest / bw) * 1e3
    assert math.isclose(row["t_memory_ms"], expected, rel_tol=1e-9)


def _page(path: str, query: dict):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"))
    at.switch_page(path)
    at.query_params.update(query)
    return at.run(timeout=180)


@pytest.mark.parametrize("path", ["pages/decode.py", "pages/load.py"])
def test_the_serving_pages_say_how_the_transfer_moved_the_efficiencies(path):
    at = _page(path, {"hardware": "B200", "precision": "fp4", "model": "llama-3.1-8b"})
    assert not at.exception
    said = [c.value for c in at.caption if c.value.startswith("Kernel transfer")]
    assert len(said) == 1
    # 0.361703 / 0.677057 = 0.534; 0.592352 / 0.835216 = 0.709
    assert "B200 nvfp4 GEMMs reach 0.534× the compute fraction and 0.709×" in said[0]
    assert "H100 fp8's" in said[0]
    at = _page(path, {"hardware": "H100", "precision": "fp8", "model": "llama-3.1-8b"})
    assert not [c.value for c in at.caption if c.value.startswith("Kernel transfer")]


def test_a_fit_starts_from_the_profile_and_three_seeded_points_within_the_bounds():
    from engine.accuracy import calibrate as c

    params = ["fp8_efficiency", "expert_imbalance"]
    x0 = np.array([0.6, 1.5])
    starts = c._starts(x0, params)
    assert len(starts) == 1 + c.EXTRA_STARTS == 4 and (starts[0] == x0).all()
    again = c._starts(x0, params)
    assert all((a == b).all() for a, b in zip(starts, again, strict=True))  # a fixed seed
    for x in starts[1:]:
        for value, name in zip(x, params, strict=True):
            low, high = c.FIT_BOUNDS[name]
            assert low <= value <= high


def test_the_cli_lists_a_profiles_transfer_with_the_pages_numbers(capsys):
    from engine.cli.main import main

    assert main(["list", "transfers", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    b200 = next(r for r in rows if (r["accelerator"], r["format"]) == ("B200", "nvfp4"))
    t = k.gemm_transfer("trtllm", reference="H100", accelerator="B200", fmt="nvfp4")
    assert b200["compute_ratio"] == t.compute and b200["weight_bandwidth_ratio"] == t.bandwidth
    assert b200["profile"] == "trtllm-1.0" and b200["reference_curve"] == "H100 fp8"
    assert main(["list", "transfers"]) == 0
    table = capsys.readouterr().out
    line = next(x for x in table.splitlines() if x.split()[:2] == ["B200", "nvfp4"])
    assert line.split() == ["B200", "nvfp4", "nvfp4", "H100", "fp8", "0.534x", "0.709x"]
    assert main(["list", "transfers", "--profile", "vllm-mi300x"]) == 0
    assert "no kernel transfer (kernel_curves = none)" in capsys.readouterr().out
    assert main(["list", "transfers", "--profile", "<b>"]) == 2
    assert "unknown profile" in capsys.readouterr().err


# Every NVSwitch board and NVLink Switch rack in the catalogue: a GPU reaches every other at
# full NVLink bandwidth (peer to peer) and the switch reduces (NVLink SHARP, NCCL's NVLS), as
# the H100, H200 and B200 entries already said. GB200 and GB300 lacked both, so their
# all-reduces ran as rings: Llama-3.1-405B nvfp4 on four GB200s decoded 2.5× the
# communication of four B200s on the same NVLink 5.
SWITCHED = ("H100", "H200", "B200", "B300", "GB200", "GB300", "H800", "H20")


@pytest.mark.parametrize("hw_id", SWITCHED)
def test_nvswitch_systems_say_peer_to_peer_and_switch_reduction(hw_id):
    hw = engine.default_catalog().hardware[hw_id]
    assert hw.interconnect_peer_to_peer and hw.interconnect_switch_reduction


def test_a_gb200_tp4_all_reduce_costs_what_a_b200_one_does():
    # the same NVLink 5 (900 GB/s per direction, 0.6 µs per hop) and the same switch: the
    # same collectives, whatever the NVLink domain's size (72 or 8) beyond the four GPUs
    kw = dict(tp=4, precision="nvfp4", batch_size=256, input_tokens=1000, output_tokens=1000)
    b200 = engine.serve("Llama-3.1-405B", "B200", **kw)
    gb200 = engine.serve("Llama-3.1-405B", "GB200", **kw)
    assert gb200["decode_comm_ms"] == pytest.approx(b200["decode_comm_ms"], rel=1e-12)
    assert gb200["prefill_comm_ms"] == pytest.approx(b200["prefill_comm_ms"], rel=1e-12)
