"""The scenario pages' profile picker, its pure parts: which profile a link names, the values it
seeds, what counts as edited, and what the link and captions say (ui.core.profiles)."""

import re

import pytest

import engine
from ui.core import profiles as pk
from ui.links import assumptions

TRT = engine.get_profile("trtllm")
TUTORIAL = engine.get_profile("tutorial")


def test_tutorial_seeds_the_tutorial_defaults():
    # data/profiles/tutorial.toml: efficiency 0.5, 10 us per layer, activations 0.1; dispatch
    # unset (the accelerator's catalogued figure) -> the published figures keep holding
    assert pk.seeds(TUTORIAL) == {
        "efficiency": 0.5,
        "layer_overhead_us": 10.0,
        "dispatch_overhead_ms": None,
        "activation_fraction": 0.1,
    }
    assert pk.edits(TUTORIAL, pk.seeds(TUTORIAL)) == {}


def test_trtllm_seeds_its_fitted_values():
    # data/profiles/trtllm-1.0.toml (trtllm): efficiency 0.866565, layer_overhead_us 0.00206525
    s = pk.seeds(TRT)
    assert s["efficiency"] == pytest.approx(0.866565)
    assert s["layer_overhead_us"] == pytest.approx(0.00206525)
    assert s["dispatch_overhead_ms"] is None and s["activation_fraction"] == pytest.approx(0.1)


def test_an_edit_is_named_with_the_profiles_value():
    chosen = pk.seeds(TRT) | {"efficiency": 0.45}
    changed = pk.edits(TRT, chosen)
    assert list(changed) == ["efficiency"]
    assert pk.label(TRT, changed) == "trtllm, edited" and pk.label(TRT, {}) == "trtllm"
    assert pk.describe(TRT, changed) == (
        "Profile trtllm, edited: efficiency 0.45 (profile: 0.867)."
    )
    assert pk.describe(TRT, {}) == "Profile trtllm: its assumptions, unedited."
    # a dispatch figure typed in where the profile leaves the accelerator's
    changed = pk.edits(TUTORIAL, pk.seeds(TUTORIAL) | {"dispatch_overhead_ms": 0.02})
    assert pk.describe(TUTORIAL, changed).endswith(
        "dispatch_overhead_ms 0.02 (profile: the accelerator's figure)."
    )


def test_a_built_in_name_in_the_link_is_that_profile():
    # the link's assumption values are the page's (edits), not a new profile
    p, warnings = pk.link_profile({"profile": ["TRTLLM"], "efficiency": ["0.3"]})
    assert p is TRT and warnings == []
    # no name: the page's default, the serving default unless the page says (Solve: tutorial)
    assert pk.link_profile({})[0] is engine.get_profile(engine.DEFAULT_PROFILE)
    assert pk.link_profile({}, pk.TUTORIAL)[0] is TUTORIAL


def test_a_custom_profile_travels_as_its_values():
    query = {"profile": ["team"], "efficiency": ["0.4"], "bandwidth_efficiency": ["0.8"]}
    p, warnings = pk.link_profile(query)
    assert (p.name, p.origin, warnings) == ("team", "link", [])
    assert p.values()["efficiency"] == pytest.approx(0.4)
    assert p.values()["bandwidth_efficiency"] == pytest.approx(0.8)
    # written back: the name and the values the page's widgets do not carry (the defaults
    # it did not set included: memory_reserve 0.1, link_efficiency 1.0, kv_reuse 1.0,
    # kv_bandwidth_efficiency 1.0, sequence_overhead_us 0, dequant_overhead 0.375,
    # network_efficiency 1, expert_imbalance 1.2, grouped_gemm_tokens 90, docs/model.md)
    assert pk.link_values(p) == {
        "profile": "team",
        "bandwidth_efficiency": 0.8,
        "memory_reserve": 0.1,
        "link_efficiency": 1.0,
        "dequant_overhead": 0.375,
        "kv_reuse": 1.0,
        "kv_bandwidth_efficiency": 1.0,
        "sequence_overhead_us": 0.0,
        "network_efficiency": 1.0,  # the serving model's network and MoE assumptions too
        "expert_imbalance": 1.2,
        "grouped_gemm_tokens": 90.0,
        "kernel_curves": "none",  # the kernel transfer's words
        "kernel_reference": "H100",
    }
    assert pk.link_values(p, skip=["memory_reserve"]).keys() == {
        "profile",
        "bandwidth_efficiency",
        "link_efficiency",
        "dequant_overhead",
        "kv_reuse",
        "kv_bandwidth_efficiency",
        "sequence_overhead_us",
        "network_efficiency",
        "expert_imbalance",
        "grouped_gemm_tokens",
        "kernel_curves",
        "kernel_reference",
    }
    assert pk.link_values(TRT) == {"profile": "trtllm"}


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ({"profile": ["nope"]}, "unknown profile 'nope'"),
        ({"profile": ["team"], "efficiency": ["7"]}, "custom profile"),
        ({"profile": ["team"], "efficiency": ["nan"]}, "finite"),
        ({"profile": ["<b>x</b>"], "efficiency": ["0.4"]}, "profile name"),
    ],
)
def test_a_bad_profile_falls_back_to_the_pages_default_with_a_warning(query, fragment):
    # the whole-model pages' default is tutorial; the warning names what is used instead
    p, warnings = pk.link_profile(query, pk.TUTORIAL)
    assert p is TUTORIAL and len(warnings) == 1 and fragment in warnings[0]
    assert warnings[0].endswith("; tutorial used")
    # the serving pages fall back to theirs
    p, warnings = pk.link_profile(query)
    assert p.name == engine.DEFAULT_PROFILE and warnings[0].endswith(f"; {p.name} used")


def test_the_profile_parameter_accepts_built_ins_and_the_custom_one():
    custom = pk.link_profile({"profile": ["team"], "efficiency": ["0.4"]})[0]
    read = pk.params(custom)[0].read
    assert read("trtllm") == "trtllm" and read(" Team ") == "team"
    with pytest.raises(
        ValueError,
        match=re.escape(
            "known: tutorial, trtllm-0.6.1, trtllm-1.0, vllm-mi300x, trtllm, vllm, team"
        ),
    ):
        read("other")
    names = [p.name for p in pk.params(None)]
    band = {"error_band_pct", *pk.GROUND}  # a custom profile's band and ground
    words = set(assumptions.WORDS) & set(engine.PROFILE_KEYS)  # the kernel transfer's words
    assert names[0] == "profile" and set(names[1:]) == set(pk.RANGES) | words | band
    every = set(pk.RANGES) | words | set(pk.WIDGETS)
    assert every == set(engine.PROFILE_KEYS)  # every key has a home


def test_the_llm_views_memory_reserve_is_a_profile_value_too():
    # trtllm-1.0.toml: memory_reserve 0.05; the LLM view's widget at 0.1 is an edit
    s = pk.seeds(TRT, ["memory_reserve"])
    assert s["memory_reserve"] == pytest.approx(0.05)
    assert pk.edits(TRT, s) == {}
    assert list(pk.edits(TRT, s | {"memory_reserve": 0.1})) == ["memory_reserve"]
