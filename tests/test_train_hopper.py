"""A training profile fitted on Hopper: MosaicML's llm-foundry benchmark tables (MPT models with
FSDP and FlashAttention on H100, data/measurements/training/llm-foundry-*.csv) read in the
training schema, the `llm-foundry-h100` profile reproducible by its command, and both shipped
profiles judged on runs neither was fitted on (torchtitan's public H100 runs, llm-foundry's
A100 and fp8 tables)."""

import numpy as np
import pytest

import engine
from engine.accuracy.training_bands import public_errors, public_mape
from engine.training.calibrate import calibrate
from engine.training.measurements import MEASUREMENTS_DIR, predict, read_runs

H100 = read_runs(MEASUREMENTS_DIR / "llm-foundry-h100-bf16-training.csv")
A100 = read_runs(MEASUREMENTS_DIR / "llm-foundry-a100-bf16-training.csv")
FP8 = read_runs(MEASUREMENTS_DIR / "llm-foundry-h100-fp8-training.csv")
HOPPER = engine.get_training_profile("llm-foundry-h100")
MEGATRON = engine.get_training_profile("megatron")


def mape(runs, profile) -> float:
    pred = predict(runs, profile.assumptions)
    meas = np.array([r.value for r in runs])
    return float(np.mean(np.abs(pred / meas - 1.0)) * 100)


def test_the_tables_are_read_as_fsdp_runs_with_flash_attention():
    assert (len(H100), len(A100), len(FP8)) == (70, 61, 7)
    assert {r.hardware for r in H100 + FP8} == {"H100"} and {r.hardware for r in A100} == {"A100"}
    assert {r.attention for r in H100 + A100 + FP8} == {"flash"}
    assert {r.metric for r in H100} == {"tokens_per_s_per_gpu"}
    # FULL_SHARD is ZeRO-3, SHARD_GRAD_OP ZeRO-2; no tensor or pipeline parallelism
    assert {(r.scheme, r.zero) for r in H100} == {
        ("FSDP FULL_SHARD", 3),
        ("FSDP SHARD_GRAD_OP", 2),
    }
    assert {(r.tp, r.pp, r.vp) for r in H100 + A100} == {(1, 1, 1)}
    # the first row: MPT-70B (80 layers, d_model 8192, 64 heads, vocabulary 50,368) on 512
    # H100 at 2,048 tokens, micro-batch 8, 4,096 sequences, activation checkpointing
    first = H100[0]
    assert (first.arch.layers, first.arch.hidden, first.gpus) == (80, 8192, 512)
    assert (first.micro_batch, first.global_batch, first.seq_len) == (8, 4096, 2048)
    assert first.recompute == "full" and first.value == 1007


def test_the_hopper_profile_is_reproducible_by_its_command_and_reports_its_errors():
    assert "calibrate-train" in HOPPER.command and HOPPER.rows == 70
    fitted = calibrate(H100, name="llm-foundry-h100")
    for name, value in fitted.values().items():
        shipped = HOPPER.values()[name]  # a word (the MoE dispatcher) equals exactly
        assert value == (shipped if isinstance(shipped, str) else pytest.approx(shipped, rel=1e-5))
    res = HOPPER.residuals
    assert res["mape_pct"] == pytest.approx(fitted.residuals["mape_pct"], rel=1e-4)
    # recorded when fitted: 12.0 % in sample, 12.4 % leaving one run out, 26.9 % leaving one
    # of the two tables out (the >= 128-GPU table predicted from the other, and back)
    assert res["mape_pct"] == pytest.approx(12.0, abs=0.1)
    assert res["loo_row_mape_pct"] == pytest.approx(12.4, abs=0.1)
    assert res["loo_table_mape_pct"] == pytest.approx(26.9, abs=0.1)
    # Hopper's GEMMs at half the dense datasheet peak, against Ampere's 0.70 (the megatron fit)
    assert HOPPER.values()["efficiency"] == pytest.approx(0.507, abs=0.001)
    assert MEGATRON.values()["efficiency"] == pytest.approx(0.702, abs=0.001)


def test_out_of_sample_the_hopper_fit_beats_the_ampere_one_on_hopper():
    # torchtitan's two public H100 runs, fitted by neither profile: Llama 3.1 8B on 8 H100
    # (5,762 tokens/s per GPU) and 405B on 128 (29.0 % MFU). Recorded: +16.4 % and -18.6 %
    # (MAPE 17.5 %) against the megatron profile's +71.7 % and +20.9 % (46.3 %).
    assert public_errors("llm-foundry-h100") == pytest.approx([16.4, -18.6], abs=0.2)
    assert public_mape("llm-foundry-h100") < public_mape("megatron") / 2
    # and on llm-foundry's own H100 table, the Ampere fit predicts 40.7 % off (1.45x fast)
    assert mape(H100, MEGATRON) == pytest.approx(40.7, abs=0.2)


