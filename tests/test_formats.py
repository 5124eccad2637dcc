"""Number formats as first class (engine/catalog/formats.py, docs/model.md "Number formats"):
bytes per element with their scales, the peak each runs at, the weight-only dequantisation
cost, the emulated path with its Message, the refused nvfp4 KV cache, and the older names."""

from __future__ import annotations

import pytest

import engine
from engine.catalog.formats import (
    FORMAT_CHOICES,
    FORMATS,
    KV_FORMATS,
    check_kv_format,
    number_format,
    run_on,
)

HW = engine.default_catalog().hardware
REQUEST = {"input_tokens": 1000, "output_tokens": 1000}
LLAMA_70B_2XH100 = {"model": "Llama-3.1-70B", "hardware": "H100", "tp": 2}


def codes(result) -> set[str]:
    return {m.code for m in result.warnings}


# --- the formats themselves -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "bits"),
    [
        ("fp16", 16),
        ("fp8", 8),  # per-tensor scale: negligible
        ("fp8-block", 8 + 32 / (128 * 128)),  # an fp32 scale per 128×128 block: 8.00195
        ("int8", 8),
        ("w4a16", 4 + 16 / 128),  # Marlin: an fp16 scale per 128 = 0.125 bits, 4.125
        ("nvfp4", 4 + 8 / 16),  # an FP8 E4M3 scale per 16 values: 4.5
        ("mxfp4", 4 + 8 / 32),  # an E8M0 scale per 32 values: 4.25
    ],
)
def test_bits_per_weight_include_the_scales(name, bits):
    assert FORMATS[name].weight_bytes == pytest.approx(bits / 8)


def test_kv_formats_and_their_bytes():
    assert KV_FORMATS["fp8"].element_bytes == 1.0 and KV_FORMATS["int4"].element_bytes == 0.5
    assert KV_FORMATS["nvfp4"].element_bytes == pytest.approx(4.5 / 8)
    assert check_kv_format(None, "w4a16") == "fp16"  # AWQ/GPTQ run a 16-bit cache
    assert check_kv_format(None, "nvfp4") == "fp8"  # NVFP4 checkpoints ship an FP8 cache
    assert check_kv_format("FP4", "fp16") == "fp4"  # read as nvfp4, said in the results
    with pytest.raises(ValueError, match=r"unknown KV precision .w4a16. \(a weight format\)"):
        check_kv_format("w4a16", "fp16")


def test_older_names_are_read_as_formats():
    assert number_format("int4").name == "w4a16" and number_format("FP4").name == "nvfp4"
    assert {"int4", "fp4", *FORMATS} == set(FORMAT_CHOICES)
    with pytest.raises(ValueError, match="unknown precision 'fp6'"):
        number_format("fp6")


# --- the peak each format runs at -----------------------------------------------------------


def test_native_paths():
    b200 = run_on(HW["B200"], "nvfp4")
    assert (b200.peak_key, b200.peak_flop_per_s, b200.emulated) == ("nvfp4", 9000e12, False)
    mi355 = run_on(HW["MI355X"], "mxfp4")
    assert (mi355.peak_key, mi355.emulated) == ("mxfp4", False)
    fp8 = run_on(HW["H100"], "fp8-block")
    assert (fp8.peak_key, fp8.peak_flop_per_s, fp8.dequantised) == ("fp8", 1979e12, False)
    w4 = run_on(HW["H100"], "w4a16")  # always the 16-bit peak, always dequantised
    assert (w4.peak_key, w4.dequantised, w4.emulated, w4.fallback) == ("fp16", True, False, False)


def test_emulated_paths_take_the_fp16_peak_and_say_so():
    for hw, name in (("H100", "nvfp4"), ("H100", "mxfp4"), ("MI355X", "nvfp4"), ("A100", "fp8")):
        run = run_on(HW[hw], name)
        assert (run.peak_key, run.emulated, run.dequantised) == ("fp16", True, True), (hw, name)
        assert run.peak_flop_per_s == HW[hw].peak_flop_per_s["fp16"]


def test_every_fp4_peak_is_plausible_and_above_the_fp8_one():
    for hw in HW.values():
        for key, peak in hw.fp4_peak_flop_per_s.items():
            assert 1 < peak / hw.memory_bandwidth_bytes_per_s < 5000, (hw.id, key)
            assert peak >= hw.peak_flop_per_s.get("fp8", hw.peak_flop_per_s["fp16"]), hw.id
    blackwell = {"B200", "GB200", "GB300", "B300", "RTX-PRO-6000"}
    assert {h.id for h in HW.values() if "nvfp4" in h.fp4_peak_flop_per_s} == blackwell
    assert not HW["H100"].fp4_peak_flop_per_s and not HW["H200"].fp4_peak_flop_per_s


