"""AppTest tests of /train's context-parallel exchanges (`cp_comm_type`): a link's values become a
search dimension, the detail and the tables name the exchange, a bad value is refused beside the
field."""

from __future__ import annotations

import engine
from tests.test_page_train import cards, frame_with, open_page, text, url
from ui.words.format import fmt

# Llama-3.1-8B on 8 H100, cp 8 over one 131,072-token sequence a step (ZeRO 1, full recomputation)
LINK = {"model": "Llama-3.1-8B", "hardware": "H100", "gpus": "8", "global_batch_size": "8"}
LINK |= {"seq_len": "131072", "tp": "1", "pp": "1", "cp": "8", "vp": "1", "ep": "1"}
LINK |= {"micro_batch_size": "1", "zero": "1", "recompute": "full", "gpus_curve": "8"}
RUN = dict(gpus=8, global_batch_size=8, seq_len=131072, cp=8, zero=1, recompute="full")


def test_the_links_exchanges_are_searched_and_named():
    at = open_page(LINK | {"cp_comm_type": "a2a,allgather"})
    a2a = engine.train("Llama-3.1-8B", "H100", cp_comm_type="a2a", **RUN)
    gather = engine.train("Llama-3.1-8B", "H100", cp_comm_type="allgather", **RUN)
    assert a2a["step_time_s"] < gather["step_time_s"]  # fewer bytes exposed than the gather
    assert cards(at)["Step time"] == fmt(a2a["step_time_s"], "s")
    assert "tp 1 · pp 1 · cp 8 (a2a) · vp 1" in text(at.success)
    assert "cp_comm_type a2a: its exchange is priced by the collectives' rules" in text(at.warning)
    assert url(at, "cp_comm_type") == "a2a,allgather"
    table = frame_with(at, "Days to budget")
    assert list(table["CP exchange"]) == ["a2a", "allgather"]


def test_the_default_is_the_ring_and_a_bad_value_is_named():
    at = open_page(LINK)
    ring = engine.train("Llama-3.1-8B", "H100", **RUN)
    assert cards(at)["Step time"] == fmt(ring["step_time_s"], "s")
    assert url(at, "cp_comm_type") == "p2p"
    assert "cp 8 ·" in text(at.success)  # the ring is not named
    bad = open_page(LINK | {"cp_comm_type": "ring"})
    assert "ignored 'cp_comm_type'" in text(bad.warning)
    assert cards(bad)["Step time"] == fmt(ring["step_time_s"], "s")
