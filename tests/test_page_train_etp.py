"""AppTest tests of /train's `etp` field (the routed experts' tensor parallelism): blank is each
layout's tp, a link's values become a search dimension the detail names, a bad value is refused
beside the field."""

from __future__ import annotations

import engine
from tests.test_page_train import cards, frame_with, open_page, text, url
from ui.words.format import fmt

LINK = {"model": "Qwen3-30B-A3B", "hardware": "H100", "gpus": "64", "global_batch_size": "256"}
LINK |= {"seq_len": "4096", "tp": "2", "pp": "1", "cp": "1", "vp": "1", "ep": "8"}
LINK |= {"micro_batch_size": "1", "zero": "1", "recompute": "full", "gpus_curve": "64"}
RUN = dict(gpus=64, global_batch_size=256, seq_len=4096, micro_batch_size=1, zero=1)
RUN |= dict(tp=2, ep=8, recompute="full")


def test_the_links_etp_values_are_searched_and_the_best_named():
    at = open_page(LINK | {"etp": "1,2"})
    one = engine.train("Qwen3-30B-A3B", "H100", etp=1, **RUN)
    two = engine.train("Qwen3-30B-A3B", "H100", etp=2, **RUN)
    assert one["step_time_s"] < two["step_time_s"]  # the ep group in one node
    assert cards(at)["Step time"] == fmt(one["step_time_s"], "s")
    assert "ranked 1 of the 2 that fit" in text(at.success)
    assert "ep 8 · etp 1 · dp 32" in text(at.success)
    assert url(at, "etp") == "1,2"
    table = frame_with(at, "Days to budget")  # the two rows told apart by their etp
    assert list(table["etp"]) == [1, 2] and list(table["ep"]) == [8, 8]


def test_blank_is_each_layouts_tp_and_a_bad_value_is_named():
    at = open_page(LINK)
    plain = engine.train("Qwen3-30B-A3B", "H100", **RUN)
    assert cards(at)["Step time"] == fmt(plain["step_time_s"], "s")
    assert "etp" not in at.query_params  # blank: not in the link
    assert "etp" not in text(at.success)  # etp = tp is not said
    bad = open_page(LINK | {"etp": "0"})
    assert "ignored 'etp'" in text(bad.warning)
    assert cards(bad)["Step time"] == fmt(plain["step_time_s"], "s")
