# ruff: noqa: RUF001 (Chinese text: full-width brackets are right there)
"""The serving page (/decode) and the planner (/plan) in Chinese, and the engine's messages on
every page: opened with `lang=zh` in the link, their title, subheaders and captions are in
Chinese and their headline numbers are the English run's (ui/words/i18n.py; numbers are
formatted the same in every language)."""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT
from ui.core.frame import section_key
from ui.plan import view as pv

CJK = re.compile(r"[\u3400-\u9fff]")


def run(page: str, query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(page)
    at.query_params.update(query)
    for section in pv.SECTIONS:  # /plan's expanders drawn only while open: opened
        at.session_state[section_key("plan", section)] = True
    at.run()
    assert not at.exception, at.exception
    return at


def both(page: str, query: dict[str, str]) -> tuple[AppTest, AppTest]:
    return run(page, query | {"lang": "zh"}), run(page, query)


def test_decode_in_chinese_shows_chinese_text_and_the_same_numbers():
    query = {"model": "Llama-3.1-8B", "hardware": "A100", "tutorial": "on"}
    zh, en = both("pages/decode.py", query)
    title = zh.title[0].value
    assert CJK.search(title) and "LLM serving" not in title and "推理服务" in title
    assert en.title[0].value.endswith(": LLM serving")
    assert zh.subheader and all(CJK.search(s.value) for s in zh.subheader)
    assert "Tutorial view" not in " ".join(s.value for s in zh.subheader)
    scenario = zh.caption[0].value
    assert CJK.search(scenario) and "serving model" not in scenario
    tutorial = next(c.value for c in zh.caption if c.value.startswith("engine.decode（"))
    assert CJK.search(tutorial)
    labels = [m.label for m in zh.metric]
    assert labels[0] == "显存放得下" and "端到端延迟" in labels and "TTFT（教程）" in labels
    numeric = [i for i, m in enumerate(en.metric) if re.search(r"\d", m.value)]
    assert len(numeric) >= 15 and len(zh.metric) == len(en.metric)
    assert [zh.metric[i].value for i in numeric] == [en.metric[i].value for i in numeric]
    assert zh.metric[0].value == "是" and en.metric[0].value == "yes"
    assert zh.success[0].value.startswith("放得下：每设备")
    assert en.success[0].value.startswith("Fits: ")


def test_plan_in_chinese_shows_chinese_text_and_the_same_numbers():
    query = {"model": "Llama-3.1-8B", "hardware": "H100,A100", "precisions": "fp16"}
    query |= {"tp": "1,2", "batches": "1,8,64"}
    zh, en = both("pages/plan.py", query)
    title = zh.title[0].value
    assert title.startswith("部署规划：") and "Planner" not in title
    assert en.title[0].value.startswith("Planner: ")
    heads = [e.label for e in zh.main.expander]
    under_load = "负载下：满足你的流量所需的副本数与成本"
    pareto = "成本与延迟：帕累托前沿"
    assert heads[:4] == ["满足 SLO 的配置，最便宜的在前", under_load, pareto, "价格"]
    assert CJK.search(zh.caption[0].value) and "configurations" not in zh.caption[0].value
    met = next(c.value for c in zh.caption if "满足 SLO（且放得进显存）" in c.value)
    assert "configurations" not in met
    assert zh.markdown[0].value.startswith("**最便宜")  # the callouts
    # the ranked table: the same numbers under Chinese headers
    zh_table, en_table = zh.dataframe[0].value, en.dataframe[0].value
    assert "成本（美元 / 1M 输出 token）" in zh_table.columns
    assert list(zh_table["成本（美元 / 1M 输出 token）"]) == list(
        en_table["Cost (USD per 1M output tokens)"]
    )
    assert list(zh_table["TTFT"]) == list(en_table["TTFT"])
    # the configuration counts in the caption are the English run's
    numbers = re.compile(r"\d[\d,.]*")
    assert numbers.findall(zh.caption[0].value)[:2] == numbers.findall(en.caption[0].value)[:2]


def test_the_engines_warnings_are_in_chinese_with_the_english_runs_counts():
    """A warning the engine returns in English (engine/report/messages.py) shows in Chinese:
    /plan's count of configurations that do not fit, /decode's box for a batch that does not."""
    query = {"model": "Llama-3.1-70B", "hardware": "H100,A100", "precisions": "fp16"}
    zh, en = both("pages/plan.py", query)
    said = [c.value for c in en.caption if c.value.startswith("⚠️")]
    shown = [c.value for c in zh.caption if c.value.startswith("⚠️")]
    assert said and any("does not fit: memory per device exceeds" in c for c in said)
    # 放不下 = does not fit; the counts (n of rows) are the English run's
    assert len(shown) == len(said)
    assert any("放不下：每个设备所需内存超过可用内存" in c for c in shown)
    assert not any("does not fit" in c for c in shown)
    count = re.compile(r"\d[\d,]*")
    assert [sorted(count.findall(c)[:2]) for c in shown] == [
        sorted(count.findall(c)[:2]) for c in said
    ]
    # /decode says "does not fit" once, in its fit box with the figures (the engine's warning
    # of the same is not repeated above it: it was, until the box said it too)
    zh, en = both("pages/decode.py", {"model": "Llama-3.1-70B", "hardware": "A100", "batch": "512"})
    said = [e.value for e in (*en.warning, *en.error) if "not fit" in e.value.lower()]
    assert len(said) == 1 and said[0].startswith("Does not fit: ")
    shown = [e.value for e in (*zh.warning, *zh.error) if "放不下" in e.value]
    assert len(shown) == 1 and shown[0].startswith("放不下：")
    assert sorted(count.findall(shown[0])) == sorted(count.findall(said[0]))  # the same figures


def test_error_bands_and_training_rules_are_in_chinese_with_the_english_runs_numbers():
    """An error band's basis (its row count and file names kept), the training planner's
    rejected-configuration rules and its model FLOPs definition show in Chinese; the English
    run's counts are the same."""
    zh, en = both("pages/load.py", {})
    said = next(c.value for c in en.caption if "leave-one-model-out" in c.value)
    shown = next(c.value for c in zh.caption if "误差带" in c.value)  # 误差带 = error band
    # 留一模型 = leave one model out; the rows and the file are the English run's
    assert (
        "留一模型与留一加速器两种 MAPE 中的较大者，基于 trtllm-v1.0-perf-overview.csv 的 112 行"
        in shown
    )
    assert "112 rows of trtllm-v1.0-perf-overview.csv" in said and "leave-one" not in shown
    zh, en = both("pages/accuracy.py", {"profile": "tutorial"})  # a profile fitted on nothing
    said, shown = ([e.value.replace("\\", "") for e in at.caption] for at in (en, zh))
    assert any("MAPE on the shipped measurements (nothing fitted)" in t for t in said)
    assert any("内置实测数据上的 MAPE（未做拟合）" in t for t in shown)
    zh, en = both("pages/train.py", {"gpus": "7"})  # 7 GPUs: no configuration is valid
    why_en, why_zh = (at.dataframe[0].value for at in (en, zh))
    assert why_en.iloc[0, 0] == "gpus is not a multiple of tp·pp·cp (dp must be whole)"
    assert why_zh.iloc[0, 0] == "gpus 不是 tp·pp·cp 的整数倍（dp 必须为整数）"
    assert why_zh.iloc[:, 1].tolist() == why_en.iloc[:, 1].tolist()  # the counts
    zh, en = both("pages/train.py", {})
    said = [c.value.replace("\\", "") for c in en.caption]  # as plain text: no escapes
    assert any("PaLM (Chowdhery et al. 2022, appendix B)" in c for c in said)
    assert any("PaLM（Chowdhery 等 2022，附录 B）：每个 token 6·N" in c.value for c in zh.caption)
    assert not any("per token" in c.value for c in zh.caption)


def test_engine_warnings_with_values_are_in_chinese_with_the_english_runs_values():
    """/solve's precision fallback: the engine's English text recognised by its template, shown
    in Chinese with the same values."""
    zh, en = both("pages/solve.py", {"hardware": "A100", "precision": "fp8"})
    said = [w.value.replace("\\", "") for w in en.warning]  # as plain text: no escapes
    assert any("lists no fp8 peak: its fp16 peak (312 TFLOP/s) is used instead" in w for w in said)
    shown = [w.value for w in zh.warning]
    assert any(
        "NVIDIA A100 80GB SXM 未列出 fp8 峰值：改用其 fp16 峰值（312 TFLOP/s）" in w for w in shown
    )
    assert not any("lists no" in w for w in shown)
