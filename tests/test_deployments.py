"""Deployments on the comparison page: the text form, its checks against the catalogue and the
engine's parallelism rules, and the share-link round trip (ui.compare.deployments)."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from ui.compare.deployments import (
    MAX_DEPLOYMENTS,
    Deployment,
    check_deployment,
    notes,
    parse_deployment,
    read_deployments,
    write_deployments,
)
from ui.links.params import Param, ParamError, parse_params

CAT = engine.default_catalog()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8xH100/tp8", Deployment("H100", 8, 1)),
        ("4xMI300X/tp4", Deployment("MI300X", 4, 1)),
        ("2xH100/tp1/pp2", Deployment("H100", 1, 2)),
        ("8×h100/TP4/PP2", Deployment("H100", 4, 2)),  # 4 · 2 = 8
        (" 8 x H100 ", Deployment("H100", 8, 1)),  # a bare count is one TP group
        ("H100", Deployment("H100", 1, 1)),
        ("H100/pp4", Deployment("H100", 1, 4)),
        ("mi300x/tp=2", Deployment("MI300X", 2, 1)),
    ],
)
def test_parse(text, expected):
    assert parse_deployment(text, CAT) == expected


def test_count_is_tp_times_pp_and_the_fix_is_named():
    # 8 devices but tp 4 × pp 1 = 4: the message spells out the count that would be right
    with pytest.raises(ParamError, match=r"8 devices but tp 4 × pp 1 = 4 .*e\.g\. 4xH100/tp4"):
        parse_deployment("8xH100/tp4", CAT)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("8xNoSuchChip/tp8", "NoSuchChip"),
        ("8xH100/tp8/tp8", "tp given twice"),
        ("8xH100/ep8", "is not tp<N> or pp<N>"),
        ("2xH100/tp0/pp2", "tp must be 1 to 1,024"),
        ("H100/tp2048", "tp must be 1 to 1,024"),
        ("/tp8", "8xH100/tp8"),
    ],
)
def test_bad_text_is_refused_with_a_clear_message(text, message):
    with pytest.raises(ParamError, match=message):
        parse_deployment(text, CAT)


def test_canonical_text_and_label():
    d = Deployment("H100", 1, 2)
    assert d.devices == 2 and d.text() == "2xH100/tp1/pp2"
    assert d.label() == "2× H100 TP1 PP2"
    assert Deployment("MI300X", 4).label("AMD Instinct MI300X") == "4× AMD Instinct MI300X TP4"


def test_a_chip_without_a_link_runs_alone():
    # JetsonOrinNX: devices_per_node 1 in the catalogue -> engine.check_devices refuses n > 1
    assert CAT.hardware["JetsonOrinNX"].devices_per_node == 1
    check_deployment(Deployment("JetsonOrinNX"), CAT)
    with pytest.raises(ValueError, match=r"2× JetsonOrinNX TP2: .*no device-to-device link"):
        check_deployment(Deployment("JetsonOrinNX", 2), CAT)


def test_tp_must_split_the_models_heads():
    # Llama-3.1-8B: 32 heads, 8 KV heads; tp 3 divides neither
    with pytest.raises(ValueError, match=re.escape("tp 3 does not divide Llama-3.1-8B's 32")):
        check_deployment(Deployment("H100", 3), CAT, "Llama-3.1-8B")
    check_deployment(Deployment("H100", 8), CAT, "Llama-3.1-8B")
    # 32 layers: pp 64 is more stages than layers
    with pytest.raises(ValueError, match=re.escape("pp 64 exceeds Llama-3.1-8B's 32 layers")):
        check_deployment(Deployment("H100", 1, 64), CAT, "Llama-3.1-8B")


def test_tp_beyond_a_node_is_said():
    # H100: 8 devices per node; tp 16 spans ⌈16 / 8⌉ = 2 nodes
    assert notes(Deployment("H100", 16), CAT) == [
        "16× H100 TP16: tp 16 spans 2 nodes of 8 H100; the model runs its collectives on the "
        "scale-out network per device"
    ]
    assert notes(Deployment("H100", 8), CAT) == []


def test_link_reader_round_trip_and_limits():
    read = read_deployments(CAT, "Llama-3.1-8B")
    deps = read("8xH100/tp8, 4xmi300x/tp4,8xH100/tp8")  # duplicate dropped
    assert deps == [Deployment("H100", 8), Deployment("MI300X", 4)]
    assert write_deployments(deps) == "8xH100/tp8,4xMI300X/tp4"
    assert read(write_deployments(deps)) == deps
    with pytest.raises(ParamError, match=f"more than {MAX_DEPLOYMENTS}"):
        read(",".join(f"{2**k}xH100/tp{2**k}" for k in range(4)) * 3)
    with pytest.raises(ParamError, match="at least 1"):
        read(" , ")
    with pytest.raises(ParamError, match="tp 3 does not divide"):
        read("8xH100/tp8,3xH100/tp3")


def test_bad_links_become_warnings_not_errors():
    params = [Param("deployments", read_deployments(CAT), write_deployments)]
    values, warnings = parse_params({"deployments": ["8xH100/tp4"]}, params)
    assert values == {} and "8 devices but tp 4" in warnings[0]
    values, warnings = parse_params({"deployments": ["2xH100/tp1/pp2"]}, params)
    assert values == {"deployments": [Deployment("H100", 1, 2)]} and warnings == []


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_any_text_parses_or_is_refused_clearly(text):
    try:
        deps = read_deployments(CAT, "Llama-3.1-8B")(text)
    except ParamError as exc:
        assert str(exc)  # a message, never another exception type
        return
    assert 1 <= len(deps) <= MAX_DEPLOYMENTS
    assert all(d.hardware in CAT.hardware and d.devices == d.tp * d.pp for d in deps)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(sorted(CAT.hardware)),
    st.sampled_from([1, 2, 4, 8]),
    st.sampled_from([1, 2, 4]),
)
def test_canonical_text_reads_back(hw, tp, pp):
    d = Deployment(hw, tp, pp)
    assert parse_deployment(d.text(), CAT) == d