# --- must show: w4a16 against fp16, Llama-3.1-70B on 2×H100 --------------------------------


@pytest.mark.parametrize("precision", ["fp8", "nvfp4", "w4a16"])
def test_the_vocabulary_tables_stay_16_bit_when_the_layers_are_quantized(precision):
    """Quantizers leave the LM head out (TensorRT Model Optimizer's default config, every
    format), and the embedding is a lookup of 16-bit rows: Llama-3.1-8B's two tables hold
    2 × 128,256 × 4,096 × 2 B = 2.10 GB in every format, and only the layers shrink."""
    tables = 2 * 128_256 * 4_096 * 2.0
    kw = {"input_tokens": 100, "output_tokens": 10, "profile": "tutorial"}
    half = engine.serve("Llama-3.1-8B", "B200", precision="fp16", **kw)["weight_bytes_per_device"]
    got = engine.serve("Llama-3.1-8B", "B200", precision=precision, **kw)["weight_bytes_per_device"]
    # the layers' weights at the format's bytes per weight, scales included (fp8 1, nvfp4
    # 4.5/8, w4a16 4.125/8) against fp16's 2
    layers = (half - tables) * number_format(precision).weight_bytes / 2
    assert got == pytest.approx(layers + tables, rel=2e-3)


def test_w4a16_decodes_at_batch_1_at_least_twice_as_fast_as_fp16():
    # Decode at batch 1 reads every weight once per step. Per device (tp 2): 70.55e9 / 2
    # parameters; fp16 2 B each = 70.55 GB. w4a16: the layers' 68.45e9 / 2 at 4.125 bits =
    # 0.515625 B = 17.65 GB, the two vocabulary tables (2 × 128,256 × 8,192 / 2) still 16-bit
    # = 2.10 GB: 19.75 GB, 3.57x less, the KV cache and overheads alike.
    fp16 = engine.serve(**LLAMA_70B_2XH100, precision="fp16", batch_size=1, **REQUEST)
    w4 = engine.serve(**LLAMA_70B_2XH100, precision="w4a16", batch_size=1, **REQUEST)
    tables = 2 * 128_256 * 8_192 / 2 * 2.0
    layers = fp16["weight_bytes_per_device"] - tables
    assert w4["weight_bytes_per_device"] == pytest.approx(layers * 0.515625 / 2 + tables, rel=1e-5)
    assert fp16["weight_bytes_per_device"] / w4["weight_bytes_per_device"] == pytest.approx(
        3.572, rel=1e-3
    )
    assert fp16["tpot_ms"] / w4["tpot_ms"] >= 2.0
    assert w4["decode_bottleneck"] == "memory" and not codes(w4)


def test_w4a16_output_throughput_at_batch_256_is_no_higher_than_fp16():
    # At batch 256 the GEMMs are compute-bound: the same 16-bit peak, plus the dequantisation
    # (1 + 0.375 times the tensor-core time), so w4a16 is slower; the KV reads are the same.
    # The tutorial profile: GEMMs at efficiency 0.5.
    kw = LLAMA_70B_2XH100 | REQUEST | {"batch_size": 256, "profile": engine.TUTORIAL_PROFILE}
    fp16 = engine.serve(**kw, precision="fp16")
    w4 = engine.serve(**kw, precision="w4a16")
    assert w4["output_tokens_per_s"] <= fp16["output_tokens_per_s"]
    # the GEMMs' achievable rate: 989 TFLOP/s · 0.5 / 1.375 = 359.6 TFLOP/s
    assert w4["achievable_flop_per_s"] == pytest.approx(989e12 * 0.5 / 1.375)
    assert fp16["achievable_flop_per_s"] == pytest.approx(989e12 * 0.5)


def test_the_dequantisation_cost_is_an_editable_assumption():
    slow = engine.serve(
        **LLAMA_70B_2XH100, precision="w4a16", batch_size=256, dequant_overhead=1.0, **REQUEST
    )
    free = engine.serve(
        **LLAMA_70B_2XH100, precision="w4a16", batch_size=256, dequant_overhead=0.0, **REQUEST
    )
    assert slow["output_tokens_per_s"] < free["output_tokens_per_s"]
    assert slow.as_dict()["assumptions"]["dequant_overhead"] == 1.0


