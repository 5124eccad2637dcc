"""AppTest tests of /train's selective recomputation modules (Megatron-Core's
--recompute-modules): the link's `recompute_modules` reaches the search, the configuration's
text names them, the memory is the engine's, and a bad name is refused beside the field."""

from __future__ import annotations

import engine
from tests.test_page_train import cards, charts, open_page, text, url
from ui.words.format import fmt

# DeepSeek-V3 as its report trained it (PP 16, EP 64 on 2,048 H800, fp8, ZeRO-1)
LINK = {"model": "DeepSeek-V3", "hardware": "H800", "gpus": "2048", "precision": "fp8"}
LINK |= {"global_batch_size": "15360", "seq_len": "4096", "tp": "1", "pp": "16", "cp": "1"}
LINK |= {"vp": "1", "ep": "64", "micro_batch_size": "1", "zero": "1", "gpus_curve": "2048"}
LINK |= {"recompute": "selective", "recompute_modules": "core_attn,layernorm,mla_up_proj,moe_act"}
RUN = dict(gpus=2048, global_batch_size=15360, seq_len=4096, precision="fp8")
LAYOUT = dict(pp=16, ep=64, zero=1, recompute="selective")


def test_the_links_modules_reach_the_search_and_are_named():
    at = open_page(LINK)
    modules = ("core_attn", "moe_act", "layernorm", "mla_up_proj")
    r = engine.train("DeepSeek-V3", "H800", **RUN, **LAYOUT, recompute_modules=modules)
    assert r["fits_in_memory"]  # 67.9 GB against 72 usable (fp8 inputs kept at 1 byte)
    shown = text(at.success)
    assert "selective recomputation (core_attn, moe_act, layernorm, mla_up_proj)" in shown
    assert cards(at)["Step time"] == fmt(r["step_time_s"], "s")
    memory = charts(at)["train_memory"]
    shown = sum(t["x"][0] for t in memory["data"] if t["type"] == "bar" and t["name"] != "usable")
    assert abs(shown - r["memory_per_gpu_bytes"] / 1e9) < 1e-6 * shown
    assert set(url(at, "recompute_modules").split(",")) == set(modules)
    plain = engine.train("DeepSeek-V3", "H800", **RUN, **LAYOUT)  # core_attn only: 110.9 GB
    assert not plain["fits_in_memory"]
    assert plain["memory_per_gpu_bytes"] > 1.5 * r["memory_per_gpu_bytes"]


def test_a_bad_module_is_named_and_the_default_used():
    at = open_page(LINK | {"recompute_modules": "attention,moe"})
    assert "ignored 'recompute_modules'" in text(at.warning)
    assert "(core_attn)" in text(at.error)  # the default, said in the configuration's text
