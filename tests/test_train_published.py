"""The training model against the Megatron-LM paper (Narayanan et al. 2021, Tables 1 and 2:
data/measurements/training/megatron-2104.04473-training.csv) with the shipped `megatron`
profile, and the profile itself: reproducible by one command, its in-sample and leave-one-out
errors."""

import csv

import pytest

import engine
from engine.catalog.arch import param_count
from engine.training.calibrate import FIT_PARAMS, calibrate
from engine.training.measurements import MEGATRON_FILE, predict, read_runs

RUNS = read_runs()
PROFILE = engine.get_training_profile("megatron")
PREDICTED = dict(
    zip(
        ((r.table, r.scheme, r.gpus, r.arch.hidden) for r in RUNS),
        predict(RUNS, PROFILE.assumptions),
        strict=True,
    )
)


def test_the_file_is_the_papers_tables_unchanged():
    assert len(RUNS) == 22 and MEGATRON_FILE.name == "megatron-2104.04473-training.csv"
    assert {r.table for r in RUNS} == {"Table 1", "Table 2"}


PRINTED = [float(row["params_b"]) for row in csv.DictReader(MEGATRON_FILE.open())]


@pytest.mark.parametrize(
    ("run", "printed"), list(zip(RUNS, PRINTED, strict=True)), ids=[f"row{r.row}" for r in RUNS]
)
def test_gpt_shapes_give_the_papers_parameter_counts(run, printed):
    # Eq. 2: P = 12·l·h²·(1 + 13/(12h) + (V + s)/(12·l·h)), plus the final LayerNorm; e.g.
    # 24 layers, h = 2304: 12·24·2304² = 1,528,823,808, biases and norms 24·13·2304 = 718,848,
    # embeddings (51200 + 2048)·2304 = 122,683,392, final norm 4,608: 1,652,230,656 -> 1.7
    # (billion, one decimal as printed; the trillion as 1008.0)
    assert round(param_count(run.arch) / 1e9, 1) == printed


def test_hardware_flops_are_the_papers_eq3():
    # Eq. 3, per iteration: 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)); per token (B·s = 1) for
    # GPT-3 175B (l = 96, h = 12288, s = 2048, V = 51200):
    # 96·96·12288²·(1 + 2048/73728 + 51200/18874368) = 1,433,998,983,168
    arch = engine.gpt_architecture(layers=96, hidden=12288, heads=96)
    r = engine.train(
        arch,
        "A100",
        gpus=1536,
        tp=8,
        pp=12,
        global_batch_size=1536,
        seq_len=2048,
        precision="fp16",
        recompute="full",
    )
    assert r["hardware_flops_per_token"] == 1_433_998_983_168
    assert r["hardware_tflops_per_gpu"] == pytest.approx(r["hfu"] * 312, rel=1e-12)


def test_table_1_weak_scaling_rise_is_reproduced():
    # Table 1: 1.7B on 32 GPUs 137 TFLOP/s per GPU, 1T on 3,072 GPUs 163 (a rise of 163/137 =
    # 1.19, as GEMMs grow and attention's share s/(6h) shrinks); each within 10 %, the rise too.
    small = PREDICTED[("Table 1", "PTD-P", 32, 2304)]
    large = PREDICTED[("Table 1", "PTD-P", 3072, 25600)]
    assert small == pytest.approx(137, rel=0.10)
    assert large == pytest.approx(163, rel=0.10)
    assert large / small == pytest.approx(163 / 137, rel=0.10) and large > small


def test_table_2_zero3_collapse_is_reproduced():
    # Table 2, 174.6B on 1,536 GPUs: ZeRO-3 without model parallelism 44 TFLOP/s per GPU (each
    # GPU gathers all 349 GB of 16-bit weights three times and reduce-scatters the gradients
    # once per micro-batch of 1 sequence, over 25 GB/s of InfiniBand), PTD-P 141.
    zero3 = PREDICTED[("Table 2", "ZeRO-3", 1536, 12288)]
    ptdp = PREDICTED[("Table 2", "PTD-P", 1536, 12288)]
    assert zero3 == pytest.approx(44, rel=0.10)
    assert ptdp == pytest.approx(141, rel=0.10)
    assert ptdp / zero3 > 2.5  # measured 141 / 44 = 3.2


