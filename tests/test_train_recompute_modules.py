"""Selective recomputation by module (Megatron-Core's --recompute-modules): what each module
stops keeping for the backward pass (hand arithmetic on DeepSeek-V3's shapes), what it runs
again (the MLA up-projections' FLOPs, a recomputed MoE layer's second dispatch and combine),
the default (core_attn) unchanged, and the checks: modules only with selective, only parts the
model has, names spelled as Megatron-Core spells them. And what an fp8 run keeps of its GEMMs'
inputs (`fp8_saved_bytes`: Transformer Engine's 1-byte copies)."""

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.scenarios.training import RECOMPUTE_MODULES, TrainRun, modules_mask
from engine.training.config import make_config
from engine.training.memory import activation_bytes_per_token
from engine.training.numerics import Numerics
from engine.training.setup import setup

# DeepSeek-V3 on 2,048 H800 as its report describes the run (PP 16, EP 64, ZeRO-1), in bf16
# (every activation kept at 16 bits) but where fp8 is said
RUN = dict(global_batch_size=15360, seq_len=4096, gpus=2048, precision="bf16")
LAYOUT = dict(pp=16, ep=64, micro_batch_size=1, zero=1, recompute="selective")
DEEPSEEK = ("core_attn", "layernorm", "mla_up_proj", "moe_act")  # the report's §3.2.3


def step(modules=("core_attn",), recompute="selective", **kw):
    layout = LAYOUT | {"recompute": recompute, "recompute_modules": modules} | kw
    return engine.train("DeepSeek-V3", "H800", **RUN, **layout).as_dict()


def kept_per_token(modules, saved=2.0, **num) -> float:
    """A mean layer's bytes per token with `modules` rebuilt (engine.training.memory), GEMM
    inputs kept at `saved` bytes an element (`num`: the run's other Numerics fields)."""
    s = setup(TrainRun("DeepSeek-V3", "H800", **RUN)).s
    c = make_config(
        gpus=2048,
        tp=1,
        pp=16,
        cp=1,
        vp=1,
        ep=64,
        micro_batch=1,
        global_batch=15360,
        seq_len=4096,
        zero=1,
        recompute=1,
        recompute_modules=modules_mask(modules),
    )
    return float(
        activation_bytes_per_token(s, 4096.0, c=c, num=Numerics(2.0, saved_bytes=saved, **num))[0][
            0
        ]
    )


# DeepSeek-V3: h 7,168, H 128 heads of 192 (query, key) and 128 (value), latents 1,536
# (query), 512 + 64 (keys and values, rope); 3 dense layers (ffn 18,432) and 58 MoE layers of
# 8 routed and 1 shared expert of 2,048, gated (3 matrices).
# attention: 2h + 2(H + H)·192 + 2H·128 + 2(1,536 + 512 + 64) + 2H·128 + h
#   = 14,336 + 98,304 + 32,768 + 4,224 + 32,768 + 7,168 = 189,568
# a routed expert: 2h + 2·2·2,048 + 2·2,048 = 26,624; the shared one reads the norm's output
# the router keeps: 2·2·2,048 + 2·2,048 = 12,288
# MoE layer: 2h + 8·26,624 + 12,288 + h = 246,784; dense: 2h + 4·18,432 + 2·18,432 + h = 132,096
# norms: 2 · 2h = 28,672
WHOLE = 189_568 + (3 * 132_096 + 58 * 246_784) / 61 + 28_672  # 459,383.61 bytes per token
DROPPED = {
    "core_attn": 0.0,  # FlashAttention keeps no scores
    "mla_up_proj": 2 * (128 + 128) * 192 + 2 * 128 * 128,  # the per-head Q, K, V: 131,072
    "layernorm": 2 * 2 * 7_168,  # the outputs of the two norms: 28,672
    "moe_act": 58 / 61 * 8 * 2 * 2_048,  # the routed experts' activation outputs
    "mlp": 3 / 61 * (132_096 - 2 * 7_168),  # dense layers keep their input only
    "moe": 58 / 61 * (246_784 - 2 * 7_168),  # MoE layers keep their input only
    "shared_experts": 58 / 61 * 12_288,
}


@pytest.mark.parametrize("module", RECOMPUTE_MODULES)
def test_each_module_drops_what_it_rebuilds(module):
    assert kept_per_token(("core_attn",)) == pytest.approx(WHOLE)
    assert kept_per_token(("core_attn", module)) == pytest.approx(WHOLE - DROPPED[module])


