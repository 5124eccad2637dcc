"""FP8 training (engine/training/numerics.py; docs/model.md, "FP8 training"): the casts each
recipe adds before an fp8 GEMM, the LM head kept in 16 bits, the refusals, the band, and the
recipe carried by the CLI, the search and /train's link."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import engine
from tests.test_page_train import ROOT, open_page, text, url

RUN = dict(gpus=8, global_batch_size=128, seq_len=4096)
SMALL = {"model": "Llama-3.1-8B", "gpus": "8", "global_batch_size": "128", "seq_len": "4096"}
LLAMA_8B = {"hidden": 4096, "ffn": 14336, "vocab": 128256}


def ops(recipe: str | None, hardware: str = "H100", precision: str = "fp8", **layout):
    return engine.training_operators(
        "Llama-3.1-8B", hardware, seq_len=4096, precision=precision, fp8_recipe=recipe, **layout
    ).set_index(["phase", "name"])


def test_the_mlp_cast_is_its_bytes_over_the_bandwidth_by_hand():
    t = ops("delayed")
    h, f, T = LLAMA_8B["hidden"], LLAMA_8B["ffn"], 4096  # tp 1, one sequence of 4,096 tokens
    # the MLP's activation elements per token: in h, out h, the gated intermediate written and
    # read (2·2·f): 2·4096 + 4·14336 = 65,536; its weights 3·h·f = 176,160,768
    elements, weights = (2 * h + 4 * f) * T, 3 * h * f
    assert weights == 176_160_768
    # delayed scaling: 4 bytes per element (2 read, the 8-bit copy and its transpose written);
    # forward: half the activation elements (the input) and the weights
    fwd = 0.5 * elements * 4 + weights * 4  # 536,870,912 + 704,643,072
    bwd = 0.5 * elements * 4  # the output's gradient
    row = t.loc[("forward", "mlp_fp8_cast")]
    assert row["bytes"] == pytest.approx(fwd) == 1_241_513_984
    assert t.loc[("backward", "mlp_fp8_cast"), "bytes"] == pytest.approx(bwd) == 536_870_912
    assert row["flops"] == 0 and row["bottleneck"] == "memory"
    assert row["time_ms"] == pytest.approx(fwd / row["achievable_bytes_per_s"] * 1e3)


def test_the_lm_head_stays_16_bit_while_the_layers_run_fp8():
    t = ops("delayed")
    head, mlp = t.loc[("forward", "lm_head")], t.loc[("forward", "mlp")]
    assert head["peak_flop_per_s"] == pytest.approx(989e12)  # H100's 16-bit peak
    assert mlp["peak_flop_per_s"] == pytest.approx(1979e12)  # its fp8 peak
    # the head's weights at 2 bytes: 2 · 128,256 · 4,096
    assert head["weight_bytes"] == pytest.approx(2 * LLAMA_8B["vocab"] * LLAMA_8B["hidden"])
    assert ("forward", "lm_head_fp8_cast") not in t.index
    bf16 = ops(None, precision="bf16")
    assert not any(name.endswith("_fp8_cast") for _, name in bf16.index)


def test_the_operator_rows_sum_to_the_steps_compute_with_the_casts():
    r = engine.train("Llama-3.1-8B", "H100", **RUN, precision="fp8", fp8_recipe="current")
    t = ops("current")
    # one GPU holds every layer (pp 1), no recomputation: Σ count·time = compute per micro-batch
    assert t["total_time_ms"].sum() / 1e3 == pytest.approx(r["compute_s"] / r["micro_batches"])


def test_current_scaling_reads_each_tensor_once_more():
    delayed, current = ops("delayed"), ops("current")
    # backward casts are activations only: 6 bytes per element against 4
    back = ("backward", "qkv_projection_fp8_cast")
    assert current.loc[back, "bytes"] / delayed.loc[back, "bytes"] == pytest.approx(6 / 4)
    # blockwise adds a 4-byte scale per 128 elements to each copy: 4 + 8/128 bytes
    block = ops("blockwise")
    assert block.loc[back, "bytes"] / delayed.loc[back, "bytes"] == pytest.approx((4 + 8 / 128) / 4)


@settings(max_examples=25, deadline=None)
@given(
    tp=hs.sampled_from([1, 2, 4, 8]),
    mb=hs.sampled_from([1, 2, 4]),
    seq=hs.sampled_from([1024, 2048, 4096, 8192]),
)
def test_more_bytes_per_cast_never_make_a_step_faster(tp, mb, seq):
    run = dict(gpus=8, global_batch_size=64, seq_len=seq, precision="fp8")
    lay = dict(tp=tp, micro_batch_size=mb)
    step = {
        rc: engine.train("Llama-3.1-8B", "H100", **run, fp8_recipe=rc, **lay)["step_time_s"]
        for rc in ("delayed", "blockwise", "current")
    }
    assert step["delayed"] < step["blockwise"] < step["current"]
    b200 = {
        rc: engine.train("Llama-3.1-8B", "B200", **run, fp8_recipe=rc, **lay)["step_time_s"]
        for rc in ("delayed", "mxfp8")
    }
    assert b200["delayed"] < b200["mxfp8"]


def test_fp8_is_faster_than_bf16_by_less_than_the_peaks_ratio():
    fp8 = engine.train("Llama-3.1-8B", "H100", **RUN, precision="fp8")
    bf16 = engine.train("Llama-3.1-8B", "H100", **RUN, precision="bf16")
    assert fp8["fp8_recipe"] == "delayed" and bf16["fp8_recipe"] is None  # the default, shown
    # recorded (megatron profile, tp 1, ZeRO 0): 1.42x; the peaks are 2x apart, and attention,
    # the norms, the head and the casts do not speed up
    speedup = bf16["step_time_s"] / fp8["step_time_s"]
    assert speedup == pytest.approx(1.42, abs=0.01)


def test_bad_recipes_are_refused_with_the_rule():
    with pytest.raises(ValueError, match="fp8_recipe applies to precision fp8 only, not bf16"):
        engine.TrainRun("Llama-3.1-8B", "H100", **RUN, fp8_recipe="current")
    with pytest.raises(ValueError, match="fp8_recipe must be one of delayed, current"):
        engine.TrainRun("Llama-3.1-8B", "H100", **RUN, precision="fp8", fp8_recipe="e4m3")
    with pytest.raises(ValueError, match="H100 has no block-scaled \\(MX\\) tensor cores"):
        engine.train("Llama-3.1-8B", "H100", **RUN, precision="fp8", fp8_recipe="mxfp8")
    assert engine.train("Llama-3.1-8B", "B200", **RUN, precision="fp8", fp8_recipe="mxfp8")


def test_the_search_carries_the_recipe_in_a_column():
    space = dict(tp=[1, 2], pp=[1], cp=[1], vp=[1], ep=[1], micro_batch_size=[1], zero=[1])
    df = engine.train_search(
        "Llama-3.1-8B", "H100", **RUN, precision="fp8", fp8_recipe="blockwise", **space
    )
    assert set(df["fp8_recipe"]) == {"blockwise"}
    df = engine.train_search("Llama-3.1-8B", "H100", **RUN, **space)
    assert df["fp8_recipe"].isna().all()


def test_the_cli_takes_the_recipe_and_refuses_it_without_fp8():
    cmd = [sys.executable, "-m", "engine", "train", "--model", "Llama-3.1-8B"]
    cmd += ["--hardware", "H100", "--gpus", "8", "--global-batch-size", "128"]
    cmd += ["--seq-len", "4096", "--format", "json"]
    out = subprocess.run(
        [*cmd, "--precision", "fp8", "--fp8-recipe", "current"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    got = json.loads(out.stdout)
    want = engine.train("Llama-3.1-8B", "H100", **RUN, precision="fp8", fp8_recipe="current")
    assert got["fp8_recipe"] == "current" and got["step_time_s"] == want["step_time_s"]
    bad = subprocess.run(
        [*cmd, "--fp8-recipe", "current"], capture_output=True, text=True, cwd=ROOT
    )
    assert bad.returncode == 2 and "applies to precision fp8 only" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_the_band_is_measured_for_delayed_scaling_on_hopper_and_a_floor_otherwise():
    run = dict(**RUN, precision="fp8", profile="llm-foundry-h100")
    band, why = engine.training_band(engine.TrainRun("Llama-3.1-8B", "H100", **run))
    measured = next(w for w in why if w.code == "train_off_precision_measured")
    # the profile's own stack's measured H100 fp8 runs, fitted by no profile: llm-foundry's seven
    # FSDP runs, 16.6 % (tests/test_train_hopper.py); MLPerf Training's 24 NeMo runs, 28.0 %
    # (tests/test_train_mlperf.py), are another stack's and named beside it
    assert measured.fields["mape"] == "16.6 %" and measured.fields["n"] == "7"
    assert measured.fields["file"] == "llm-foundry-h100-fp8-training.csv"
    other = next(w for w in why if w.code == "train_other_stack_check")
    assert other.fields["mape"] == "28.0 %" and other.fields["stack"] == "Megatron"
    # the band: the larger of the fit's own 26.9 % (leave one table out) and 16.6 %
    assert band.pct == pytest.approx(26.92, abs=0.01)
    _, why = engine.training_band(
        engine.TrainRun("Llama-3.1-8B", "H100", **run | {"fp8_recipe": "current"})
    )
    assert [w.code for w in why] == ["train_off_precision"]


def test_the_train_page_reads_the_recipe_from_its_link():
    at = open_page({"precision": "fp8", "fp8_recipe": "current", **SMALL})
    assert "fp8 (tensor-wise, current scaling)" in text(at.caption)
    assert url(at, "fp8_recipe") == "current"
    at = open_page({"precision": "fp8", "fp8_recipe": "mxfp8", **SMALL})
    assert "H100 has no block-scaled (MX) tensor cores" in text(at.error)
    # a recipe on a 16-bit run: the box is greyed out and the run reads no recipe
    at = open_page({"fp8_recipe": "current", **SMALL})
    box = next(s for s in at.selectbox if s.label == "FP8 scaling recipe")
    assert box.disabled and not at.error
    assert "bf16, FlashAttention" in text(at.caption) and "scaling" not in text(at.caption)


LLAMA_405B_FSDP = dict(gpus=128, tp=8, micro_batch_size=2, global_batch_size=32, seq_len=8192)
LLAMA_405B_FSDP |= dict(precision="fp8", fp8_recipe="current", recompute="full", zero=3)


def test_fp8_param_gather_halves_the_weights_all_gathers_and_their_memory():
    plain = engine.train("Llama-3.1-405B", "H100", **LLAMA_405B_FSDP)
    fp8 = engine.train("Llama-3.1-405B", "H100", **LLAMA_405B_FSDP, fp8_param_gather=True)
    assert plain["fp8_param_gather"] is False and fp8["fp8_param_gather"] is True
    # the weights held: 1 byte instead of 2 (ZeRO-3: each rank's shard)
    assert fp8["weight_bytes_per_gpu"] == pytest.approx(plain["weight_bytes_per_gpu"] / 2)
    assert fp8["gradient_bytes_per_gpu"] == plain["gradient_bytes_per_gpu"]  # still 16-bit
    # ZeRO-3, one micro-batch, full recomputation: the weights are gathered three times (forward,
    # recompute, backward) and the gradients reduce-scattered once, each a ring of equal
    # bytes per weight at 2 bytes: total = 3·ag + rs with ag = rs; in fp8 the gathers halve:
    # 1.5·ag + rs = (1.5 + 1)/(3 + 1) of the total
    ratio = fp8["comm_dp_total_s"] / plain["comm_dp_total_s"]
    assert ratio == pytest.approx(2.5 / 4, rel=1e-3)
    # recorded (megatron): 13.8 s → 11.1 s per step, exposed data-parallel time 3.8 s → 1.0 s
    assert plain["step_time_s"] == pytest.approx(13.8, abs=0.05)
    assert fp8["step_time_s"] == pytest.approx(11.06, abs=0.05)
    assert fp8["compute_s"] == plain["compute_s"]


def test_fp8_param_gather_is_refused_without_fp8_and_named_when_weights_do_not_fit():
    with pytest.raises(ValueError, match="fp8_param_gather applies to precision fp8 only"):
        engine.TrainRun("Llama-3.1-8B", "H100", **RUN, fp8_param_gather=True)
    with pytest.raises(ValueError, match="fp8_param_gather must be true or false"):
        engine.TrainRun("Llama-3.1-8B", "H100", **RUN, precision="fp8", fp8_param_gather="yes")
    # ZeRO-2 on 64 GPUs: gradients and optimizer state sharded 64 ways, the weights whole, so the
    # 70.6 B weights are the largest term: 70.6 GB at 1 byte each
    r = engine.train(
        "Llama-3.1-70B",
        "H100",
        gpus=64,
        global_batch_size=64,
        seq_len=1024,
        precision="fp8",
        fp8_param_gather=True,
        zero=2,
        recompute="full",
    )
    assert r["largest_memory_term"] == "weight"
    why = next(w for w in r.warnings if w.code == "fp8_weights_do_not_fit")
    assert why.fields["bytes_per_param"] == "1" and why.fields["params"] == "70.6"
    assert "the largest term is the fp8 weights" in str(why)


def test_the_train_page_reads_fp8_param_gather_from_its_link():
    at = open_page({"precision": "fp8", "fp8_param_gather": "on", **SMALL})
    assert "fp8 (tensor-wise, delayed scaling (Transformer Engine's default), weights in fp8)" in (
        text(at.caption)
    )
    assert url(at, "fp8_param_gather") == "on"
