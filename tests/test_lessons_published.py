"""Each lesson's figures pinned against the tutorial chapter that publishes them
(harvard-edge/cs249r_book, mlsysim/docs/tutorials/NN_*.qmd): the sentence quoted, the
arithmetic beside it, and the engine's figure the lesson shows — equal where the lesson says
"agrees", and different by the stated reason where it does not."""

import pytest

import engine

A100_BW, H100_BW, H200_BW = 2.039e12, 3.35e12, 4.8e12  # the catalogue's bandwidths, B/s


def ms(seconds: float) -> float:
    return seconds * 1e3


# --- 00 Hello, Roofline (the seed tutorial) ------------------------------------------------


def test_00_resnet50_a100_batch1():
    # The published output: 0.543 ms, 1,843 images/s, memory-bound, AI 72.8 against the
    # effective ridge 76.5, MFU 2.4 %. Arithmetic (docs/model.md): max(4.1e9 / (312e12 · 0.5),
    # 25.6e6 · 2 · 1.1 / 2.039e12) + 0.015 ms + 50 · 10 µs = 0.02762 + 0.515 = 0.5426 ms.
    r = engine.solve(model="ResNet-50", hardware="A100", batch_size=1, precision="fp16")
    d = r.as_dict()
    assert round(ms(r.latency_s), 3) == 0.543 and round(r.throughput_per_s) == 1843
    assert r.bottleneck == "memory" and r.regime == "overhead"
    assert round(r.arithmetic_intensity_flop_per_byte, 1) == 72.8  # 4.1e9 / 56.32e6
    assert round(d["effective_ridge_flop_per_byte"], 1) == 76.5  # 312e12 · 0.5 / 2.039e12
    assert round(r.mfu * 100, 1) == 2.4  # 4.1e9 / 0.5426 ms / 312e12


def test_00_prose_rounds_and_mixes_conventions():
    # "ResNet-50 performs ~4.1 GFLOP but must load ~50 MB of weights (25M params × 2 bytes).
    # That gives an arithmetic intensity of ~82 FLOP/byte — close to the A100's ridge point of
    # ~156 FLOP/byte." 4.1e9 / 50e6 = 82; 312e12 / 2.0e12 = 156 is the datasheet (2-FLOP)
    # ridge, while its own 1-FLOP peak, 156 TFLOP/s, gives 156e12 / 2.0e12 = 78. The engine's
    # effective ridge (312 · 0.5 / 2.039 = 76.5) halves the peak the same way.
    d = engine.solve("ResNet-50", "A100", 1).as_dict()
    assert d["ridge_flop_per_byte"] == pytest.approx(312e12 / A100_BW)  # 153.0
    assert d["effective_ridge_flop_per_byte"] == pytest.approx(78, rel=0.02)


def test_00_batch_256_mfu():
    # The lesson's "MFU 2.4 % → 46.4 %": batch 256 is compute-bound, 256 · 4.1e9 FLOPs in
    # 7.243 ms = 144.9 TFLOP/s of 312.
    r = engine.solve("ResNet-50", "A100", 256)
    assert r.bottleneck == "compute" and round(r.mfu * 100, 1) == 46.4


def test_00_crossover_a100_2_and_h100_4_in_the_sweep_3_exactly():
    # Exercise 2: "At what batch size does the crossover happen on the H100 vs. the A100?"
    # A100: B · (26.28 − 2.511) µs > 25.11 µs, B > 1.056: batch 2. H100 (989 TFLOP/s, 3.35
    # TB/s): B · (8.29 − 1.53) µs > 15.28 µs, B > 2.26: batch 3; a power-of-two sweep reports 4.
    assert engine.compute_bound_batch("ResNet-50", "A100") == 2
    assert engine.compute_bound_batch("ResNet-50", "H100") == 3
    rows = engine.sweep("ResNet-50", ["A100", "H100"], [1, 2, 4, 8, 16, 32, 64, 128, 256])
    first = engine.crossover_batch(rows).set_index("hardware")["crossover_batch"]
    assert first["A100"] == 2 and first["H100"] == 4