def test_deepseeks_modules_keep_three_fifths_of_the_activations():
    # 459,383.61 − 131,072 − 28,672 − 31,156.46 = 268,483.15 bytes per token: 0.5844
    kept = WHOLE - sum(DROPPED[m] for m in DEEPSEEK)
    assert kept == pytest.approx(268_483.15, abs=0.01)
    plain, fine = step(), step(DEEPSEEK)
    ratio = fine["activation_bytes_per_gpu"] / plain["activation_bytes_per_gpu"]
    assert ratio == pytest.approx(kept / WHOLE)
    assert fine["recompute_modules"] == "core_attn,moe_act,layernorm,mla_up_proj"


def test_the_up_projections_run_again():
    # per token and layer 2·(1,536·128·192 + 512·128·(128 + 128)) = 109,051,904 FLOPs,
    # × 61 layers = 6,652,166,144 hardware FLOPs per token more; model FLOPs unchanged
    plain, again = step(), step(("core_attn", "mla_up_proj"))
    extra = again["hardware_flops_per_token"] - plain["hardware_flops_per_token"]
    assert extra == pytest.approx(6_652_166_144)
    assert again["model_flops_per_token"] == plain["model_flops_per_token"]
    assert again["compute_s"] > plain["compute_s"]


def test_a_recomputed_moe_layer_dispatches_and_combines_again():
    # nothing hides the all-to-alls (expert_overlap 0): forward, backward and the MoE
    # layer's second forward are 3 of each, against 2: exactly 1.5×
    plain, again = step(), step(("core_attn", "moe"))
    assert again["comm_ep_s"] == pytest.approx(1.5 * plain["comm_ep_s"])
    # 459,383.61 − 58/61 · 232,448 = 459,383.61 − 221,016.13 = 238,367.48 bytes per token
    # kept: 0.5189 of them
    ratio = again["activation_bytes_per_gpu"] / plain["activation_bytes_per_gpu"]
    assert ratio == pytest.approx((WHOLE - DROPPED["moe"]) / WHOLE)
    assert WHOLE - DROPPED["moe"] == pytest.approx(238_367.48, abs=0.01)


def test_an_fp8_run_keeps_its_gemms_inputs_as_transformer_engine_does():
    # fp8_saved_bytes 1: each GEMM keeps its own 1-byte copy of its input, beside any 16-bit
    # tensor another operator keeps (FlashAttention's output; the router's input):
    # attention: 2·h (MLA's two down-projections, a copy each) + 131,072 + (2,048 + 2·64)
    #   + 32,768 + 16,384 (the projection's copy of the output) + h = 203,904
    # a routed expert: h + 4·2,048 + 2,048 = 17,408; the shared one the same
    # MoE layer: 2h + 9·17,408 + h = 178,176; dense: h + 4·18,432 + 18,432 + h = 106,496
    # 203,904 + (3·106,496 + 58·178,176)/61 + 28,672 = 407,226.75 bytes per token: 0.8865
    assert kept_per_token(("core_attn",), saved=1.0) == pytest.approx(407_226.75, abs=0.01)
    assert kept_per_token(("core_attn",), saved=2.0) == pytest.approx(WHOLE)
    fp8 = dict(RUN, precision="fp8")
    one, two = (
        engine.train("DeepSeek-V3", "H800", **fp8, **LAYOUT, fp8_saved_bytes=b).as_dict()
        for b in (1.0, 2.0)
    )
    assert one["activation_bytes_per_gpu"] / two["activation_bytes_per_gpu"] == pytest.approx(
        407_226.75 / WHOLE
    )
    assert one["step_time_s"] == two["step_time_s"]  # memory only
    assert two["activation_bytes_per_gpu"] == step()["activation_bytes_per_gpu"]  # = bf16's
    # the report's layout with its modules fits at 1 byte (Transformer Engine), not at 2
    fits = {
        b: engine.train(
            "DeepSeek-V3", "H800", **fp8, **LAYOUT, recompute_modules=DEEPSEEK, fp8_saved_bytes=b
        )["fits_in_memory"]
        for b in (1.0, 2.0)
    }
    assert fits == {1.0: True, 2.0: False}


def test_the_default_is_megatron_cores():
    assert engine.TrainLayout().recompute_modules == ("core_attn",)
    given_ = step(("core_attn",))
    assert {k: v for k, v in step().items() if k != "warnings"} == {
        k: v for k, v in given_.items() if k != "warnings"
    }
    assert step(recompute="full")["recompute_modules"] is None  # only selective has modules


