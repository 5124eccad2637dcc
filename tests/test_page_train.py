"""AppTest tests of the training planner (pages/train.py), opened from the entry file as a browser
routes it. Every expected number comes from the engine (`engine.train_search`, `engine.train`,
`engine.training_operators`, the training profile's residuals), formatted as the page does."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import ROOT, chart_spec
from ui.train import run as tr
from ui.words.format import fmt, pct

PAGE = "pages/train.py"
SEARCH = {"tp": [1, 2, 4, 8], "pp": [1, 2, 4, 8, 16], "cp": [1], "vp": [1, 2], "ep": [1]}
SEARCH |= {
    "micro_batch_size": [1, 2, 4],
    "zero": [0, 1],
    "recompute": ["none", "selective", "full"],
}
DEFAULT = {"gpus": 64, "global_batch_size": 512, "seq_len": 8192}
NO_PARALLELISM = {"model": "Llama-3.1-70B", "gpus": "8", "tp": "1", "pp": "1", "cp": "1"}
NO_PARALLELISM |= {"vp": "1", "zero": "0", "recompute": "none"}
# Megatron-LM's GPT-3 175B row of Table 1 (96 layers, h 12,288, 96 heads) on 1,536 A100s
GPT3 = {"model": "gpt", "gpt_shape": "96,12288,96,51200", "hardware": "A100", "gpus": "1536"}
GPT3 |= {"global_batch_size": "1536", "seq_len": "2048", "precision": "fp16", "tp": "8"}
GPT3 |= {"pp": "12", "cp": "1", "vp": "1", "ep": "1", "micro_batch_size": "1", "zero": "0"}
GPT3 |= {"recompute": "full", "attention": "unfused", "gpus_curve": "768,1536"}


def open_page(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.switch_page(PAGE)
    at.query_params.update(query or {})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def text(elements) -> str:
    return " ".join(str(e.value) for e in elements).replace("\\", "")


def cards(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def charts(at: AppTest) -> dict[str, dict]:
    return {c.proto.id.split("-")[-1]: chart_spec(c) for c in at.get("plotly_chart")}


def frame_with(at: AppTest, column: str):
    """The first table on the page with `column` (AppTest does not keep a table's key)."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def url(at: AppTest, key: str) -> str:
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def test_defaults_rank_the_engines_configurations_and_detail_the_best():
    at = open_page()
    df = engine.train_search("Llama-3.1-70B", "H100", **DEFAULT, **SEARCH)
    best = df.iloc[0]
    r = engine.train("Llama-3.1-70B", "H100", **DEFAULT, **tr.config_of(best)).as_dict()
    got = cards(at)
    assert got["Tokens/s"] == fmt(r["tokens_per_s"]) and got["MFU"] == pct(r["mfu"])
    assert got["Step time"] == fmt(r["step_time_s"], "s")
    assert got["Memory per GPU"] == fmt(r["memory_per_gpu_bytes"], "B")
    assert got["Cost to the token budget (USD)"] == fmt(r["cost_to_train_usd"])
    assert f"ranked 1 of the {len(df):,} that fit" in text(at.success)
    table = frame_with(at, "Days to budget")
    assert len(table) == min(len(df), 50) and table["Tokens/s"].iloc[0] == fmt(r["tokens_per_s"])
    errors = engine.get_training_profile("megatron").residuals
    shown = text(at.caption)
    assert f"leave one run out {pct(errors['loo_row_mape_pct'] / 100)}" in shown
    assert f"in sample {pct(errors['mape_pct'] / 100)}" in shown
    figs = charts(at)
    assert {"train_step", "train_memory", "train_roofline", "train_scaling_mfu"} <= set(figs)
    step = sum(t["x"][0] for t in figs["train_step"]["data"] if t["type"] == "bar")
    assert abs(step - r["step_time_s"]) < 1e-9 * r["step_time_s"]
    names = {n for t in figs["train_roofline"]["data"] for n in t.get("text", [])}
    assert {"qkv_projection", "attention", "mlp", "lm_head"} <= names
    assert url(at, "tp") == "1,2,4,8" and url(at, "gpus_curve") == "8,16,32,64,128,256,512"
    for key in ("train_csv", "train_scaling_csv", "train_ops_csv"):
        assert at.download_button(key=key).label.startswith("Download")


def test_the_scaling_curves_are_the_best_configuration_per_gpu_count():
    at = open_page({"gpus_curve": "16,32,64"})
    df = engine.train_search(
        "Llama-3.1-70B", "H100", gpus=[16, 32, 64], **SEARCH, global_batch_size=512, seq_len=8192
    )
    best = df.groupby("gpus").head(1).sort_values("gpus")
    line = next(t for t in charts(at)["train_scaling_tokens_per_s"]["data"] if t["mode"] != "lines")
    assert line["x"] == [16, 32, 64] and line["y"] == best["tokens_per_s"].tolist()


def test_70b_without_model_parallelism_on_8_gpus_does_not_fit_and_says_why():
    at = open_page(NO_PARALLELISM)
    r = engine.train("Llama-3.1-70B", "H100", gpus=8, global_batch_size=512, seq_len=8192)
    assert not r["fits_in_memory"]
    error = text(at.error)
    assert error.startswith("No configuration fits on 8 GPUs. The closest, tp 1 · pp 1")
    assert "optimizer state" in error and "846.6 GB = 12 B × 70.6 B parameters" in error
    assert "77.3 GB usable" in error and "Add GPUs, model parallelism" in error
    figs = charts(at)
    assert "train_step" not in figs and "train_roofline" not in figs  # nothing as if it fitted
    assert "does NOT fit" in figs["train_memory"]["layout"]["title"]["text"]
    usable = next(t for t in figs["train_memory"]["data"] if t["name"].startswith("usable"))
    assert usable["x"][0] == r["usable_memory_bytes"] / 1e9
    assert not at.metric
    reasons = frame_with(at, "Configurations")
    assert "does not fit in memory" in set(reasons["Why rejected"])


def test_a_gpt_shape_link_reproduces_megatrons_gpt3_row():
    at = open_page(GPT3)
    for name, value in GPT3.items():
        assert url(at, name) == value, name
    gpt = engine.gpt_architecture(layers=96, hidden=12288, heads=96, seq_len=2048)
    r = engine.train(
        gpt,
        "A100",
        gpus=1536,
        tp=8,
        pp=12,
        global_batch_size=1536,
        seq_len=2048,
        precision="fp16",
        recompute="full",
        attention="unfused",
    )
    assert cards(at)["Model TFLOP/s per GPU"] == fmt(r["model_tflops_per_gpu"])
    assert "Training GPT (L 96, h 12,288)" in text(at.title)


def test_bad_link_values_are_named_and_defaults_used():
    at = open_page({"gpt_shape": "96,12288,97", "tp": "0", "rank_by": "speed", "zero": "5"})
    warned = text(at.warning)
    for name in ("gpt_shape", "tp", "rank_by", "zero"):
        assert f"ignored '{name}'" in warned
    assert "heads 97 must divide hidden 12288" in warned
    assert url(at, "tp") == "1,2,4,8" and url(at, "rank_by") == "tokens_per_s"


def test_the_budget_refuses_a_search_too_large_and_says_how_to_narrow_it():
    at = open_page({"tp": "1..16", "pp": "1..16", "micro_batch_size": "1..16"})
    refusal = text(at.error)
    assert "more than this page's budget of 200,000" in refusal
    assert "Give fewer values of tp, pp" in refusal and "16 tp × 16 pp" in refusal
    assert not at.get("plotly_chart") and not at.metric


def test_rejected_configurations_cost_ranking_and_a_pick_further_down():
    at = open_page({"rejected": "on", "rank_by": "cost", "pick": "3", "price_per_gpu_hour": "2"})
    df = engine.train_search(
        "Llama-3.1-70B", "H100", **DEFAULT, **SEARCH, rank_by="cost", price_per_gpu_hour=2.0
    )
    r = engine.train(
        "Llama-3.1-70B", "H100", **DEFAULT, **tr.config_of(df.iloc[2]), price_per_gpu_hour=2.0
    ).as_dict()
    assert "ranked 3 of" in text(at.success)
    assert cards(at)["Cost to the token budget (USD)"] == fmt(r["cost_to_train_usd"])
    rejected = frame_with(at, "Why rejected")
    every = engine.train_search(
        "Llama-3.1-70B",
        "H100",
        **DEFAULT,
        **SEARCH,
        rank_by="cost",
        price_per_gpu_hour=2.0,
        include_rejected=True,
    )
    why = [str(r) for r in every["reason"].dropna()]  # the rules' English, in order
    assert rejected["Why rejected"].tolist() == why[:50]
    assert at.download_button(key="train_rejected_csv").label.startswith("Download")


def test_the_training_profiles_assumptions_are_overridden_from_the_page_and_its_link():
    # an MoE layout whose expert all-to-alls are hidden with expert_overlap 1 (DualPipe)
    layout = {"tp": "1", "pp": "1", "ep": "8", "zero": "1", "recompute": "full"}
    layout |= {"micro_batch_size": "1", "cp": "1", "vp": "1"}
    query = {"model": "Qwen3-30B-A3B", "gpus": "64", "global_batch_size": "64", "seq_len": "4096"}
    at = open_page(query | layout | {"expert_overlap": "1", "efficiency": "0.6"})
    run = {"gpus": 64, "global_batch_size": 64, "seq_len": 4096, "tp": 1, "ep": 8, "zero": 1}
    run |= {"recompute": "full"}  # the link's run, as engine.train takes it
    want = engine.train("Qwen3-30B-A3B", "H100", **run, expert_overlap=1.0, efficiency=0.6)
    assert cards(at)["Step time"] == fmt(want["step_time_s"], "s")
    assert url(at, "expert_overlap") == "1" and url(at, "efficiency") == "0.6"
    # a value out of range is named and the profile's figure used
    at = open_page(query | layout | {"expert_overlap": "2"})
    assert "ignored 'expert_overlap'" in text(at.warning)
    plain = engine.train("Qwen3-30B-A3B", "H100", **run)
    assert cards(at)["Step time"] == fmt(plain["step_time_s"], "s") != fmt(want["step_time_s"], "s")
