"""Gradients held and reduced at `gradient_bytes` (2: 16-bit, the default; 4: fp32, Megatron-LM's
default for bf16 runs): their memory, the data-parallel reduction's bytes and the optimizer
step's read, in one number."""

import pytest

import engine

# Llama-3.1-8B on 8 H100, plain data parallelism: every GPU holds all 8.03 B parameters
RUN = dict(gpus=8, global_batch_size=64, seq_len=4096, micro_batch_size=1, zero=0)


def step(gradient_bytes, **kw):
    run = RUN | kw
    return engine.train("Llama-3.1-8B", "H100", gradient_bytes=gradient_bytes, **run)


def test_fp32_gradients_double_their_memory_and_their_reduction():
    two, three, four = (step(b) for b in (2.0, 3.0, 4.0))
    params = two["gradient_bytes_per_gpu"] / 2.0  # 8.03e9 parameters on each GPU
    assert params == pytest.approx(8.03e9, rel=0.001)
    # 4 bytes: 2 more per parameter, every other term unchanged
    assert four["gradient_bytes_per_gpu"] == pytest.approx(4.0 * params)
    assert four["memory_per_gpu_bytes"] - two["memory_per_gpu_bytes"] == pytest.approx(2 * params)
    assert four["weight_bytes_per_gpu"] == two["weight_bytes_per_gpu"]
    # a ring all-reduce's bytes grow with the gradient's, its latency does not: linear in bytes
    total = [r["comm_dp_total_s"] for r in (two, three, four)]
    assert total[2] - total[1] == pytest.approx(total[1] - total[0])
    assert 1.9 * total[0] < total[2] < 2.0 * total[0]
    # the optimizer step reads each gradient: (4 + 26) / (2 + 26) of its time
    assert four["optimizer_s"] / two["optimizer_s"] == pytest.approx(30.0 / 28.0)
    assert four.as_dict()["assumptions"]["gradient_bytes"] == 4.0


def test_zero_2_shards_them_and_the_default_is_16_bit():
    two, four = step(2.0, zero=2), step(4.0, zero=2)
    # ZeRO-2 shards the gradients over the 8 data-parallel ranks: 8.03e9 / 8 × 4 bytes
    assert four["gradient_bytes_per_gpu"] == pytest.approx(4.0 * 8.03e9 / 8, rel=0.001)
    assert four["gradient_bytes_per_gpu"] == pytest.approx(2 * two["gradient_bytes_per_gpu"])
    plain = engine.train("Llama-3.1-8B", "H100", **RUN).as_dict()
    assert plain["assumptions"]["gradient_bytes"] == 2.0
    assert plain["step_time_s"] == step(2.0)["step_time_s"]


def test_a_shortfall_of_fp32_gradients_says_their_bytes():
    # Llama-3.1-70B on 64 H100 without model parallelism, ZeRO-1: the optimizer state shards
    # (12 B / 64 per parameter), the weights (2 B) and the fp32 gradients (4 B) do not: the
    # gradients are the largest term, 4 B × 70.55 B parameters = 282.2 GB
    r = engine.train(
        "Llama-3.1-70B",
        "H100",
        gpus=64,
        global_batch_size=64,
        seq_len=4096,
        zero=1,
        gradient_bytes=4.0,
        recompute="full",
    )
    assert not r["fits_in_memory"] and r["largest_memory_term"] == "gradient"
    said = " ".join(str(w) for w in r.as_dict()["warnings"])
    assert "the largest term is the gradients, 282.2 GB = 4 B × 70.6 B parameters" in said
    with pytest.raises(ValueError, match="gradient_bytes"):
        step(8.0)
