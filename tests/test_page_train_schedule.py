"""AppTest tests of /train's pipeline schedules: a link's `pp_schedule` values become a search
dimension, the detail names DualPipe, the tables tell the schedules apart, and a bad value is
refused beside the field."""

from __future__ import annotations

import engine
from tests.test_page_train import cards, frame_with, open_page, text, url
from ui.words.format import fmt

# Llama-3.1-8B on 8 H100 in one layout (pp 4, dp 2, 8 micro-batches of one sequence)
LINK = {"model": "Llama-3.1-8B", "hardware": "H100", "gpus": "8", "global_batch_size": "16"}
LINK |= {"seq_len": "4096", "tp": "1", "pp": "4", "cp": "1", "vp": "1", "ep": "1"}
LINK |= {"micro_batch_size": "1", "zero": "1", "recompute": "none", "gpus_curve": "8"}
RUN = dict(gpus=8, global_batch_size=16, seq_len=4096, pp=4, zero=1)


def test_the_links_schedules_are_searched_and_dualpipe_named():
    at = open_page(LINK | {"pp_schedule": "1f1b,dualpipe"})
    dual = engine.train("Llama-3.1-8B", "H100", pp_schedule="dualpipe", **RUN)
    one = engine.train("Llama-3.1-8B", "H100", **RUN)
    assert dual["step_time_s"] < one["step_time_s"]  # a third of 1F1B's bubble
    assert cards(at)["Step time"] == fmt(dual["step_time_s"], "s")
    assert "ranked 1 of the 2 that fit" in text(at.success)
    assert "vp 1 · DualPipe · ep 1" in text(at.success)
    assert "pipeline schedule dualpipe: its bubble and memory follow" in text(at.warning)
    (bubble,) = [m for m in at.metric if m.label == "Bubble"]  # its own formula beside it
    assert bubble.help.startswith("DualPipe: (pp/2 − 1) · (F&B + B − 3W)")
    assert bubble.value == f"{100 * dual['bubble_fraction']:.1f}%"
    assert url(at, "pp_schedule") == "1f1b,dualpipe"
    table = frame_with(at, "Days to budget")
    assert list(table["Schedule"]) == ["dualpipe", "1f1b"]


def test_the_default_is_1f1b_and_a_bad_value_is_named():
    at = open_page(LINK)
    one = engine.train("Llama-3.1-8B", "H100", **RUN)
    assert cards(at)["Step time"] == fmt(one["step_time_s"], "s")
    assert url(at, "pp_schedule") == "1f1b"  # the default, recorded in the link
    assert "DualPipe" not in text(at.success)
    bad = open_page(LINK | {"pp_schedule": "gpipe"})
    assert "ignored 'pp_schedule'" in text(bad.warning)
    assert cards(bad)["Step time"] == fmt(one["step_time_s"], "s")


def test_dualpipev_is_named_in_the_detail():
    at = open_page(LINK | {"pp_schedule": "dualpipev,1f1b"})
    v = engine.train("Llama-3.1-8B", "H100", pp_schedule="dualpipev", **RUN)
    assert cards(at)["Step time"] == fmt(v["step_time_s"], "s")  # 0.94 s against 1.08 s
    assert "vp 1 · DualPipeV · ep 1" in text(at.success)
    assert url(at, "pp_schedule") == "dualpipev,1f1b"  # as given