def test_the_profile_reports_in_sample_and_leave_one_out_errors():
    res = PROFILE.residuals
    assert PROFILE.kind == "training" and PROFILE.rows == 22
    assert res["mape_pct"] < 5 and res["loo_row_mape_pct"] < 5  # 2.5 % and 3.0 % when fitted
    assert res["loo_row_mape_pct"] >= res["mape_pct"]  # leaving a row out is harder
    assert res["loo_table_mape_pct"] > res["loo_row_mape_pct"]  # and a whole table harder still
    assert len(PROFILE.worst) == 22 and "left out" in PROFILE.worst[0]


def test_the_fit_is_global_and_reproducible_by_its_command():
    """`python -m engine calibrate-train --name megatron --out ...` gives the shipped file."""
    assert "calibrate-train" in PROFILE.command
    fitted = calibrate(RUNS, name="megatron")
    assert set(FIT_PARAMS) <= set(fitted.values())
    for name, value in fitted.values().items():
        shipped = PROFILE.values()[name]  # a word (the MoE dispatcher) equals exactly
        assert value == (shipped if isinstance(shipped, str) else pytest.approx(shipped, rel=1e-5))
    for key, value in fitted.residuals.items():
        assert value == pytest.approx(PROFILE.residuals[key], rel=1e-4), key


def test_70b_without_model_parallelism_on_8_gpus_does_not_fit_and_says_why():
    # Llama-3.1-70B: 70.6 B parameters; without ZeRO each GPU holds 16 B per parameter
    # (1,129 GB) plus activations; the optimizer state alone is 12 B × 70.6 B = 846.6 GB, far
    # beyond an H100's 80 GiB less the 10 % reserve = 77.3 GB.
    r = engine.train("Llama-3.1-70B", "H100", gpus=8, global_batch_size=8, seq_len=4096)
    assert not r["fits_in_memory"] and r["largest_memory_term"] == "optimizer"
    assert r["optimizer_bytes_per_gpu"] == pytest.approx(12 * 70.55e9, rel=0.001)
    note = r.warnings[-1]
    assert note.code == "optimizer_state_does_not_fit" and note.fields["size"] == "846.6"
    note = str(note)
    assert note.startswith("does not fit") and "846.6 GB = 12 B × 70.6 B parameters" in note
    assert "77.3 GB usable" in note
    # ZeRO-3 over the 8 GPUs: 16 B × 70.6 B / 8 = 141 GB, still too much
    sharded = engine.train(
        "Llama-3.1-70B", "H100", gpus=8, global_batch_size=8, seq_len=4096, zero=3
    )
    assert not sharded["fits_in_memory"]
    assert sharded["memory_per_gpu_bytes"] > 16 * 70.55e9 / 8


def test_the_training_profile_round_trips_and_stays_apart_from_serving_ones():
    text = engine.profile_to_toml(PROFILE)
    back = engine.profile_from_toml(text, "megatron.toml")
    assert back.kind == "training" and back.values() == PROFILE.values()
    assert "megatron" not in engine.profile_names()  # the serving pages list serving profiles
    with pytest.raises(ValueError, match="serving profile"):
        engine.get_training_profile(engine.get_profile("trtllm"))


def test_many_assumptions_at_once_equal_each_alone_and_the_fit_is_unchanged():
    """predict_many (a fit's Jacobian points in one kernel call per group of runs) against one
    predict per point, to the last bit, on the paper's runs and llm-foundry's (A100, H100 bf16
    and fp8); and a fit using it gives the point-by-point fit exactly."""
    from dataclasses import replace

    import numpy as np

    from engine.training.calibrate import fit
    from engine.training.measurements import MEASUREMENTS_DIR, predict_many

    runs = list(RUNS)
    for name in ("a100-bf16", "h100-bf16", "h100-fp8"):
        runs += read_runs(MEASUREMENTS_DIR / f"llm-foundry-{name}-training.csv")
    a = PROFILE.assumptions
    many = [
        a,
        replace(a, efficiency=a.efficiency * 1.0001),
        replace(a, overlap_fraction=0.25, network_efficiency=0.5),
        replace(a, link_efficiency=0.45, layer_overhead_s=3e-5),
    ]
    together = predict_many(runs, many)
    assert together.shape == (4, len(runs)) and np.isfinite(together).all()
    for line, one in zip(together, many, strict=True):
        np.testing.assert_array_equal(line, predict(runs, one))
    assert not np.array_equal(together[0], together[2])
    assert fit(RUNS) == fit(RUNS, lambda rows, x: predict(rows, x))  # no workers: point by point
