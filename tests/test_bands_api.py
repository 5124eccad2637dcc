"""The error band, the calibrated ground and the fit warnings through the public API
(`engine.__all__`), as the pages call them (docs/model.md, "Error bands and calibrated ground")."""

from dataclasses import replace

import engine


def test_the_band_and_ground_are_public():
    for name in ("Band", "error_band", "off_ground", "fit_warnings", "MIN_ROWS_PER_PARAMETER"):
        assert name in engine.__all__ and hasattr(engine, name)


def test_trtllm_band_is_the_larger_cross_validated_mape():
    trtllm = engine.get_profile("trtllm")
    band = engine.error_band(trtllm)
    assert isinstance(band, engine.Band)
    # 13.64 % leaving one accelerator out beats 9.41 % leaving one model out (trtllm.toml)
    assert round(band.pct, 1) == 13.6
    assert band.as_dict()["error_band_pct"] == band.pct


def test_off_ground_names_the_accelerator_the_precision_and_the_family():
    trtllm = engine.get_profile("trtllm")
    cat = engine.default_catalog()
    assert engine.off_ground(trtllm, cat.models["Llama-2-7B"].arch, "A100", "fp16") == []
    why = engine.off_ground(trtllm, cat.models["Mixtral-8x7B"].arch, "MI300X", "bf16")
    assert [("MI300X" in w, "bf16" in w, "moe" in w) for w in why] == [
        (True, False, False),
        (False, True, False),
        (False, False, True),
    ]


def test_eight_rows_for_six_parameters_warn():
    team = replace(
        engine.get_profile("trtllm"),
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
    warnings = engine.fit_warnings(team)
    assert any("8 rows for 6 fitted parameters" in w for w in warnings)  # 8 < 5 × 6
    assert any("no row is sensitive to fp8_efficiency" in w for w in warnings)
    assert any("no leave-one-model-out error" in w for w in warnings)
    assert engine.fit_warnings(engine.get_profile("trtllm")) == []  # 57 rows ≥ 5 × 10
