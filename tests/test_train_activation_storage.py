"""DeepSeek-V3's low-precision activation storage (report, arXiv 2412.19437, §3.3.3): the MoE
experts' SwiGLU inputs kept in fp8 (`moe_act_input_bytes` 1) and attention's output kept once in
E5M6 (`attention_output_bytes` 1.5) for both attention's backward pass and the output
projection's. Hand arithmetic on DeepSeek-V3's shapes; the defaults keep every number."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from tests.test_train_recompute_modules import kept_per_token as recompute_kept

DEEPSEEK = ("core_attn", "layernorm", "mla_up_proj", "moe_act")  # the report's §3.2.3
RUN = dict(gpus=2048, pp=16, ep=64, zero=1, global_batch_size=15360, seq_len=4096)
RUN |= dict(precision="fp8", fp8_recipe="blockwise", recompute="selective")
RUN |= dict(recompute_modules=DEEPSEEK, expert_overlap=1.0, pp_schedule="dualpipe")
# what the report says of the run beyond its layout: bf16 moments (§3.3.3), no dropout
# (config.json: attention_dropout 0.0)
REPORT = dict(optimizer_moment_bytes=2.0, dropout=0.0)
STORAGE = dict(moe_act_input_bytes=1.0, attention_output_bytes=1.5)


def kept_per_token(saved_bytes=2.0, **num) -> float:
    """A mean DeepSeek-V3 layer's kept bytes per token under the report's recompute modules."""
    return recompute_kept(DEEPSEEK, saved=saved_bytes, **num)


def test_deepseek_v3_storage_by_hand():
    # DeepSeek-V3: h 7,168, H 128 heads, value width 128, latents 1,536 + 512 + 64 (rope);
    # 3 dense layers (ffn 18,432) and 58 MoE layers of 8 routed + 1 shared expert of 2,048;
    # fp8 GEMM inputs kept at 1 byte; no dropout; layernorm, mla_up_proj, moe_act recomputed.
    # attention: latents 1·(1,536 + 512) + 2·64 = 2,176
    #   16-bit output and its fp8 copy: 2·128·128 + 1·128·128 = 49,152 → 51,328
    #   one E5M6 copy: 1.5·128·128 = 24,576 → 26,752
    # a routed expert: its input 1·7,168 + the SwiGLU input (2 of 2,048 wide) at b bytes
    #   b = 2: 7,168 + 8,192 = 15,360; b = 1: 7,168 + 4,096 = 11,264
    # the shared expert: the router's copy 7,168 + the SwiGLU input + the down input 2,048
    #   b = 2: 17,408; b = 1: 13,312
    # an MoE layer: 8·15,360 + 17,408 = 140,288 (b = 2); 8·11,264 + 13,312 = 103,424 (b = 1)
    # a dense layer: 2·2·18,432 + 18,432 = 92,160 (its SwiGLU input stays 16-bit: not MoE)
    # norms' inputs: 2·2·7,168 = 28,672
    fp8 = dict(saved_bytes=1.0, masks=False)
    before = kept_per_token(**fp8)
    after = kept_per_token(**fp8, moe_act_bytes=1.0, attn_out_bytes=1.5)
    assert before == pytest.approx(51_328 + (3 * 92_160 + 58 * 140_288) / 61 + 28_672)
    assert after == pytest.approx(26_752 + (3 * 92_160 + 58 * 103_424) / 61 + 28_672)
    assert after == pytest.approx(158_294.03, abs=0.01)
    # E5M6 alone: one copy of 1.5 bytes in place of 2 + 1 (the fp8 copy beside the 16-bit)
    only_out = kept_per_token(**fp8, attn_out_bytes=1.5)
    assert before - only_out == pytest.approx(1.5 * 128 * 128)


def test_the_defaults_keep_every_number():
    kw = dict(gpus=8, global_batch_size=64, seq_len=4096, pp=2, micro_batch_size=1)
    for model in ("Llama-3.1-8B", "Mixtral-8x7B"):
        plain = engine.train(model, "H100", **kw).as_dict()
        said = engine.train(
            model, "H100", **kw, moe_act_input_bytes=2.0, attention_output_bytes=2.0
        )
        assert said.as_dict()["memory_per_gpu_bytes"] == plain["memory_per_gpu_bytes"]


def test_a_dense_model_keeps_its_mlp_and_only_the_attention_output_changes():
    # Llama-3.1-8B: 32 heads of 128: attention's output 2·32·128 = 8,192 bytes a token at 16
    # bits; kept once at 1 byte: 4,096 fewer a token a layer; no experts, so
    # moe_act_input_bytes changes nothing
    kw = dict(gpus=8, global_batch_size=64, seq_len=4096, micro_batch_size=1, zero=1)
    base = engine.train("Llama-3.1-8B", "H100", **kw)
    moe = engine.train("Llama-3.1-8B", "H100", **kw, moe_act_input_bytes=1.0)
    out = engine.train("Llama-3.1-8B", "H100", **kw, attention_output_bytes=1.0)
    assert moe["activation_bytes_per_gpu"] == base["activation_bytes_per_gpu"]
    # tp 1, one micro-batch of 4,096 tokens, 32 layers, no pipeline
    saved = 4096 * 32 * (2 - 1) * 32 * 128
    assert base["activation_bytes_per_gpu"] - out["activation_bytes_per_gpu"] == pytest.approx(
        saved
    )


def test_deepseek_v3_under_dualpipe_fits_with_the_reports_storage():
    # Without the report's storage its 17 micro-batches of 4 layers keep 64.7 GB and the run
    # does not fit the 72 GB of an H800 the model allows. With it (and no dropout):
    # 4,096 tokens · 158,294.03 B · 4 layers · 17 chunks = 44.09 GB; weights and gradients
    # 6.68 GB each, optimizer 5.49 GB (bf16 moments): 62.94 GB, inside 72. The step time is
    # the same (storage changes what is kept, not the GEMMs).
    plain = engine.train("DeepSeek-V3", "H800", **RUN, **REPORT)
    stored = engine.train("DeepSeek-V3", "H800", **RUN, **REPORT, **STORAGE)
    assert not plain["fits_in_memory"]
    assert stored["activation_bytes_per_gpu"] == pytest.approx(4096 * 158_294.03 * 4 * 17, rel=1e-6)
    assert stored["memory_per_gpu_bytes"] == pytest.approx(62.94e9, rel=1e-3)
    assert stored["fits_in_memory"]
    assert stored["step_time_s"] == pytest.approx(plain["step_time_s"])


@settings(max_examples=25, deadline=None)
@given(b=st.floats(1.0, 2.0), o=st.floats(1.0, 1.999))
def test_narrower_storage_never_keeps_more(b, o):
    fp8 = dict(saved_bytes=1.0, masks=False)
    base = kept_per_token(**fp8)
    narrower = kept_per_token(**fp8, moe_act_bytes=b, attn_out_bytes=o)
    assert narrower <= base
    # each MoE layer's nine experts keep (2 − b)·2·2,048 fewer; one copy at o of 128·128
    # where 3 bytes were kept
    drop = (2 - b) * 2 * 2048 * 9 * 58 / 61 + (3 - o) * 128 * 128
    assert base - narrower == pytest.approx(drop, rel=1e-9)


def test_the_cli_takes_them_and_bad_values_are_refused():
    cmd = [sys.executable, "-m", "engine", "train", "--model", "DeepSeek-V3", "--hardware"]
    cmd += ["H800", "--gpus", "2048", "--pp", "16", "--ep", "64", "--global-batch-size"]
    cmd += ["15360", "--seq-len", "4096", "--precision", "fp8", "--format", "json"]
    out = subprocess.run(
        [*cmd, "--moe-act-input-bytes", "1", "--attention-output-bytes", "1.5"],
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(out.stdout)
    assert got["assumptions"]["moe_act_input_bytes"] == 1.0
    assert got["assumptions"]["attention_output_bytes"] == 1.5
    bad = subprocess.run([*cmd, "--moe-act-input-bytes", "0.5"], capture_output=True, text=True)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "moe_act_input_bytes" in bad.stderr or "moe-act-input-bytes" in bad.stderr
    assert np.isfinite(got["memory_per_gpu_bytes"])