def test_00_exercise_3_llama_8b_on_the_a100():
    # Exercise 3: "Replace ResNet-50 with Llama-3 8B ... At batch size 1, is it memory-bound?"
    # 16.06e9 B · 1.1 / 2.039e12 B/s = 8.66 ms, + 0.015 ms + 32 · 10 µs = 9.0 ms; 111 tokens/s.
    r = engine.solve("Llama-3.1-8B", "A100", 1)
    assert r.bottleneck == "memory"
    assert round(ms(r.latency_s), 1) == 9.0 and round(r.throughput_per_s) == 111


# --- 01 The Memory Wall ---------------------------------------------------------------------


def test_01_sanity_check_weights_only_and_ours():
    # "On the A100 (2.0 TB/s), minimum decode latency ≈ 16 GB ÷ 2.0 TB/s = 8.0 ms. On the H100
    # (3.35 TB/s), it is 16 GB ÷ 3.35 TB/s = 4.8 ms. Speedup = 8.0 / 4.8 = 1.67×".
    a, h = engine.solve("Llama-3.1-8B", "A100", 1), engine.solve("Llama-3.1-8B", "H100", 1)
    # Ours add 10 % activations and 0.335 ms of overhead: 9.0 ms and 5.60 ms, 1.61×, below the
    # catalogue's bandwidth ratio 3.35 / 2.039 = 1.64× (the overhead does not shrink).
    assert round(ms(a.latency_s), 1) == 9.0 and round(ms(h.latency_s), 2) == 5.60
    speedup = a.latency_s / h.latency_s
    assert round(speedup, 2) == 1.61 and speedup < H100_BW / A100_BW
    # Weights only at the catalogue's bandwidths: 16.06e9 / 2.039e12 = 7.88 ms (the chapter's
    # 8.0 at a rounded 2.0 TB/s); the engine's memory term adds the 10 % activation traffic.
    assert a.as_dict()["t_memory_ms"] == pytest.approx(16.06e9 * 1.1 / A100_BW * 1e3)


def test_01_llama_never_crosses_in_the_whole_model_view_resnet_does():
    # "When you are compute-bound, speedup scales with the FLOP/s ratio (up to 3.2×)". In the
    # whole-model view each extra sample moves 0.1 · 16.06 GB: 0.788 ms of traffic against
    # 0.103 ms of compute per sample on the A100, so Llama never turns compute-bound.
    assert engine.compute_bound_batch("Llama-3.1-8B", "A100") is None
    rows = engine.sweep(["Llama-3.1-8B", "ResNet-50"], ["A100", "H100"], [256])
    t = rows.set_index(["model", "hardware"])["latency_ms"]
    assert t["Llama-3.1-8B", "A100"] / t["Llama-3.1-8B", "H100"] == pytest.approx(1.64, abs=0.01)
    assert t["ResNet-50", "A100"] / t["ResNet-50", "H100"] == pytest.approx(2.75, abs=0.01)


# --- 02 Two Phases, One Request -------------------------------------------------------------


def test_02_ttft_is_tens_of_milliseconds():
    # "TTFT is tens of milliseconds — dominated by the 989 TFLOP/s compute ceiling":
    # 2 · 8.03e9 · 2048 FLOPs (+ attention) / (989e12 · 0.5) = 66.5 ms (+ 4.8) = 71.3 ms.
    d = engine.decode(model="Llama-3.1-8B", hardware="H100", batch_size=1, context=2048).as_dict()
    assert d["prefill_bottleneck"] == "compute" and 10 <= d["ttft_ms"] < 100
    assert d["ttft_ms"] == pytest.approx(71.29, abs=0.01)


def test_02_the_slip_a_fraction_of_a_millisecond_is_about_5_ms():
    # "ITL is a fraction of a millisecond — dominated by the 3.35 TB/s bandwidth ceiling",
    # while the chapter's own background says "the model weights (8 billion params × 2 bytes
    # per FP16 param = 16 GB) must be loaded from HBM for each token": 16e9 / 3.35e12 = 4.78
    # ms. Ours: (16.06e9 + 0.268e9 KV) / 3.35e12 + 0.335 ms = 5.20 ms.
    d = engine.decode(model="Llama-3.1-8B", hardware="H100", batch_size=1, context=2048).as_dict()
    assert d["decode_bottleneck"] == "memory" and d["tpot_ms"] > 1  # not a fraction of 1 ms
    assert d["tpot_ms"] == pytest.approx(5.20, abs=0.01)
    assert d["tpot_ms"] == pytest.approx(16e9 / H100_BW * 1e3, rel=0.1)