def test_out_of_sample_the_ampere_fit_holds_on_ampere_and_neither_on_fp8():
    # megatron (fitted on the 2021 paper's A100 runs, unfused attention, Megatron-LM) on
    # llm-foundry's A100 runs (FSDP, FlashAttention, 2023): 13.8 %
    assert mape(A100, MEGATRON) == pytest.approx(13.8, abs=0.2)
    # fp8 is fitted by neither, and both predict llm-foundry's seven fp8 runs too fast, every
    # one: recorded 16.6 % MAPE for the Hopper fit (+1.5 to +30.4 %), 70.4 % for megatron. With
    # the fp8 casts priced (delayed scaling, llm-foundry's Transformer Engine default) and the LM
    # head in bf16 (engine/training/numerics.py): before them, 26.6 % and 88.7 %.
    for profile, recorded in ((HOPPER, 16.6), (MEGATRON, 70.4)):
        pred = predict(FP8, profile.assumptions)
        assert (pred > np.array([r.value for r in FP8])).all()
        assert mape(FP8, profile) == pytest.approx(recorded, abs=0.2)


def test_the_band_points_a_hopper_run_under_the_ampere_fit_to_the_hopper_one():
    run = dict(gpus=8, global_batch_size=128, seq_len=4096)
    band, why = engine.training_band(engine.TrainRun("Llama-3.1-8B", "H100", **run))
    codes = [w.code for w in why]
    assert "train_profile_for_generation" in codes
    hint = next(w for w in why if w.code == "train_profile_for_generation")
    assert hint.fields["name"] == "llm-foundry-h100" and hint.fields["band"] == "±26.9 %"
    on = engine.TrainRun("Llama-3.1-8B", "H100", profile="llm-foundry-h100", **run)
    band, why = engine.training_band(on)
    # on its ground: the larger leave-one-out MAPE, nothing to add
    assert band.pct == pytest.approx(HOPPER.residuals["loo_table_mape_pct"]) and why == []
    off = engine.TrainRun("Llama-3.1-8B", "A100", profile="llm-foundry-h100", **run)
    _, why = engine.training_band(off)
    assert [w.fields.get("name") for w in why if w.code == "train_profile_for_generation"] == [
        "megatron"
    ]


@pytest.mark.parametrize(
    ("model", "gpus", "batch", "seq", "recorded"),
    [("Llama-3.1-8B", 8, 128, 4096, 0.456), ("Llama-3.1-70B", 64, 512, 8192, 0.410)],
)
def test_the_hopper_fits_best_searched_mfu_is_under_the_published_ceiling(
    model, gpus, batch, seq, recorded
):
    # megatron's best layouts are 65.0 % and 58.2 % (flagged above llm-foundry's 46.4 %)
    df = engine.train_search(
        model, "H100", gpus=gpus, global_batch_size=batch, seq_len=seq, profile=HOPPER.name
    )
    best = df.iloc[0]
    assert best["mfu"] == pytest.approx(recorded, abs=0.002)
    assert best["mfu"] <= 0.55 and not best["above_published_mfu"]


def test_a_flash_run_on_ampere_is_covered_by_the_public_ampere_runs():
    run = dict(gpus=8, global_batch_size=128, seq_len=4096)  # FlashAttention, BF16 by default
    band, why = engine.training_band(engine.TrainRun("Llama-3.1-8B", "A100", **run))
    # megatron was fitted on unfused attention: the 61 llm-foundry A100 runs (FlashAttention)
    # measure that difference, 13.8 %, under its own 21.9 %: the band stays 21.9 %
    assert band.pct == pytest.approx(MEGATRON.residuals["loo_table_mape_pct"])
    (covered,) = why
    assert covered.code == "train_off_attention_covered"
    assert covered.fields["mape"] == "13.8 %" and covered.fields["n"] == "61"
    assert covered.fields["file"] == "llm-foundry-a100-bf16-training.csv"
    # the Hopper fit on Ampere: measured on the same runs, 29.5 %, and megatron suggested
    on = engine.TrainRun("Llama-3.1-8B", "A100", profile="llm-foundry-h100", **run)
    band, why = engine.training_band(on)
    assert band.pct == pytest.approx(29.5, abs=0.1)
    assert [w.code for w in why] == [
        "train_off_generation_measured",
        "train_profile_for_generation",
    ]
