"""The operators of a training micro-batch (engine.training_operators): the training kernel's
own, so the table adds up to the step's compute, with the backward pass 2× a GEMM's forward and
attention_backward_factor× attention's."""

from __future__ import annotations

import pytest

import engine

LLAMA = {"model": "Llama-3.1-70B", "hardware": "H100", "seq_len": 8192}


def _per_micro_batch(r) -> float:
    return r["compute_s"] / r["micro_batches"]


def test_the_table_sums_to_the_compute_of_a_micro_batch():
    ops = engine.training_operators(**LLAMA, tp=8, micro_batch_size=1)
    r = engine.train(**LLAMA, gpus=8, tp=8, global_batch_size=16)
    assert ops["total_time_ms"].sum() * 1e-3 == pytest.approx(_per_micro_batch(r), rel=1e-12)
    assert set(ops["phase"]) == {"forward", "backward"}
    assert {"qkv_projection", "attention", "mlp", "lm_head", "embedding"} <= set(ops["name"])


def test_unfused_gpt_and_moe_also_add_up():
    gpt = engine.gpt_architecture(layers=24, hidden=2304, heads=24)
    kw = {"seq_len": 2048, "precision": "fp16", "attention": "unfused"}
    ops = engine.training_operators(gpt, "A100", micro_batch_size=4, **kw)
    r = engine.train(gpt, "A100", gpus=1, micro_batch_size=4, global_batch_size=8, **kw)
    assert ops["total_time_ms"].sum() * 1e-3 == pytest.approx(_per_micro_batch(r), rel=1e-12)
    moe = engine.training_operators("Mixtral-8x7B", "H100", tp=2, ep=4, seq_len=4096)
    r = engine.train("Mixtral-8x7B", "H100", gpus=8, tp=2, ep=4, global_batch_size=8, seq_len=4096)
    assert moe["total_time_ms"].sum() * 1e-3 == pytest.approx(_per_micro_batch(r), rel=1e-12)
    assert "routed_experts" in set(moe["name"])


def test_the_backward_pass_is_two_gemms_and_flash_attentions_factor():
    ops = engine.training_operators(**LLAMA, tp=4).set_index(["phase", "name"])
    fwd, bwd = ops.loc["forward"], ops.loc["backward"]
    for name in ("qkv_projection", "mlp", "lm_head"):
        assert bwd.loc[name, "flops"] == pytest.approx(2 * fwd.loc[name, "flops"])
        assert bwd.loc[name, "time_ms"] == pytest.approx(2 * fwd.loc[name, "time_ms"])
    factor = engine.get_training_profile("megatron").assumptions.attention_backward_factor
    attention = fwd.loc["attention", "time_ms"]
    assert bwd.loc["attention", "time_ms"] == pytest.approx(factor * attention)
    # the intensity of a pass is its operator's: the backward GEMMs are the forward's shape
    assert bwd.loc["mlp", "arithmetic_intensity_flop_per_byte"] == pytest.approx(
        fwd.loc["mlp", "arithmetic_intensity_flop_per_byte"]
    )


def test_rows_sit_on_their_roofline_and_carry_its_roofs():
    ops = engine.training_operators(**LLAMA, tp=8, precision="fp8")
    roofline = ops[["t_compute_ms", "t_memory_ms"]].max(axis=1)
    assert ops["time_ms"].to_numpy() == pytest.approx(roofline.to_numpy())
    gemm = ops[ops["op_class"] == "gemm"].iloc[0]
    assert gemm["achievable_flop_per_s"] < gemm["peak_flop_per_s"]
    rate = gemm["achievable_flop_per_s"]
    assert gemm["t_compute_ms"] == pytest.approx(gemm["flops"] / rate * 1e3)


def test_a_split_the_model_refuses_is_named():
    with pytest.raises(ValueError, match="tp must divide the attention heads"):
        engine.training_operators(**LLAMA, tp=3)
    with pytest.raises(ValueError, match="ep > 1 needs a mixture of experts"):
        engine.training_operators(**LLAMA, ep=2)
    with pytest.raises(ValueError, match="training precision"):
        engine.training_operators(**LLAMA, precision="int8")


def test_training_profiles_are_listed_and_error_bands_exported():
    assert engine.training_profile_names() == ("megatron", "llm-foundry-h100")
    assert engine.training_profile_names()[0] not in engine.profile_names()
    band = engine.error_band(engine.get_profile("trtllm"))  # trtllm-1.0.toml: 23.37 % LOAO
    assert isinstance(band, engine.Band) and band.pct == pytest.approx(21.7, abs=0.05)
    arch = engine.default_catalog().models["Mixtral-8x7B"].arch
    assert engine.off_ground(
        profile=engine.get_profile("trtllm"), arch=arch, hardware="H100", precision="fp16"
    )