def test_modules_need_selective_and_known_names():
    with pytest.raises(ValueError, match=r"applies to recompute selective.*not full"):
        engine.TrainLayout(recompute="full", recompute_modules=("moe",))
    with pytest.raises(ValueError, match=r"must be some of core_attn.*got attention"):
        engine.TrainLayout(recompute="selective", recompute_modules=("attention",))
    assert engine.TrainLayout(
        recompute="selective", recompute_modules="moe, core_attn"
    ).recompute_modules == ("core_attn", "moe")  # Megatron-Core's order, one each
    with pytest.raises(
        ValueError, match=r"which this search does not try \(recompute none, full\)"
    ):
        engine.LayoutSpace(recompute=["full", "none"], recompute_modules=("moe",))


def test_a_module_the_model_lacks_is_refused():
    with pytest.raises(
        ValueError, match=r"mla_up_proj needs multi-head latent.*Llama-3.1-8B lacks"
    ):
        engine.train(
            "Llama-3.1-8B",
            "H100",
            gpus=8,
            global_batch_size=128,
            seq_len=4096,
            recompute="selective",
            recompute_modules=("core_attn", "mla_up_proj"),
        )
    df = engine.train_search(
        "Llama-3.1-8B",
        "H100",
        gpus=8,
        global_batch_size=128,
        seq_len=4096,
        tp=[1],
        pp=[1],
        cp=[1],
        vp=[1],
        recompute=["none", "selective"],
        recompute_modules=("moe",),
        include_rejected=True,
    )
    code = df["reason"].map(lambda r: None if isinstance(r, float) else r.code)
    selective = df["recompute"] == "selective"
    assert selective.sum() == 20  # micro-batches 1, 2, 4, 8, 16 × ZeRO 0-3, each refused
    assert code[selective].eq("recompute_module_not_in_model").all()
    assert not code[~selective].eq("recompute_module_not_in_model").any()
    assert df.loc[~selective, "reason"].isna().any()  # and the plain layouts are ranked


def test_the_search_carries_its_modules():
    df = engine.train_search(
        "DeepSeek-V3",
        "H800",
        **RUN,
        pp=[16],
        ep=[64],
        tp=[1],
        cp=[1],
        vp=[1],
        micro_batch_size=[1],
        zero=[1],
        recompute=["none", "selective"],
        recompute_modules=DEEPSEEK,
        include_rejected=True,
    )
    sel = df[df["recompute"] == "selective"].iloc[0]
    assert sel["recompute_modules"] == "core_attn,moe_act,layernorm,mla_up_proj"
    assert df.loc[df["recompute"] == "none", "recompute_modules"].isna().all()
    one = step(DEEPSEEK)
    assert sel["step_time_s"] == pytest.approx(one["step_time_s"])  # the search's row is train's
    assert sel["memory_per_gpu_bytes"] == pytest.approx(one["memory_per_gpu_bytes"])


@settings(max_examples=25, deadline=None)
@given(
    st.sets(st.sampled_from(RECOMPUTE_MODULES), min_size=1),
    st.sampled_from(RECOMPUTE_MODULES),
)
def test_one_more_module_never_keeps_more_nor_runs_faster(modules, extra):
    fewer, more = step(tuple(modules)), step(tuple(modules | {extra}))
    assert more["activation_bytes_per_gpu"] <= fewer["activation_bytes_per_gpu"] * (1 + 1e-12)
    assert more["step_time_s"] >= fewer["step_time_s"] * (1 - 1e-12)
    assert more["hardware_flops_per_token"] >= fewer["hardware_flops_per_token"]


def test_the_cli_takes_and_reports_them():
    args = [sys.executable, "-m", "engine", "train", "--model", "DeepSeek-V3"]
    args += ["--hardware", "H800", "--global-batch-size", "15360", "--seq-len", "4096"]
    args += ["--gpus", "2048", "--pp", "16", "--ep", "64", "--zero", "1", "--precision", "fp8"]
    ok = subprocess.run(
        [*args, "--recompute", "selective", "--recompute-modules", "mla_up_proj,layernorm"],
        capture_output=True,
        text=True,
        check=True,
    )
    out = json.loads(
        subprocess.run(
            [
                *args,
                "--recompute",
                "selective",
                "--recompute-modules",
                "mla_up_proj,layernorm",
                "--format",
                "json",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert "recompute_modules" in ok.stdout
    assert out["recompute_modules"] == "layernorm,mla_up_proj"
    bad = subprocess.run([*args, "--recompute-modules", "moe"], capture_output=True, text=True)
    assert bad.returncode == 2 and "applies to recompute selective" in bad.stderr
    assert "Traceback" not in bad.stderr
    assert np.isfinite(out["step_time_s"])
