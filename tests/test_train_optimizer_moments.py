"""Adam's moments at `optimizer_moment_bytes` each (4: fp32, the default; 2: bf16, Megatron-Core's
precision-aware optimizer and DeepSeek-V3, report §3.3.3): the optimizer state's memory and the
optimizer step's traffic, the fp32 master weight unchanged."""

import json
import subprocess
import sys

import pytest

import engine

# Llama-3.1-8B on 8 H100, pp 4, dp 2: the first stage holds 8 layers and the embedding,
# 8·218,112,000 + 525,336,576 = 2,270,232,576 parameters
RUN = dict(gpus=8, global_batch_size=16, seq_len=4096, pp=4)
STAGE = 2_270_232_576


def step(moments, **kw):
    return engine.train("Llama-3.1-8B", "H100", optimizer_moment_bytes=moments, **RUN | kw)


def test_bf16_moments_hold_8_bytes_of_state_a_parameter():
    fp32, bf16 = step(4.0), step(2.0)
    # 4 (master) + 2·4 = 12 bytes against 4 + 2·2 = 8
    assert fp32["optimizer_bytes_per_gpu"] == 12 * STAGE
    assert bf16["optimizer_bytes_per_gpu"] == 8 * STAGE
    assert fp32["memory_per_gpu_bytes"] - bf16["memory_per_gpu_bytes"] == 4 * STAGE
    # ZeRO-1 shards them over the 2 data-parallel ranks
    assert step(2.0, zero=1)["optimizer_bytes_per_gpu"] == 8 * STAGE / 2
    # the optimizer step reads the gradient (2), reads and writes the state (2 × 12 or 2 × 8)
    # and writes the 16-bit weight (2): 28 bytes a parameter against 20
    assert bf16["optimizer_s"] / fp32["optimizer_s"] == pytest.approx(20.0 / 28.0)
    assert bf16["gradient_bytes_per_gpu"] == fp32["gradient_bytes_per_gpu"]
    assert bf16["compute_s"] == fp32["compute_s"]


def test_the_default_is_fp32_and_a_bad_figure_is_named():
    plain = engine.train("Llama-3.1-8B", "H100", **RUN).as_dict()
    assert plain["assumptions"]["optimizer_moment_bytes"] == 4.0
    assert plain["optimizer_bytes_per_gpu"] == 12 * STAGE
    with pytest.raises(ValueError, match="optimizer_moment_bytes"):
        step(8.0)
    cmd = [sys.executable, "-m", "engine", "train", "--model", "Llama-3.1-8B", "--hardware"]
    cmd += ["H100", "--gpus", "8", "--pp", "4", "--global-batch-size", "16", "--seq-len"]
    cmd += ["4096", "--optimizer-moment-bytes", "2", "--format", "json"]
    out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    assert out["optimizer_bytes_per_gpu"] == 8 * STAGE
    assert out["assumptions"]["optimizer_moment_bytes"] == 2.0
