"""The error band, the calibrated ground and the fit warnings through the public API
(`engine.__all__`), as the pages call them (docs/model.md, "Error bands and calibrated ground")."""

from dataclasses import replace

import pytest

import engine

BY_HAND = engine.Message("by_hand", "by hand")  # a basis set by hand


def test_the_band_and_ground_are_public():
    for name in ("Band", "error_band", "off_ground", "fit_warnings", "MIN_ROWS_PER_PARAMETER"):
        assert name in engine.__all__ and hasattr(engine, name)


def test_trtllm_band_is_the_larger_cross_validated_mape():
    trtllm = engine.get_profile("trtllm")  # = trtllm-1.0
    band = engine.error_band(trtllm)
    assert isinstance(band, engine.Band)
    # 23.37 % leaving one accelerator out beats 20.80 % leaving one model out (trtllm-1.0.toml)
    assert round(band.pct, 1) == 21.7
    # trtllm-0.6.1.toml: 21.18 % leaving an accelerator out beats 20.90 % leaving a model out
    assert round(engine.error_band(engine.get_profile("trtllm-0.6.1")).pct, 1) == 21.2
    assert band.as_dict()["error_band_pct"] == band.pct


def test_off_ground_names_the_accelerator_the_precision_and_the_family():
    trtllm = engine.get_profile("trtllm-0.6.1")  # fitted on A100, H100 and L40S; dense only
    cat = engine.default_catalog()
    assert (
        engine.off_ground(
            profile=trtllm, arch=cat.models["Llama-2-7B"].arch, hardware="A100", precision="fp16"
        )
        == []
    )
    why = engine.off_ground(
        profile=trtllm, arch=cat.models["Mixtral-8x7B"].arch, hardware="MI300X", precision="bf16"
    )
    assert [("MI300X" in str(w), "bf16" in str(w), "moe" in str(w)) for w in why] == [
        (True, False, False),
        (False, True, False),
        (False, False, True),
    ]


def test_eight_rows_for_six_parameters_warn():
    team = replace(
        engine.get_profile("trtllm-0.6.1"),
        name="team",
        rows=8,
        fitted=(
            "efficiency",
            "bandwidth_efficiency",
            "layer_overhead_us",
            "kv_reuse",
            "link_efficiency",
            "link_latency_us",
        ),
        not_identified=("fp8_efficiency",),
        residuals={"mape_pct": 0.9},
    )
    warnings = [str(w) for w in engine.fit_warnings(team)]  # Messages; str() is the English
    assert any("8 rows for 6 fitted parameters" in w for w in warnings)  # 8 < 5 × 6
    assert any("no row is sensitive to fp8_efficiency" in w for w in warnings)
    assert any("no leave-one-model-out error" in w for w in warnings)
    # 57 rows ≥ 5 × 10: no row-count warning; its rows have no mixture of experts, so the
    # expert terms are not identified (kept at the start profile's), and it says so
    said = [str(w) for w in engine.fit_warnings(engine.get_profile("trtllm-0.6.1"))]
    assert said == [
        "no row is sensitive to expert_efficiency, expert_imbalance: kept at the start "
        "profile's values"
    ]


def test_band_limits_by_hand():
    band = engine.Band(13.6, BY_HAND)
    # 1,000 tokens/s ± 13.6 %: 864 to 1,136
    low, high = band.limits(1000.0)
    assert (round(low, 9), round(high, 9)) == (864.0, 1136.0)
    lows, highs = band.limits([10.0, 20.0])
    assert lows.tolist() == [8.64, 17.28] and [round(h, 9) for h in highs] == [11.36, 22.72]
    assert engine.Band(None, BY_HAND).limits(5.0) is None


def test_a_fit_on_one_accelerator_names_the_one_error_it_could_measure():
    one = replace(
        engine.get_profile("trtllm"),
        name="team",
        residuals={"mape_pct": 5.4, "lomo_mape_pct": 10.0},
    )
    band = engine.error_band(one)
    assert band.pct == 10.0
    assert band.basis.code == "band_leave_one_model_out"
    basis = str(band.basis)
    assert "leave-one-model-out MAPE" in basis and "one accelerator only" in basis