def test_02_intensities_and_scaling_between_generations():
    # "Prefill's arithmetic intensity is ~2048 FLOP/byte ... Decode's intensity is ~1".
    # "A100 → H100: FLOP/s increases 3.2×, TTFT improves ~3×. Bandwidth increases 1.7×, ITL
    # improves ~1.7×." "H100 → H200: ... TTFT stays similar ... ITL improves ~1.4×."
    a, h, h2 = (
        engine.decode(model="Llama-3.1-8B", hardware=hw, batch_size=1, context=2048).as_dict()
        for hw in ("A100", "H100", "H200")
    )
    assert 2048 <= h["prefill_arithmetic_intensity_flop_per_byte"] < 2300  # 2149: + attention
    assert 1 <= h["decode_arithmetic_intensity_flop_per_byte"] < 1.1
    assert a["ttft_ms"] / h["ttft_ms"] == pytest.approx(3.16, abs=0.01)
    assert a["tpot_ms"] / h["tpot_ms"] == pytest.approx(1.60, abs=0.01)
    assert h["ttft_ms"] / h2["ttft_ms"] == pytest.approx(1.0)
    assert h["tpot_ms"] / h2["tpot_ms"] == pytest.approx(1.39, abs=0.01)  # 4.8 / 3.35 = 1.43


# --- 03 The KV-Cache ------------------------------------------------------------------------


def test_03_kv_per_token_and_at_128k():
    # "(Answer: 2 x 32 x 8 x 128 x 2 = 131,072 bytes = 128 KB per token.)" and "At 128K context,
    # a single user's cache can exceed the model weights": 131,072 · 131,072 = 17.18 GB > 16.06.
    d = engine.decode(model="Llama-3.1-8B", hardware="H100", batch_size=1, context=131072).as_dict()
    assert d["kv_cache_bytes_per_token"] == 2 * 32 * 8 * 128 * 2 == 131_072
    assert d["kv_cache_bytes"] == 131_072 * 131_072 > d["weight_bytes"]


def test_03_the_subtitles_exactly_one_user_is_three():
    # Subtitle: "At 128K context, the cache alone fills an 80 GB GPU — room for exactly one
    # user." Usable 0.9 · 80 GiB = 77.31 GB; (77.31 − 16.06) / 17.18 = 3.56: 3 users. With 32
    # KV heads (no GQA) a user needs 68.7 GB: exactly one would not even fit beside the weights.
    long = engine.decode(
        model="Llama-3.1-8B", hardware="H100", batch_size=1, context=131072
    ).as_dict()
    assert long["max_batch_at_context"] == 3
    assert 4 * long["kv_cache_bytes"] / 1e9 == pytest.approx(68.7, abs=0.05)
    # "The same 80 GB GPU that serves 64 users at short context": at 2,048 tokens, 228 fit.
    assert (
        engine.decode(model="Llama-3.1-8B", hardware="H100", batch_size=1, context=2048).as_dict()[
            "max_batch_at_context"
        ]
        == 228
    )


def test_03_exercises():
    # Ex. 2: H200 (141 GB) at 128K: (126.9 − 16.06) / 17.18 = 6.45 → 6; int8: (126.9 − 8.03)
    # / 8.59 = 13.8 → 13. Ex. 1: Llama-3 70B's 141.2 GB of weights do not fit an H100: 0.
    h200 = engine.decode(
        model="Llama-3.1-8B", hardware="H200", batch_size=1, context=131072
    ).as_dict()
    int8 = engine.decode(
        model="Llama-3.1-8B", hardware="H200", batch_size=1, context=131072, precision="int8"
    ).as_dict()
    big = engine.decode(
        model="Llama-3.1-70B", hardware="H100", batch_size=1, context=4096
    ).as_dict()
    assert (h200["max_batch_at_context"], int8["max_batch_at_context"]) == (6, 13)
    assert big["max_batch_at_context"] == 0 and not big["fits_in_memory"]


# --- 05 Quantization ------------------------------------------------------------------------


