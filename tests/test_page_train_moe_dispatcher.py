"""AppTest tests of /train's MoE dispatcher override (`moe_dispatcher`, a word among the profile's
overrides): a link's value is offered, used and kept; a bad value is refused beside the field."""

from __future__ import annotations

import engine
from tests.test_page_train import cards, open_page, text, url
from ui.words.format import fmt

# Mixtral-8x7B on 64 H100, ep 8 over nodes of 8 GPUs (one layout, the search's only row)
LINK = {"model": "Mixtral-8x7B", "hardware": "H100", "gpus": "64", "global_batch_size": "512"}
LINK |= {"seq_len": "4096", "tp": "2", "pp": "1", "cp": "1", "vp": "1", "ep": "8"}
LINK |= {"micro_batch_size": "1", "zero": "1", "recompute": "selective", "gpus_curve": "64"}
RUN = dict(gpus=64, global_batch_size=512, seq_len=4096, tp=2, ep=8, zero=1, pp=1)
RUN |= dict(micro_batch_size=1, recompute="selective")


def test_a_links_dispatcher_is_used_and_kept():
    at = open_page(LINK | {"moe_dispatcher": "flex"})
    flex = engine.train("Mixtral-8x7B", "H100", moe_dispatcher="flex", **RUN)
    plain = engine.train("Mixtral-8x7B", "H100", **RUN)
    assert flex["comm_ep_s"] != plain["comm_ep_s"]  # ep 8 with tp 2 spans two nodes
    assert cards(at)["Step time"] == fmt(flex["step_time_s"], "s")
    assert url(at, "moe_dispatcher") == "flex"


def test_blank_is_the_profiles_and_a_bad_word_is_named():
    at = open_page(LINK)
    plain = engine.train("Mixtral-8x7B", "H100", **RUN)
    assert cards(at)["Step time"] == fmt(plain["step_time_s"], "s")
    assert "moe_dispatcher" not in at.query_params  # blank: the profile's, not written
    bad = open_page(LINK | {"moe_dispatcher": "nccl"})
    assert "ignored 'moe_dispatcher'" in text(bad.warning)
    assert cards(bad)["Step time"] == fmt(plain["step_time_s"], "s")
