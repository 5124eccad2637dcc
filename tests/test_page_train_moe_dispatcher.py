"""AppTest tests of /train's MoE dispatcher override (`moe_dispatcher`, a word among the profile's
overrides): a link's value is offered, used and kept; a bad value is refused beside the field."""

from __future__ import annotations

import re
from pathlib import Path

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


def test_docs_deepseek_v3_link_is_the_engines_case():
    # docs/model.md gives DeepSeek-V3's training case as one /train link; the page shows the
    # engine's numbers for it (it fits: 62.9 GB of 72; tests/test_train_activation_storage.py)
    docs = (Path(__file__).resolve().parent.parent / "docs" / "model.md").read_text()
    link = re.search(r"`/train\?(model=DeepSeek-V3&[^`]+)`", docs).group(1)
    query = dict(pair.split("=", 1) for pair in link.split("&"))
    at = open_page(query)
    kw = dict(gpus=2048, pp=16, ep=64, zero=1, global_batch_size=15360, seq_len=4096, tp=1)
    kw |= dict(precision="fp8", fp8_recipe="blockwise", recompute="selective", micro_batch_size=1)
    kw |= dict(recompute_modules=("core_attn", "layernorm", "mla_up_proj", "moe_act"))
    kw |= dict(pp_schedule="dualpipe", expert_overlap=1.0, moe_dispatcher="flex", dropout=0.0)
    kw |= dict(optimizer_moment_bytes=2.0, moe_act_input_bytes=1.0, attention_output_bytes=1.5)
    r = engine.train("DeepSeek-V3", "H800", **kw)
    assert r["fits_in_memory"]
    assert cards(at)["Memory per GPU"] == fmt(r["memory_per_gpu_bytes"], "B")
    assert cards(at)["Step time"] == fmt(r["step_time_s"], "s")