def test_05_decode_speedups_track_the_bytes_below_2_and_4():
    # "INT8 gives roughly 2x speedup. INT4 gives roughly 4x." Ours at 2,048 tokens on the H100:
    # 5.204 / 2.767 = 1.88×, 5.204 / 1.549 = 3.36×: the 0.335 ms overhead does not shrink.
    t = {
        p: engine.decode(
            model="Llama-3.1-8B", hardware="H100", batch_size=1, context=2048, precision=p
        ).tpot_s
        for p in ("fp16", "int8", "int4")
    }
    assert t["fp16"] / t["int8"] == pytest.approx(1.88, abs=0.01)
    assert t["fp16"] / t["int4"] == pytest.approx(3.36, abs=0.01)


def test_05_compute_bound_int4_is_1x_int8_uses_the_int8_peak():
    # "The speedup is negligible. ... at batch 256, ResNet-50 training is compute-bound."
    # int4: no int4 peak on the A100, fp16's used (7.243 ms both); int8: 624 TOPS, 3.879 ms.
    r = {
        p: engine.solve(model="ResNet-50", hardware="A100", batch_size=256, precision=p)
        for p in ("fp16", "int8", "int4")
    }
    assert r["int4"].latency_s == pytest.approx(r["fp16"].latency_s)
    assert r["int4"].peak_precision == "fp16" and r["int8"].peak_precision == "int8"
    assert round(ms(r["int8"].latency_s), 3) == 3.879
    assert r["fp16"].latency_s / r["int8"].latency_s == pytest.approx(1.87, abs=0.01)


# --- 06 Scaling to 1000 GPUs ----------------------------------------------------------------


def test_06_roughly_every_day_is_every_four_days_from_gpus_alone():
    # "At 512+ GPUs, something fails roughly every day." From its own MTTF / N: 50,000 / 512 =
    # 97.7 h, one failure every 4.07 days (7.37 in 30 days); 2.03 days at 1,024.
    r = engine.reliability(512)
    assert r.mtbf_hours / 24 == pytest.approx(4.07, abs=0.01) and r.expected_failures < 30
    assert engine.reliability(1024).mtbf_hours / 24 == pytest.approx(2.03, abs=0.01)


def test_06_with_the_chapters_inputs_communication_costs_more_in_our_model():
    # "At scale, reliability overhead dominates communication overhead." With its 60 s
    # checkpoints: 18.8 h lost at 1,024 GPUs; the training model exposes ~48 % of each step to
    # communication (TP all-reduces), 347 h of 720.
    rows = engine.scaling_overheads("Llama-3.1-70B", "H100", [1024], zero=1).iloc[0]
    assert rows["checkpoint_loss_hours"] == pytest.approx(18.81, abs=0.01)
    assert rows["comm_loss_hours"] > rows["checkpoint_loss_hours"]
    # A slower checkpoint (10 min for ~1 TB of 70B weights and Adam state) flips nothing at
    # 1,024 GPUs yet; the ratio grows with the write time as sqrt(δ).
    slow = engine.scaling_overheads("Llama-3.1-70B", "H100", [1024], zero=1, checkpoint_s=600)
    assert slow.iloc[0]["ckpt_to_comm_ratio"] == pytest.approx(
        rows["ckpt_to_comm_ratio"] * 10**0.5, rel=1e-6
    )


# --- 11 Training memory ---------------------------------------------------------------------


def test_11_direct_byte_counts_at_zero_2():
    # "The first three terms are direct byte counts": 2 B × 8.03 B parameters = 16.06 GB of
    # weights; gradients 16.06 / 8 = 2.01 GB; Adam 12 B × 8.03 B / 8 = 12.05 GB (dp 8, ZeRO-2).
    kw = {"gpus": 8, "global_batch_size": 8, "micro_batch_size": 1, "seq_len": 2048}
    z = [engine.train("Llama-3.1-8B", "H100", zero=s, **kw).as_dict() for s in range(4)]
    assert round(z[2]["weight_bytes_per_gpu"] / 1e9, 2) == 16.06
    assert round(z[2]["gradient_bytes_per_gpu"] / 1e9, 2) == 2.01
    assert round(z[2]["optimizer_bytes_per_gpu"] / 1e9, 2) == 12.05
    # "Change zero_stage from 0 to 3. ... Why do activations not shrink from ZeRO alone?"
    assert z[0]["activation_bytes_per_gpu"] == z[3]["activation_bytes_per_gpu"]
    assert round(z[3]["memory_per_gpu_bytes"] / 1e9, 2) == 25.72
    assert not z[0]["fits_in_memory"] and z[1]["fits_in_memory"]
