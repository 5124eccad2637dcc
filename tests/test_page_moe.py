"""The MoE layout on the pages: `ep` and `attention_dp` in the links of /decode and /load, the
planner's rules for them (the engine's own refusals), and the words that name a layout."""

from __future__ import annotations

import itertools

import pytest
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import ROOT
from ui.decode import link as decode_link
from ui.load import link as load_link
from ui.plan import grid as pg
from ui.plan import link as plan_link
from ui.widgets.page_links import LOAD_NAMES, load_query
from ui.widgets.pickers import split_words

CAT = engine.default_catalog()
QWEN = CAT.models["Qwen3-235B-A22B"]  # 64 heads, 4 KV heads, 128 experts
MOE = {"model": "Qwen3-235B-A22B", "hardware": "H100", "tp": "8", "ep": "8"}
MOE |= {"attention_dp": "on", "precision": "fp8", "input_tokens": "1000", "output_tokens": "100"}


def open_page(page: str, query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def url(at: AppTest, key: str) -> str:
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def test_every_page_declares_ep_and_attention_dp_once():
    for link in (decode_link.declare(CAT), load_link.declare(CAT), plan_link.declare(CAT)):
        names = [p.name for p in link.params]
        assert names.count("ep") == 1 and names.count("attention_dp") == 1
    assert {"ep", "attention_dp"} <= set(LOAD_NAMES)
    # a switch travels as on or off, as /load reads it
    query = load_query({"tp": 8, "ep": 8, "attention_dp": True})
    assert (query["ep"], query["attention_dp"]) == ("8", "on")


def test_decode_page_reads_the_layout_from_its_link():
    at = open_page("pages/decode.py", MOE)
    api = engine.serve(
        "Qwen3-235B-A22B",
        "H100",
        tp=8,
        ep=8,
        attention_dp=True,
        precision="fp8",
        input_tokens=1000,
        output_tokens=100,
    ).as_dict()
    caption = " ".join(c.value for c in at.caption)
    assert "TP 8 × PP 1, EP 8, attention DP" in caption
    assert (url(at, "ep"), url(at, "attention_dp")) == ("8", "on")
    assert api["kv_cache_bytes_per_device"] == pytest.approx(api["kv_cache_bytes"] / 8)


def test_an_ep_the_model_refuses_falls_back_and_says_why():
    at = open_page("pages/decode.py", MOE | {"ep": "3", "tp": "6"})
    warned = " ".join(w.value for w in at.warning) + " ".join(e.value for e in at.error)
    assert "ep 3" in warned
    assert url(at, "ep") == "1" and url(at, "attention_dp") == "off"


def test_planner_layouts_follow_the_engines_refusals():
    tps, eps, switches = [1, 2, 3, 4, 8, 16], [1, 2, 3, 8], [False, True]
    tried, notes = pg.layouts(model_id=QWEN.id, arch=QWEN.arch, tps=tps, eps=eps, switches=switches)
    kept = {(t, e, on) for e, on, ts in tried for t in ts}
    for t, e, on in itertools.product(tps, eps, switches):
        try:
            engine.check_split(t, e, on)
            engine.check_parallel(name=QWEN.id, arch=QWEN.arch, tp=t, pp=1, ep=e, attention_dp=on)
        except ValueError:
            assert (t, e, on) not in kept
        else:
            assert (t, e, on) in kept
    assert any("EP 3" in n for n in notes)  # 3 does not divide the 128 experts
    assert any("attention DP with TP 1" in n for n in notes)


def test_a_layout_in_words():
    assert split_words(1, False) == ""
    assert split_words(8, False) == ", EP 8"
    assert split_words(8, True) == ", EP 8, attention DP"
