"""The accelerator catalogue: fp32 everywhere, an honest precision fallback, interconnects,
prices, capacities as stated, and clear messages for broken team entries (data/README.md)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.catalog.reader import display_origin, read_catalog_bytes
from engine.catalog.specs import FALLBACKS, PRECISIONS, HardwareSpec

ROOT = Path(__file__).resolve().parent.parent
TEAM = ROOT / "tests" / "fixtures" / "team_catalog.toml"
HW = engine.load_catalog(use_env=False).hardware
IDS = sorted(HW)
# The wafer (CS-3) is one device with on-chip SRAM: no link, a ridge of 3 FLOP/byte; its own
# figures are checked in tests/test_sensitivity.py.
DEVICE_IDS = [k for k in IDS if not HW[k].weight_stream_bandwidth_bytes_per_s]
# Nominal speed order of the precisions on tensor hardware (slowest first). A fallback may go
# down this order, never up: bf16 and fp16 share a rank, as do the 8-bit formats.
RANK = {"fp32": 0, "tf32": 1, "fp16": 2, "bf16": 2, "fp8": 3, "int8": 3, "int4": 4}
SINGLE_DEVICES = {"JetsonOrinNX", "JetsonAGXOrin", "M3Max", "M4Max"}
COMPARED = ("A100", "H100", "T4")  # /compare?model=ResNet-50&hardware=A100,H100,T4&precision=fp32


def test_rank_covers_every_precision():
    assert set(RANK) == set(PRECISIONS)


# --- fp32 and the fallback -----------------------------------------------------------------


@pytest.mark.parametrize("key", IDS)
def test_every_entry_lists_fp16_and_fp32_and_fp32_is_not_faster(key):
    peaks = HW[key].peak_flop_per_s
    assert {"fp16", "fp32"} <= set(peaks)
    # fp32 never beats the fp16 peak (Apple's GPUs run both at one rate: equal).
    assert peaks["fp32"] <= peaks["fp16"]


@pytest.mark.parametrize(
    ("key", "tflop_per_s"),
    [
        ("H100", 67.0),  # H100 SXM datasheet: FP32 67 TFLOPS
        ("H200", 67.0),  # H200 datasheet: FP32 67 TFLOPS
        ("T4", 8.1),  # T4 datasheet: single precision 8.1 TFLOPS
        ("A100", 19.5),  # A100 datasheet: FP32 19.5 TFLOPS (the tutorial's figure, kept)
        ("V100", 15.7),  # V100 datasheet (tutorial's figure, kept)
        ("MI300X", 163.4),  # AMD: FP32 matrix 163.4 TFLOPS (tutorial's figure, kept)
        ("B200", 75.0),  # HGX B200: FP32 600 TFLOPS for 8 GPUs -> 600 / 8 = 75
        ("TPUv5p", 76.5),  # derived: 459 bf16 / 6 bf16 passes = 76.5
    ],
)
def test_published_or_derived_fp32_figures(key, tflop_per_s):
    assert HW[key].peak_flop_per_s["fp32"] == pytest.approx(tflop_per_s * 1e12, rel=1e-12)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(IDS), st.sampled_from(PRECISIONS))
def test_catalogue_fallback_never_picks_a_faster_precision(key, precision):
    hw = HW[key]
    peak, used = hw.peak_for(precision)
    assert peak == hw.peak_flop_per_s[used]
    if precision in hw.peak_flop_per_s:
        assert used == precision
        return
    assert RANK[used] < RANK[precision] or (precision, used) == ("bf16", "fp16")
    # Numerically too: the borrowed peak is no faster than any listed peak of a precision at
    # least as fast as the one requested.
    at_least_as_fast = [p for p in hw.peak_flop_per_s if RANK[p] >= RANK[precision]]
    assert all(peak <= hw.peak_flop_per_s[p] for p in at_least_as_fast)


def _spec(peaks: dict) -> HardwareSpec:
    return HardwareSpec(
        id="h",
        name="H",
        peak_flop_per_s=peaks,
        memory_bandwidth_bytes_per_s=1e12,
        memory_capacity_bytes=16e9,
        dispatch_overhead_s=1e-5,
        tdp_w=100.0,
        source="test",
        interconnect_name="none",
        interconnect_bandwidth_bytes_per_s=0.0,
        interconnect_latency_s=0.0,
        devices_per_node=1,
    )


optional = st.sets(st.sampled_from(["tf32", "bf16", "fp8", "int8", "int4"]))


@settings(max_examples=200, deadline=None)
@given(optional, st.sampled_from(PRECISIONS))
def test_any_chip_falls_back_down_the_speed_order(listed, precision):
    peaks = {p: 1e12 * (1 + RANK[p]) for p in {"fp16", "fp32", *listed}}
    peak, used = _spec(peaks).peak_for(precision)
    assert used == (precision if precision in peaks else FALLBACKS[precision])
    assert RANK[used] <= RANK[precision] and peak <= 1e12 * (1 + RANK[precision])


def test_fp32_fallback_cases_by_hand():
    chip = _spec({"fp16": 100e12, "fp32": 10e12, "int8": 200e12})
    assert chip.peak_for("tf32") == (10e12, "fp32")  # tf32 runs at fp32, not at fp16
    assert chip.peak_for("fp8") == (100e12, "fp16")  # fp8 weights computed at fp16
    assert chip.peak_for("int4") == (100e12, "fp16")  # not int8's faster 200
    assert chip.peak_for("bf16") == (100e12, "fp16")


def test_a_spec_without_fp32_is_refused():
    with pytest.raises(ValueError, match=r"peak\.fp32 is required"):
        _spec({"fp16": 100e12})


def test_resnet50_fp32_compare_is_compute_bound_and_honest():
    # ResNet-50: F = 4.1 GFLOP per image (as catalogued), P = 25.6e6, 50 layers; batch 256,
    # fp32 (4 B per parameter), efficiency 0.5, activation fraction 0.1, tau 10 µs.
    # A100: compute 4.1e9 · 256 / (19.5e12 · 0.5) = 107.65 ms; memory 25.6e6 · 4 B ·
    #   (1 + 0.1 · 256) = 2.724 GB / 2.039 TB/s = 1.34 ms -> compute-bound; overhead
    #   0.015 ms + 50 · 10 µs = 0.515 ms; latency 108.17 ms -> 256 / 0.10817 = 2366.7 img/s.
    # H100: compute 4.1e9 · 256 / (67e12 · 0.5) = 31.33 ms; + 0.510 ms = 31.84 ms -> 8039.9.
    # H100 / A100 = 8039.9 / 2366.7 = 3.397 (67 / 19.5 = 3.44 less the fixed overheads).
    # T4: 4.1e9 · 256 / (8.1e12 · 0.5) = 259.16 ms + 0.530 ms -> 985.8 img/s, below A100.
    r = {h: engine.solve("ResNet-50", h, batch_size=256, precision="fp32") for h in COMPARED}
    assert all(x.peak_precision == "fp32" and x.t_compute_s > x.t_memory_s for x in r.values())
    assert r["A100"].throughput_per_s == pytest.approx(2366.7, rel=1e-4)
    assert r["H100"].throughput_per_s == pytest.approx(8039.9, rel=1e-4)
    assert r["H100"].throughput_per_s / r["A100"].throughput_per_s == pytest.approx(3.4, abs=0.01)
    assert r["T4"].throughput_per_s == pytest.approx(985.8, rel=1e-4)
    assert r["T4"].throughput_per_s < r["A100"].throughput_per_s


# --- interconnect ---------------------------------------------------------------------------


@pytest.mark.parametrize("key", DEVICE_IDS)
def test_every_entry_has_a_sourced_interconnect(key):
    hw = HW[key]
    assert hw.interconnect_name and hw.interconnect_name != "none"
    assert hw.interconnect_source.startswith("https://")
    assert hw.interconnect_bandwidth_bytes_per_s > 0
    # A link is slower than the device's own memory, and its per-hop latency is 0.1-10 µs.
    assert hw.interconnect_bandwidth_bytes_per_s < hw.memory_bandwidth_bytes_per_s
    assert 0.1e-6 <= hw.interconnect_latency_s <= 10e-6
    assert hw.devices_per_node == 1 if key in SINGLE_DEVICES else hw.devices_per_node >= 2
    # Latencies are cited (NCCL/RCCL) or marked as an assumption.
    notes = hw.interconnect_notes
    assert "NCCL" in notes or "RCCL" in notes or "ASSUMPTION" in notes


@pytest.mark.parametrize(
    ("key", "name", "gb_per_s", "devices"),
    [
        ("A100", "NVLink 3", 300, 8),  # 600 GB/s bidirectional / 2
        ("H100", "NVLink 4", 450, 8),  # 900 GB/s bidirectional / 2
        ("H200", "NVLink 4", 450, 8),
        ("B200", "NVLink 5", 900, 8),  # 1.8 TB/s bidirectional / 2
        ("V100", "NVLink 2", 150, 8),  # 300 GB/s bidirectional / 2
        ("MI300X", "Infinity Fabric (xGMI)", 448, 8),  # 7 links × 128 GB/s bidi / 2
        ("Gaudi3", "RoCE (24 x 200 GbE)", 525, 8),  # 21 ports × 200 Gb/s / 8 bit/byte
        ("TPUv5p", "ICI (3D torus)", 600, 4),  # 4800 Gbps / 8 bit/byte
        ("L40S", "PCIe Gen4 x16", 32, 8),  # 64 GB/s bidirectional / 2
        ("T4", "PCIe Gen3 x16", 16, 8),  # 32 GB/s bidirectional / 2
        ("H100-PCIe", "PCIe Gen5 x16", 64, 8),  # 128 GB/s bidirectional / 2
    ],
)
def test_interconnect_figures(key, name, gb_per_s, devices):
    hw = HW[key]
    assert hw.interconnect_name == name and hw.devices_per_node == devices
    assert hw.interconnect_bandwidth_bytes_per_s == pytest.approx(gb_per_s * 1e9, rel=1e-12)


def test_nvlink_per_hop_latency_is_nccls():
    # NCCL src/graph/tuning.cc, hwLat NVLink ring LL: 0.6 µs; PCI ring LL: 1.0 µs.
    assert HW["H100"].interconnect_latency_s == pytest.approx(0.6e-6, rel=1e-9)
    assert HW["L4"].interconnect_latency_s == pytest.approx(1.0e-6, rel=1e-9)


# --- ridge points, capacities, prices -------------------------------------------------------


@pytest.mark.parametrize("key", DEVICE_IDS)
def test_ridge_points_are_plausible(key):
    hw = HW[key]
    ridge_fp16 = hw.peak_flop_per_s["fp16"] / hw.memory_bandwidth_bytes_per_s
    ridge_fp32 = hw.peak_flop_per_s["fp32"] / hw.memory_bandwidth_bytes_per_s
    # e.g. H100: 989e12 / 3.35e12 = 295 FLOP/byte at fp16, 67e12 / 3.35e12 = 20 at fp32.
    assert 10 <= ridge_fp16 <= 1000 and 1 <= ridge_fp32 <= ridge_fp16


@pytest.mark.parametrize(
    ("key", "label", "capacity_bytes"),
    [
        ("A100", "80 GiB", 80 * 2**30),  # the tutorial's GiB: 85.90e9 bytes, shown as 80 GiB
        ("H200", "141 GB", 141e9),
        ("A100-PCIe", "80 GB", 80e9),
        ("TPUv4", "32 GiB", 32 * 2**30),
    ],
)
def test_capacity_label_is_as_stated(key, label, capacity_bytes):
    assert HW[key].capacity_label == label
    assert HW[key].memory_capacity_bytes == pytest.approx(capacity_bytes, rel=1e-12)


def test_capacity_label_without_a_stated_text_is_decimal_gb():
    assert _spec({"fp16": 1e12, "fp32": 1e11}).capacity_label == "16 GB"  # 16e9 bytes


@pytest.mark.parametrize("key", IDS)
def test_prices_are_cited_list_prices_or_explicitly_none(key):
    hw = HW[key]
    if hw.price_per_hour_usd is None:
        assert hw.price_notes  # says why there is no public hourly price
        return
    assert 0.1 < hw.price_per_hour_usd < 20  # USD per accelerator-hour
    assert hw.price_source.startswith("https://") and len(hw.price_date) >= 7
    assert "LIST" in hw.price_notes


def test_consumer_and_embedded_parts_have_no_price():
    assert all(HW[k].price_per_hour_usd is None for k in (*SINGLE_DEVICES, "RTX4090"))


def test_per_accelerator_price_from_an_8_gpu_node():
    # CoreWeave HGX H100 node $49.24/h / 8 = $6.155 -> 6.16 per GPU-hour (see its notes).
    assert HW["H100"].price_per_hour_usd == pytest.approx(6.16)
    assert "49.24" in HW["H100"].price_notes


def test_single_gpu_instance_price_is_the_cited_figure():
    # Lambda 1x H100 PCIe at $2.86/h (techbytes.app, prices verified 2026-05-07; see its notes).
    assert HW["H100-PCIe"].price_per_hour_usd == pytest.approx(2.86)
    assert "2.86" in HW["H100-PCIe"].price_notes and HW["H100-PCIe"].price_date == "2026-05"


UNVERIFIED = ("V100", "L4", "A100-PCIe", "H100-NVL", "TPUv4", "TPUv5e", "TPUv5p")


@pytest.mark.parametrize("key", UNVERIFIED)
def test_prices_without_a_found_source_are_withdrawn_not_guessed(key):
    # No stored public page stated these figures: no number is shipped and the notes say so.
    assert HW[key].price_per_hour_usd is None
    assert HW[key].price_notes.startswith("unverified: no public source found")


# --- broken team catalogues -----------------------------------------------------------------

CHIP = """[hardware.Chip]
name = "Chip"
memory_bandwidth = "1 TB/s"
memory_capacity = "16GiB"
dispatch_overhead = "0.01 ms"
tdp = "100 W"
peak = { fp16 = "100 TFLOP/s", fp32 = "10 TFLOP/s" }
source = "https://example.com/chip"
[hardware.Chip.interconnect]
name = "Link"
bandwidth = "100 GB/s"
latency = "1 us"
devices_per_node = 4
source = "https://example.com/link"
"""
BROKEN = {  # case: (old, new, field named, words in the message)
    "missing fp32": (', fp32 = "10 TFLOP/s"', "", "peak.fp32", "peak.fp32 is required"),
    "bad link unit": ('"100 GB/s"', '"100 GB/z"', "interconnect.bandwidth", "unknown unit"),
    "link not a rate": ('"100 GB/s"', '"100 GB"', "interconnect.bandwidth", "byte/s"),
    "zero devices": ("devices_per_node = 4", "devices_per_node = 0", "devices_per_node", "whole"),
    "no latency": ('latency = "1 us"\n', "", "interconnect.latency", "missing"),
    "odd link key": ("devices_per_node = 4", "devices_per_node = 4\ncolour = 1", "colour", "unk"),
    "no link at all": (
        CHIP[CHIP.index("[hardware.Chip.interconnect]") :],
        "",
        "interconnect",
        "missing",
    ),
}


def _problems(text: str):
    found, problems = read_catalog_bytes(text.encode(), "team.toml")
    return found["hardware"], problems


@pytest.mark.parametrize("case", BROKEN)
def test_broken_entries_name_the_entry_and_field(case):
    old, new, field, words = BROKEN[case]
    assert old in CHIP
    hardware, problems = _problems(CHIP.replace(old, new))
    assert "Chip" not in hardware and problems
    message = str(problems[0])
    assert message.startswith("team.toml: hardware.Chip.") and field in message
    assert words in message


@pytest.mark.parametrize(
    ("price", "field", "words"),
    [
        ("usd_per_hour = -1", "price.usd_per_hour", "> 0"),
        ('usd_per_hour = "cheap"', "price.usd_per_hour", '"none"'),
        ('usd_per_hour = 2.5\ndate = "2025-06"', "price.source", "missing"),
        ('usd_per_hour = 2.5\nsource = "https://e.example"', "price.date", "missing"),
    ],
)
def test_broken_prices_name_the_field(price, field, words):
    _, problems = _problems(CHIP + f"[hardware.Chip.price]\n{price}\n")
    assert problems and field in str(problems[0]) and words in str(problems[0])


def test_a_good_team_entry_loads_with_none_link_and_no_price():
    single = CHIP.split("[hardware.Chip.interconnect]")[0] + 'interconnect = "none"\n'
    hardware, problems = _problems(single)
    assert not problems
    chip = hardware["Chip"]
    assert chip.devices_per_node == 1 and chip.interconnect_bandwidth_bytes_per_s == 0
    assert chip.price_per_hour_usd is None and chip.capacity_label == "16 GiB"  # "16GiB" tidied


# --- origin and the CLI's list ----------------------------------------------------------------


def test_display_origin():
    builtin = str(ROOT / "data" / "hardware.toml")
    assert display_origin(builtin) == "built-in"
    assert display_origin("/srv/app/teams/ours.toml") == "ours.toml"
    assert display_origin("custom (share link)") == "custom (share link)"


def test_cli_list_hardware_json_has_links_prices_and_short_origins():
    out = subprocess.run(
        [sys.executable, "-m", "engine", "list", "hardware", "--format=json", f"--catalog={TEAM}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "ROOFLINE_CATALOG"},
    )
    rows = {r["id"]: r for r in json.loads(out.stdout)}
    assert {r["origin"] for r in rows.values()} == {"built-in", "team_catalog.toml"}
    assert rows["H100"]["interconnect_bandwidth_bytes_per_s"] == pytest.approx(450e9)
    assert rows["H100"]["devices_per_node"] == 8 and rows["H100"]["capacity_label"] == "80 GiB"
    assert rows["H100"]["price_per_hour_usd"] == pytest.approx(6.16)
    assert rows["M3Max"]["price_per_hour_usd"] is None
    assert rows["Team-X1"]["interconnect_name"] == "none"
