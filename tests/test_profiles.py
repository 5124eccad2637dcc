"""Profiles: the tutorial file is the tutorial's defaults; TOML round trips; bad files refused."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.assumptions import ASSUMPTION_NAMES, DEFAULTS, Assumptions
from engine.catalog.profiles import (
    DEFAULT_PROFILE,
    PROFILE_DIR,
    TUTORIAL_PROFILE,
    Profile,
    builtin_profiles,
    check_profile_name,
    get_profile,
    profile_from_toml,
    profile_from_values,
    profile_to_toml,
)

ROOT = Path(__file__).resolve().parent.parent


def test_tutorial_profile_is_exactly_the_defaults():
    # The published tutorial figures are computed with DEFAULTS; the file must not drift
    # (10 us must stay exactly 10e-6 s, not 9.999999999999999e-06).
    assert get_profile("tutorial").assumptions == DEFAULTS
    assert TUTORIAL_PROFILE == "tutorial"
    # no name is the serving default, the current TensorRT-LLM fit, not the tutorial's
    assert DEFAULT_PROFILE == "trtllm-1.0"
    assert get_profile(None).name == DEFAULT_PROFILE
    assert get_profile(None).assumptions != DEFAULTS


def test_builtin_profiles_are_listed_tutorial_first():
    names = list(builtin_profiles())
    assert names[0] == "tutorial"
    assert {p.stem for p in PROFILE_DIR.glob("*.toml")} == set(names)


@pytest.mark.parametrize("name", sorted(p.stem for p in PROFILE_DIR.glob("*.toml")))
def test_every_shipped_profile_round_trips(name):
    profile = get_profile(name)
    again = profile_from_toml(profile_to_toml(profile), f"{name}.toml", origin="built-in")
    assert again == profile


@pytest.mark.parametrize("name", sorted(p.stem for p in PROFILE_DIR.glob("*.toml")))
def test_shipped_profiles_set_nothing_per_model_or_chip(name):
    # Only the global assumption names may appear (no model or accelerator ids as keys).
    text = (PROFILE_DIR / f"{name}.toml").read_text()
    assert "[assumptions]" in text
    # the registry's global assumptions (engine/assumptions.py): no id can be a key there
    assert set(get_profile(name).values()) <= set(ASSUMPTION_NAMES) - {"flop_convention"}


def test_values_are_in_user_units():
    a = Assumptions(efficiency=0.6, layer_overhead_s=25e-6, link_latency_s=2e-6)
    values = Profile("team", a).values()
    # 25e-6 s = 25 us; 2e-6 s = 2 us; unset (None) fields are left out
    assert values["layer_overhead_us"] == pytest.approx(25.0)
    assert values["link_latency_us"] == pytest.approx(2.0)
    assert "attention_efficiency" not in values and "dispatch_overhead_ms" not in values


def test_unknown_profile_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown profile 'nope'.*tutorial"):
        get_profile("nope")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("[assumptions]\nefficiency = 1.5\n", "efficiency must be a number from 0.01 to 1"),
        ("[assumptions]\nhbm_per_chip = 1.0\n", "unknown assumption 'hbm_per_chip'"),
        ("[assumptions]\nlayer_overhead_us = -3.0\n", "layer_overhead"),
        ("[assumptions]\nefficiency = 'fast'\n", "efficiency must be a number"),
        ("name = 'a b'\n", "profile name"),
        ("not toml ===", "not a TOML file"),
    ],
)
def test_bad_profile_files_name_the_problem(text, match):
    with pytest.raises(ValueError, match=match):
        profile_from_toml(text, "team.toml")


def test_custom_profile_travels_in_a_link_as_its_values():
    p = profile_from_values("my-team", {"efficiency": 0.7, "layer_overhead_us": 12.5})
    params = p.link_params()
    assert params == {
        "profile": "my-team",
        "efficiency": "0.7",
        "layer_overhead_us": "12.5",
        "activation_fraction": "0.1",
        "bandwidth_efficiency": "1",
        "memory_reserve": "0.1",
        "link_efficiency": "1",
        "dequant_overhead": "0.375",  # the weight-only formats' cost, docs/model.md
        "kv_reuse": "1",
        "kv_bandwidth_efficiency": "1",
        "sequence_overhead_us": "0",
        "network_efficiency": "1",
        "expert_imbalance": "1.2",
        "grouped_gemm_tokens": "90",
        "kernel_curves": "none",  # words travel as they are
        "kernel_reference": "H100",
    }
    words = ("profile", "kernel_curves", "kernel_reference")
    values = {k: float(v) for k, v in params.items() if k not in words}
    values |= {k: params[k] for k in words[1:]}
    back = profile_from_values("my-team", values)
    assert back.assumptions == p.assumptions
    # a built-in profile travels by name only
    assert get_profile("tutorial").link_params() == {"profile": "tutorial"}


def test_profile_names_are_checked():
    assert check_profile_name(" My-Team ") == "my-team"
    with pytest.raises(ValueError, match="profile name"):
        check_profile_name("<script>")


def test_serve_resolves_a_profile_name_and_records_it():
    from engine.serving.serve import serve

    scenario = {"batch_size": 64, "input_tokens": 128, "output_tokens": 128, "precision": "fp8"}
    tutorial = serve("Llama-2-7B", "H100", profile="tutorial", **scenario)
    fitted = serve("Llama-2-7B", "H100", profile="trtllm", **scenario)
    assert tutorial["profile"] == "tutorial" and fitted["profile"] == "trtllm"
    # no profile named: the default's, recorded by its name, with its assumptions
    default = serve("Llama-2-7B", "H100", **scenario)
    assert default["profile"] == DEFAULT_PROFILE
    assert (
        default.assumptions
        == serve("Llama-2-7B", "H100", profile=DEFAULT_PROFILE, **scenario).assumptions
    )
    trtllm = get_profile("trtllm").values()
    assert fitted.assumptions["efficiency"] == pytest.approx(trtllm["efficiency"])
    assert fitted.assumptions["layer_overhead_us"] == pytest.approx(trtllm["layer_overhead_us"])
    assert tutorial.assumptions["efficiency"] == 0.5
    with pytest.raises(ValueError, match=r"unknown profile 'zzz' \(known: tutorial, trtllm"):
        serve("Llama-2-7B", "H100", profile="zzz", **scenario)


fraction = st.floats(min_value=0.02, max_value=1.0)


@given(
    efficiency=fraction,
    attention=fraction,
    bandwidth=fraction,
    overhead_us=st.floats(min_value=0.0, max_value=500.0),
    latency_us=st.floats(min_value=0.0, max_value=100.0),
    reserve=st.floats(min_value=0.0, max_value=0.5),
)
@settings(max_examples=60, deadline=None)
def test_any_valid_profile_round_trips_through_toml(
    efficiency, attention, bandwidth, overhead_us, latency_us, reserve
):
    values = {
        "efficiency": efficiency,
        "attention_efficiency": attention,
        "bandwidth_efficiency": bandwidth,
        "layer_overhead_us": overhead_us,
        "link_latency_us": latency_us,
        "memory_reserve": reserve,
    }
    p = profile_from_values("prop", values)
    again = profile_from_toml(profile_to_toml(p), "prop.toml", origin="link")
    assert again.assumptions == p.assumptions
    for name, value in values.items():
        assert again.values()[name] == pytest.approx(value, rel=1e-12, abs=1e-12)