def test_a_link_carries_a_fitted_profiles_band_and_ground():
    ground = {"hardware": ("A100",), "precisions": ("fp16",), "families": ("dense",)}
    team = engine.profile_from_values("team", {"efficiency": 0.6}, band_pct=10.0, ground=ground)
    band = engine.error_band(team)
    assert band.pct == 10.0 and "its share link carries" in str(band.basis)
    arch = engine.default_catalog().models["Llama-2-7B"].arch
    assert engine.off_ground(profile=team, arch=arch, hardware="A100", precision="fp16") == []
    (off,) = engine.off_ground(profile=team, arch=arch, hardware="H100", precision="fp16")
    assert off.code == "off_fitted_hardware" and off.fields == {
        "hardware": "H100",
        "fitted": "A100",
    }
    assert str(off) == "H100 was not among the fitted accelerators (A100)"
    # without them: a hand-set profile, not measured, and no ground to leave
    bare = engine.profile_from_values("team", {"efficiency": 0.6})
    assert (
        engine.error_band(bare).pct is None
        and engine.off_ground(profile=bare, arch=arch, hardware="H100", precision="fp8") == []
    )
    for bad in (-1.0, float("nan"), 1e6):
        with pytest.raises(ValueError, match="band_pct"):
            engine.profile_from_values("team", {}, band_pct=bad)
    with pytest.raises(ValueError, match="unknown kind of ground 'chips'"):
        engine.profile_from_values("team", {}, ground={"chips": ("A100",)})


def test_the_template_is_a_valid_measurements_file_with_every_column():
    text = engine.measurements_template()
    header = text.splitlines()[0].split(",")
    assert header == list(engine.MEASUREMENT_COLUMNS)  # every column the page describes
    rows = engine.parse_measurements(text.encode(), "template.csv")
    # one real shipped row per metric the shipped files hold (the vLLM and SGLang files hold TPOT)
    assert [m.metric for m in rows] == list(engine.MEASUREMENT_METRICS)
    assert all(m.source.startswith("https://") for m in rows)
    assert set(engine.MEASUREMENT_METRICS) == {
        "output_tokens_per_s_per_gpu",
        "ttft_ms",
        "tpot_ms",
        "e2e_latency_ms",
    }
    names = [p.name for p in engine.shipped_measurements()]
    assert names == [
        "sglang-v0.3.csv",
        "sglang-v0.5.csv",
        "trtllm-v0.6.1.csv",
        "trtllm-v1.0-perf-overview.csv",
        "vllm-mi300x-oci.csv",
        "vllm-v0.11.csv",
        "vllm-v0.19.csv",
        "vllm-v0.6.csv",
    ]


def test_the_training_fit_rows_reproduce_the_profiles_in_sample_error():
    df = engine.training_fit_rows("megatron")
    megatron = engine.get_training_profile("megatron")
    assert len(df) == megatron.rows == 22
    assert df["error_pct"].abs().mean() == pytest.approx(megatron.residuals["mape_pct"], rel=1e-6)
    # Table 2's ZeRO-3 collapse: 174.6B on 1,536 GPUs, measured 44 TFLOP/s per GPU
    zero3 = df[(df["scheme"] == "ZeRO-3") & (df["gpus"] == 1536)].iloc[0]
    assert zero3["measured"] == 44 and round(zero3["predicted"], 1) == 47.3
    assert set(df["unit"]) == {"TFLOP/s per GPU"}


def test_every_models_families_are_named_ids():
    # the band's off-ground reason names a model's families as ids (shown as written in 中文)
    from engine.accuracy.bands import FAMILY_IDS, families, prediction_band

    cat = engine.load_catalog(use_env=False)
    named = {f for m in cat.models.values() if m.arch is not None for f in families(m.arch)}
    assert named <= set(FAMILY_IDS) and {"dense", "moe", "mla", "sparse-attention"} <= named
    # a sparse-attention model is off the shipped profile's ground, which says so
    profile = engine.get_profile(engine.DEFAULT_PROFILE)
    v32 = cat.models["DeepSeek-V3.2-Exp"].arch
    said = prediction_band(profile, v32, hardware="H200", precision=["fp8"])
    assert "sparse-attention" in " ".join(str(m) for m in said.off)
