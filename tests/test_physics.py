"""The serving model's physics terms, each checked by hand on the toy decoder
(tests/test_serving_operators.py): one all-reduce per layer for parallel-attention blocks,
overheads per layer (prefill and decode) and per sequence, decode attention reading each KV
head once at its efficiency, and 8-bit GEMM efficiency. Every default leaves the earlier
figures unchanged (tests/test_serve.py holds them)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_serving_operators import TOY, TOY_HW

import engine
from engine import operators, serve
from engine.accuracy.bands import error_band, families, off_ground
from engine.catalog.resolve import default_catalog

STEP = {"batch_size": 1, "input_tokens": 9, "output_tokens": 2}  # one decode step at context 10
# The by-hand figures are the tutorial profile's (efficiency 0.5, full bandwidth, 10 µs per
# layer, 10 % reserve, full link bandwidth at the accelerator's own latency): they name it.
TUTORIAL = {"profile": engine.TUTORIAL_PROFILE}


def test_parallel_attention_pays_one_all_reduce_per_layer():
    # TP 2, one token: an all-reduce of 1·8·2 = 16 B takes 2·1/2·16/1e9 + 2·1·1e-6 = 2.016 µs.
    # Sequential blocks: 2 layers · 2 all-reduces = 8.064 µs; parallel (GPT-J, Falcon): 4.032.
    both = serve(TOY, TOY_HW, tp=2, **STEP, **TUTORIAL)
    parallel = replace(TOY, parallel_attention=True, norms_per_layer=1)
    one = serve(parallel, TOY_HW, tp=2, **STEP, **TUTORIAL)
    assert both["decode_comm_ms"] == pytest.approx(8.064e-3)
    assert one["decode_comm_ms"] == pytest.approx(4.032e-3)
    table = operators(replace(TOY, parallel_attention=True), TOY_HW, context=10, tp=2, **TUTORIAL)
    assert table.set_index("name").loc["all_reduce", "time_ms"] == pytest.approx(2.016e-3)


def test_falcon_and_gpt_j_are_the_parallel_attention_models_of_the_catalogue():
    cat = default_catalog()
    parallel = sorted(m.id for m in cat.models.values() if m.arch and m.arch.parallel_attention)
    assert parallel == ["Falcon-180B", "GPT-J-6B"]


def test_overheads_per_layer_and_per_sequence():
    # Decode step: 4.064 µs of operators + 2 layers · 10 µs = 24.064 µs (tests/test_serve.py);
    # 3 µs per sequence at batch 2 adds 6 µs. Prefill of 2 prompts of 9 tokens: 2 layers ·
    # 30 µs instead of 2 · 10 µs, plus 2 · 3 µs.
    base = serve(TOY, TOY_HW, **(STEP | {"batch_size": 2}), **TUTORIAL)
    more = serve(
        TOY,
        TOY_HW,
        sequence_overhead_us=3,
        prefill_layer_overhead_us=30,
        **(STEP | {"batch_size": 2}),
        **TUTORIAL,
    )
    assert more["tpot_ms"] - base["tpot_ms"] == pytest.approx(6e-3)
    assert more["ttft_ms"] - base["ttft_ms"] == pytest.approx(2 * 20e-3 + 6e-3)


def test_decode_attention_reads_each_kv_head_once_at_its_efficiency():
    # The toy has 2 query heads per KV head; its attention at context 10 reads the KV that
    # exists, 10·16 = 160 B, and writes 16 B. At kv_bandwidth_efficiency 0.5 those 160 B take
    # as long as 320 B at the achieved bandwidth: 2 layers · 160 B more = +0.32 µs on the
    # 24.064 µs step (tests/test_serve.py); the bytes shown stay the ones that exist.
    full = operators(TOY, TOY_HW, context=10, **TUTORIAL).set_index("name")
    slow = operators(TOY, TOY_HW, context=10, kv_bandwidth_efficiency=0.5, **TUTORIAL)
    slow = slow.set_index("name")
    assert full.loc["attention", "kv_bytes"] == slow.loc["attention", "kv_bytes"] == 16 + 160
    assert slow.loc["attention", "t_memory_ms"] - full.loc["attention", "t_memory_ms"] == (
        pytest.approx(160 / 1e9 * 1e3)
    )
    half = serve(TOY, TOY_HW, kv_bandwidth_efficiency=0.5, **STEP, **TUTORIAL)
    assert half["tpot_ms"] == pytest.approx(24.064e-3 + 2 * 160 / 1e9 * 1e3)
    assert half["kv_cache_bytes"] == serve(TOY, TOY_HW, **STEP, **TUTORIAL)["kv_cache_bytes"]
    prefill = operators(
        TOY, TOY_HW, phase="prefill", context=9, kv_bandwidth_efficiency=0.5, **TUTORIAL
    )
    assert prefill.set_index("name").loc["attention", "kv_bytes"] == 9 * 16 + 9 * 16  # as before


def test_llama_8b_decode_moves_exactly_its_kv_and_tpot_grows_by_that_share():
    # Llama-3.1-8B fp8 (fp8 KV): 32 layers, 8 KV heads of 128. Per layer at context c, decode
    # attention reads 2·8·128·1 B·c (K and V) and writes 2·8·128 = 2,048 B: at 1,024 that is
    # 2,097,152 + 2,048 = 2,099,200 B; at 16,384, 33,554,432 + 2,048 = 33,556,480 B.
    kw = {"precision": "fp8", "profile": "tutorial"}
    for context, per_layer in ((1024, 2_099_200), (16384, 33_556_480)):
        table = operators("Llama-3.1-8B", "H100", context=context, **kw).set_index("name")
        assert table.loc["attention", "kv_bytes"] == per_layer
        assert table.loc["attention", "count"] == 32
    # TPOT at batch 1 grows by the extra KV bytes over the bandwidth (attention is memory-bound):
    # 32 · 2,048 · (16,384 − 1,024) = 1,006,632,960 B more; about 8 GB of fp8 weights per step,
    # so TPOT grows by about an eighth, never the 3x a per-query-head re-read would give.
    step = {"batch_size": 1, "output_tokens": 2, **kw}
    short = serve("Llama-3.1-8B", "H100", input_tokens=1023, **step)
    long = serve("Llama-3.1-8B", "H100", input_tokens=16383, **step)
    bandwidth = default_catalog().find_hardware("H100").memory_bandwidth_bytes_per_s
    assert long["tpot_ms"] - short["tpot_ms"] == pytest.approx(
        1_006_632_960 / bandwidth * 1e3, rel=1e-6
    )
    assert 1.05 < long["tpot_ms"] / short["tpot_ms"] < 1.25


def test_kv_reuse_still_loads_and_says_it_is_no_longer_used():
    # The tutorial profile's assumptions are the defaults, the ones the file below starts from.
    base = serve(TOY, TOY_HW, **STEP, **TUTORIAL)
    old = serve(TOY, TOY_HW, kv_reuse=0.0, **STEP, **TUTORIAL)
    assert old["tpot_ms"] == base["tpot_ms"]
    assert "serving_ignores_kv_reuse" in [w.code for w in old.warnings]
    assert "serving_ignores_kv_reuse" not in [w.code for w in base.warnings]
    toml = 'name = "old"\n[assumptions]\nkv_reuse = 0.4\n'
    profile = engine.profile_from_toml(toml, "old.toml")
    assert profile.values()["kv_reuse"] == 0.4  # kept as the file says, and said to be unused
    again = serve(TOY, TOY_HW, assumptions=profile.assumptions, **STEP, **TUTORIAL)
    assert again["tpot_ms"] == base["tpot_ms"]
    assert "serving_ignores_kv_reuse" in [w.code for w in again.warnings]


def test_eight_bit_gemms_run_at_their_own_efficiency():
    # Llama-3.1-8B prefill of 8 × 2048 tokens on H100 is compute-bound in its GEMMs: at fp8 the
    # GEMM time scales as 1 / fp8_efficiency, so halving it (0.5 -> 0.25) nearly doubles the
    # compute part of the TTFT; fp16 ignores it. (The tutorial profile: fp8 GEMMs at 0.5.)
    kw = {"batch_size": 8, "input_tokens": 2048, "output_tokens": 1} | TUTORIAL
    fp8 = serve("Llama-3.1-8B", "H100", precision="fp8", **kw)["ttft_ms"]
    slow = serve("Llama-3.1-8B", "H100", precision="fp8", fp8_efficiency=0.25, **kw)["ttft_ms"]
    assert 1.6 < slow / fp8 < 2.0
    fp16 = serve("Llama-3.1-8B", "H100", **kw)["ttft_ms"]
    assert serve("Llama-3.1-8B", "H100", fp8_efficiency=0.25, **kw)["ttft_ms"] == fp16


def test_the_error_band_is_the_measured_out_of_sample_error():
    trtllm = engine.get_profile("trtllm")
    band = error_band(trtllm)
    r = trtllm.residuals
    assert band.pct == max(r["lomo_mape_pct"], r["loao_mape_pct"])
    assert band.basis.code == "band_larger_of_both" and "leave-one" in str(band.basis)
    assert error_band(engine.get_profile("vllm")).pct is None  # one model: not measurable


def test_the_tutorial_profiles_band_is_its_error_on_the_shipped_measurements():
    rows = engine.read_measurements(
        ["data/measurements/trtllm-v0.6.1.csv", "data/measurements/vllm-mi300x-oci.csv"]
    )
    summary = engine.summarise(engine.validate(rows, "tutorial"))
    assert error_band(engine.get_profile("tutorial")).pct == pytest.approx(
        summary["mape_pct"], abs=0.05
    )


def test_a_prediction_off_the_fitted_ground_says_so():
    trtllm = engine.get_profile("trtllm-0.6.1")
    cat = default_catalog()
    assert (
        off_ground(
            profile=trtllm, arch=cat.models["Llama-2-70B"].arch, hardware="H100", precision="fp8"
        )
        == []
    )
    why = off_ground(
        profile=trtllm, arch=cat.models["Mixtral-8x7B"].arch, hardware="MI300X", precision="bf16"
    )
    assert [w.code for w in why] == [
        "off_fitted_hardware",
        "off_fitted_precision",
        "off_fitted_families",
    ]
    assert "MI300X" in str(why[0]) and "bf16" in str(why[1]) and "moe" in str(why[2])
    assert families(cat.models["DeepSeek-V3"].arch) == ("moe", "mla")


@settings(max_examples=40, deadline=None)
@given(
    model=st.sampled_from(
        ["Llama-3.1-8B", "Gemma-3-27B", "Mistral-7B-v0.1", "DeepSeek-V3", "Mixtral-8x7B"]
    ),
    hw=st.sampled_from(["A100", "H200", "MI300X"]),
    tp=st.sampled_from([1, 8]),
    tokens=st.integers(1, 200_000),
    out=st.integers(1, 4000),
)
def test_the_largest_batch_that_fits_fits_and_one_more_does_not(model, hw, tp, tokens, out):
    kw = {"tp": tp, "input_tokens": tokens, "output_tokens": out}
    n = serve(model, hw, **kw)["max_batch_size"]
    if n > 0:
        assert serve(model, hw, batch_size=n, **kw)["fits_in_memory"]
    if n < engine.MAX_BATCH:
        assert not serve(model, hw, batch_size=n + 1, **kw)["fits_in_memory"]


def test_max_batch_by_hand_on_the_toy():
    # usable 0.9e9 B − weights 3408 B, one sequence of 11 tokens caches 2 layers · 11 · 16 B
    # = 352 B: floor((9e8 − 3408) / 352) = 2,556,808, capped at MAX_BATCH = 1,000,000
    assert serve(TOY, TOY_HW, **STEP, **TUTORIAL)["max_batch_size"] == engine.MAX_BATCH
    small = replace(TOY_HW, memory_capacity_bytes=1e4)  # usable 9000 B: (9000 − 3408) / 352
    assert serve(TOY, small, **STEP, **TUTORIAL)["max_batch_size"] == 15  # 15.9 -> 15


def test_a_requests_roofline_point_is_its_own_flops_over_bytes_and_time():
    # The operating point a chart draws is the engine's: FLOPs per step over bytes per step,
    # and over the step time; the operator table carries each operator's own roofs.
    r = serve("Llama-3.1-8B", "A100", batch_size=4, input_tokens=512, output_tokens=64)
    decode = r["decode_flop_per_step"] / r["decode_bytes_per_step"]
    assert r["decode_arithmetic_intensity_flop_per_byte"] == pytest.approx(decode)
    assert r["decode_achieved_flop_per_s"] == pytest.approx(
        r["decode_flop_per_step"] / (r["tpot_ms"] / 1e3)
    )
    assert r["prefill_achieved_flop_per_s"] == pytest.approx(r["prefill_flop"] / r["ttft_ms"] * 1e3)
    table = operators(
        "Llama-3.1-8B",
        "H100",
        context=512,
        precision="fp8",
        fp8_efficiency=0.4,
        attention_efficiency=0.3,
    ).set_index("name")
    # 989 TFLOP/s fp16 (attention's 16-bit peak) and 1979 fp8 (GEMMs), times their η
    assert table.loc["attention", "achievable_flop_per_s"] == pytest.approx(989e12 * 0.3)
    assert table.loc["mlp", "achievable_flop_per_s"] == pytest.approx(1979e12 * 0.4)
    assert table.loc["mlp", "peak_flop_per_s"] == pytest.approx(1979e12)
