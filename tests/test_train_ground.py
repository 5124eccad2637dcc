"""Published MFU ceilings per GPU generation, the public H100 runs predicted out of sample,
and the training band: the larger leave-one-out error on the fitted ground, widened off it."""

import math

import pytest

import engine
from engine.accuracy.training_bands import (
    MLPERF_FILE,
    PUBLIC_FILE,
    public_errors,
    public_mape,
    read_public,
)
from engine.training.ground import CEILINGS, FP8_CEILINGS, ceiling_for

PROFILE = engine.get_training_profile("megatron")


@pytest.mark.parametrize(
    ("model", "gpus", "batch", "seq"),
    [("Llama-3.1-8B", 8, 128, 4096), ("Llama-3.1-70B", 64, 512, 8192)],
)
def test_the_best_searched_mfu_is_believable_or_flagged(model, gpus, batch, seq):
    df = engine.train_search(model, "H100", gpus=gpus, global_batch_size=batch, seq_len=seq)
    best = df.iloc[0]
    # Hopper: llm-foundry's MPT-7B on 8 H100, 46.44 % (engine/training/ground.py)
    assert best["published_mfu_ceiling"] == CEILINGS["Hopper"].mfu == 0.4644
    assert best["mfu"] <= 0.55 or best["above_published_mfu"]
    assert (df["above_published_mfu"] == (df["mfu"] > 0.4644)).all()


def test_a_result_above_the_ceiling_says_so_and_one_below_does_not():
    kw = dict(gpus=8, global_batch_size=128, seq_len=4096, micro_batch_size=1, zero=1)
    high = engine.train("Llama-3.1-8B", "H100", **kw)
    assert high["mfu"] > 0.4644 and high["above_published_mfu"]
    said = [w for w in high.warnings if w.code == "mfu_above_published"]
    assert len(said) == 1 and "46.4%" in str(said[0]) and "llm-foundry" in str(said[0])
    low = engine.train("Llama-3.1-8B", "H100", **kw | {"tp": 8})  # 8-way TP of a small model
    assert low["mfu"] < 0.4644 and not low["above_published_mfu"]
    assert not [w for w in low.warnings if w.code == "mfu_above_published"]


def test_ceilings_by_generation_and_precision():
    assert ceiling_for("A100", "bf16")[0].mfu == 0.6423  # llm-foundry, MPT-7B on 8 A100
    assert ceiling_for("H200", "bf16")[0] is CEILINGS["Hopper"]
    ceiling, gen, used = ceiling_for("B200", "bf16")
    assert (gen, used, ceiling) == ("Blackwell", "Hopper", CEILINGS["Hopper"])  # borrowed
    assert ceiling_for("MI300X", "bf16")[0] is None
    # fp8 against the fp8 peak: MLPerf Training v5.0's Llama 3.1 405B on 512 H200 (below)
    assert ceiling_for("H100", "fp8")[0] is FP8_CEILINGS["Hopper"]
    assert ceiling_for("B200", "fp8")[1:] == ("Blackwell", "Hopper")  # borrowed, and said
    kw = dict(gpus=8, global_batch_size=128, seq_len=4096, precision="fp8", zero=1)
    r = engine.train("Llama-3.1-8B", "H100", **kw)
    assert r["published_mfu_ceiling"] == 0.4889 and r["mfu"] < 0.4889
    assert not r["above_published_mfu"]
    fast = engine.train("Llama-3.1-8B", "H100", **kw, efficiency=0.9)
    said = [str(w) for w in fast.warnings if w.code == "mfu_above_published_fp8"]
    assert fast["above_published_mfu"] and len(said) == 1
    assert "48.9%" in said[0] and "MLPerf Training v5.0" in said[0]


def test_the_fp8_ceiling_is_the_best_mlperf_h100_run_in_the_models_convention():
    best = 0.0
    for run in read_public(MLPERF_FILE):
        f = run.fields
        r = engine.train(run.model, run.hardware, **f)
        tokens_per_gpu = f["global_batch_size"] * f["seq_len"] / run.value / f["gpus"]
        best = max(best, r["model_flops_per_token"] * tokens_per_gpu / r["peak_flop_per_s"])
    # Llama 3.1 405B on 512 H200: 1,152 × 8,192 / 50.014 s / 512 = 368.54 tokens/s per GPU,
    # × 2.6254 TFLOP per token / 1,979 TFLOP/s = 48.89 % (GPT-3 175B on 256 H100: 48.41 %)
    assert best == pytest.approx(FP8_CEILINGS["Hopper"].mfu, abs=5e-5)


def test_the_public_runs_are_predicted_out_of_sample():
    runs = read_public()
    assert len(runs) == 2 and all(r.hardware == "H100" for r in runs)
    errors = public_errors("megatron")
    # Recorded: torchtitan 8B +71.7 % (eager PyTorch at 500 W), torchtitan 405B +20.9 %:
    # MAPE (71.7 + 20.9) / 2 = 46.3 %.
    assert errors == pytest.approx([71.7, 20.9], abs=0.5)
    assert public_mape("megatron") == pytest.approx(sum(map(abs, errors)) / 2)


def test_the_band_on_the_fitted_ground_is_the_larger_leave_one_out_error():
    band, why = engine.training_band(
        engine.TrainRun(
            engine.gpt_architecture(layers=24, hidden=2304, heads=24),
            "A100",
            seq_len=2048,
            precision="fp16",
            attention="unfused",
        )
    )
    r = PROFILE.residuals
    assert (
        band.pct
        == max(r["loo_row_mape_pct"], r["loo_table_mape_pct"])
        == pytest.approx(21.89, abs=0.01)
    )
    assert why == []
    assert "leave-one-table-out" in str(band.basis)


def test_the_band_widens_off_the_fitted_generation_with_the_reasons():
    on, _ = engine.training_band(engine.TrainRun("Llama-3.1-8B", "A100", seq_len=4096))
    off, why = engine.training_band(engine.TrainRun("Llama-3.1-8B", "H100", seq_len=4096))
    assert off.pct > on.pct
    assert off.pct == pytest.approx(public_mape("megatron"))
    codes = [w.code for w in why]
    assert codes == [
        "train_off_generation_measured",
        "train_profile_for_generation",  # llm-foundry-h100 is fitted on Hopper: said
        "train_off_attention_covered",
    ]
    assert PUBLIC_FILE.name in str(why[0])
    new, why = engine.training_band(
        engine.TrainRun("Qwen3-30B-A3B", "B200", seq_len=4096, precision="fp8")
    )
    assert new.pct >= off.pct
    assert [w.code for w in why] == [
        "train_off_generation",
        "train_off_attention",
        "train_off_precision",
        "train_off_moe",
    ]
    assert math.isfinite(new.pct)