# --- must show: nvfp4 at B200's FP4 peak; flagged on H100 ----------------------------------


def test_nvfp4_runs_on_b200_at_its_fp4_peak():
    r = engine.serve("Llama-3.1-70B", "B200", precision="nvfp4", batch_size=64, **REQUEST)
    assert r["peak_precision"] == "nvfp4" and r["peak_flop_per_s"] == pytest.approx(9000e12)
    assert r["kv_precision"] == "fp8" and not codes(r)
    # prefill of 64 × 1000 tokens is compute-bound: twice fp8's 4500 TFLOP/s; at the same
    # efficiency (no kernel transfer) it takes well under 0.6 of fp8's time
    flat = {"kernel_curves": "none"}
    fp8 = engine.serve("Llama-3.1-70B", "B200", precision="fp8", batch_size=64, **REQUEST)
    same = engine.serve(
        "Llama-3.1-70B", "B200", precision="nvfp4", batch_size=64, **REQUEST, **flat
    )
    fp8_same = engine.serve(
        "Llama-3.1-70B", "B200", precision="fp8", batch_size=64, **REQUEST, **flat
    )
    assert same["ttft_ms"] < 0.6 * fp8_same["ttft_ms"]
    # trtllm-1.0's kernel transfer (docs/model.md): TensorRT-LLM's B200 nvfp4 GEMMs reach 0.534
    # of H100 fp8's compute fraction, its fp8 ones 0.946: 9000 × 0.534 / (4500 × 0.946) = 1.13,
    # so the fp4 prefill is faster than fp8's, by less than the peaks say
    assert 0.6 * fp8["ttft_ms"] < r["ttft_ms"] < fp8["ttft_ms"]


def test_nvfp4_on_h100_runs_emulated_and_says_so_beside_the_number():
    r = engine.serve("Llama-3.1-70B", "H100", tp=2, precision="nvfp4", batch_size=1, **REQUEST)
    assert r["peak_precision"] == "fp16"
    assert {"format_emulated", "peak_fallback"} <= codes(r)
    # the layers' weights stay 4.5-bit in memory (0.5625 B each), the vocabulary tables 16-bit
    fp16 = engine.serve(**LLAMA_70B_2XH100, precision="fp16", batch_size=1, **REQUEST)
    tables = 2 * 128_256 * 8_192 / 2 * 2.0
    layers = fp16["weight_bytes_per_device"] - tables
    assert r["weight_bytes_per_device"] == pytest.approx(layers * 0.5625 / 2 + tables, rel=1e-5)


def test_an_nvfp4_kv_cache_is_refused_without_fp4_tensor_cores():
    with pytest.raises(ValueError, match="nvfp4 KV cache needs FP4 tensor cores; H100"):
        engine.serve("Llama-3.1-8B", "H100", kv_precision="nvfp4", **REQUEST)
    ok = engine.serve("Llama-3.1-8B", "B200", kv_precision="fp4", **REQUEST)
    assert ok["kv_precision"] == "nvfp4" and "format_renamed" in codes(ok)


# --- older names ----------------------------------------------------------------------------


def test_int4_in_old_scripts_is_w4a16_with_a_note():
    old = engine.serve(**LLAMA_70B_2XH100, precision="int4", batch_size=8, **REQUEST)
    new = engine.serve(**LLAMA_70B_2XH100, precision="w4a16", batch_size=8, **REQUEST)
    assert old["precision"] == "w4a16" and old["tpot_ms"] == new["tpot_ms"]
    assert "format_renamed" in codes(old) and "format_renamed" not in codes(new)
    note = next(m for m in old.warnings if m.code == "format_renamed")
    assert "int4 is w4a16" in str(note)


def test_a_sweep_says_the_note_on_the_renamed_rows_only():
    df = engine.serve_sweep(
        "Llama-3.1-8B",
        "H100",
        precisions=["fp16", "int4", "nvfp4"],
        batch_sizes=[1],
        input_tokens=[100],
        output_tokens=[10],
    )
    said = {p: {m.code for m in w} for p, w in zip(df["precision"], df["warnings"], strict=True)}
    assert said == {
        "fp16": set(),
        "w4a16": {"format_renamed"},
        "nvfp4": {"peak_fallback", "format_emulated"},
    }


def test_the_load_model_takes_the_formats_too():
    r = engine.serve_load(
        "Llama-3.1-8B",
        "H100",
        precision="int4",
        input_tokens=200,
        output_tokens=50,
        rate=2.0,
        requests=50,
    )
    assert "format_renamed" in {m.code for m in r.warnings}
