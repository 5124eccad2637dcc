# ruff: noqa: RUF001 (Chinese text: full-width brackets are right there)
"""The serving-under-load page and the training planner in Chinese: opened
with `lang=zh` in the link, their titles, subheaders, captions and messages are Chinese, and
every number on them is the English run's (numbers are formatted before they are put in).
"""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT, chart_spec

CJK = re.compile(r"[\u3400-\u9fff]")
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
LOAD = {"model": "Llama-3.1-8B", "hardware": "H100", "tp": "1", "profile": "tutorial"}
LOAD |= {"input_tokens": "512", "output_tokens": "128", "requests": "400"}
# 70B without model parallelism on 8 GPUs: nothing fits (the planner's refusal path)
NO_FIT = {"model": "Llama-3.1-70B", "gpus": "8", "tp": "1", "pp": "1", "cp": "1"}
NO_FIT |= {"vp": "1", "zero": "0", "recompute": "none"}


def both(page: str, query: dict[str, str], state: dict | None = None) -> tuple[AppTest, AppTest]:
    """The page in English and in Chinese, from the same link (`state`: session state set
    before the run, e.g. a lazy section opened)."""
    runs = []
    for lang in ("en", "zh"):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
        at.switch_page(page)
        at.query_params.update({**query, "lang": lang})
        for key, value in (state or {}).items():
            at.session_state[key] = value
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        runs.append(at)
    return runs[0], runs[1]


def values(elements) -> list[str]:
    return [str(e.value) for e in elements]


def numbers(texts: list[str]) -> list[str]:
    """Every figure of `texts` (a translation may move them, never change them)."""
    return sorted(n for t in texts for n in NUMBER.findall(t))


def cells(table) -> list[list]:
    """A table's cells, its words in Chinese (yes/no, and the max-rate search's stages)."""
    words = {"yes": "是", "no": "否", "bisection": "二分查找", "confirmation": "确认"}
    return [[words.get(v, v) if isinstance(v, str) else v for v in row] for row in table]


def charts(at: AppTest) -> dict[str, dict]:
    return {c.proto.id.split("-")[-1]: chart_spec(c) for c in at.get("plotly_chart")}


def data(fig: dict) -> list:
    return [(t.get("x"), t.get("y")) for t in fig["data"]]


def assert_chinese(texts: list[str], *english: str) -> None:
    assert texts
    for t in texts:
        assert CJK.search(t), t
        assert not any(e in t for e in english), t


def test_serving_under_load_in_chinese_shows_the_english_runs_numbers():
    en, zh = both("pages/load.py", LOAD, state={"load:tables.open": True})
    assert not zh.warning and not zh.error
    title = zh.title[0].value
    assert title.startswith("Llama-3.1-8B 在 NVIDIA H100 SXM 上") and "负载下的推理服务" in title
    assert_chinese([title], "serving under load")
    assert_chinese(values(zh.subheader), "The curve", "Simulated rates", "This run")
    assert_chinese(values(zh.main.caption), "Sources:", "Scheduler:", "Error band", "Lines:")
    assert [m.value for m in zh.metric] == [m.value for m in en.metric] and len(zh.metric) >= 8
    labels = [m.label for m in zh.metric]
    assert "满足 SLO 的最大速率（requests/s）" in labels and "有效吞吐（requests/s）" in labels
    # the captions carry the same figures: the scenario, the scheduler, the band
    assert numbers(values(zh.main.caption)[:3]) == numbers(values(en.main.caption)[:3])
    figs_en, figs_zh = charts(en), charts(zh)
    assert set(figs_zh) == set(figs_en) >= {"load_ttft", "load_tpot", "load_throughput"}
    for key in figs_en:
        assert data(figs_zh[key]) == data(figs_en[key]), key
    assert "首 token 延迟（TTFT）" in figs_zh["load_ttft"]["layout"]["title"]["text"]
    tables_en, tables_zh = [d.value for d in en.dataframe], [d.value for d in zh.dataframe]
    for table_en, table_zh in zip(tables_en, tables_zh, strict=True):
        figures = [i for i, c in enumerate(table_en.columns) if c != "What"]  # not the labels
        got, want = table_zh.iloc[:, figures], table_en.iloc[:, figures]
        assert got.to_numpy().tolist() == cells(want.to_numpy().tolist())
    assert "到达速率（requests/s）" in tables_zh[1].columns  # headers on screen translated
    assert zh.sidebar.radio[0].label == "负载"


def test_the_training_planner_in_chinese_says_why_nothing_fits_with_the_same_numbers():
    en, zh = both("pages/train.py", NO_FIT)
    title = zh.title[0].value
    assert title == "在 8 × NVIDIA H100 SXM 上训练 Llama-3.1-70B"
    assert_chinese(values(zh.subheader), "Configurations", "Rejected", "Scaling")
    assert_chinese(values(zh.main.caption), "Sources:", "measured error", "No step time")
    error_en, error_zh = values(en.error)[0], values(zh.error)[0]
    assert error_zh.startswith("在 8 块 GPU 上没有放得下的配置。最接近的是 tp 1 · pp 1")
    assert numbers([error_zh]) == numbers([error_en])  # the engine's reason keeps its figures
    assert numbers(values(zh.main.caption)[:2]) == numbers(values(en.main.caption)[:2])
    figs_en, figs_zh = charts(en), charts(zh)
    assert "train_roofline" not in figs_zh
    for key in figs_en:
        assert data(figs_zh[key]) == data(figs_en[key]), key
    assert "放不下" in figs_zh["train_memory"]["layout"]["title"]["text"]
    reasons = next(d.value for d in zh.dataframe if "被排除的原因" in d.value.columns)
    reasons_en = next(d.value for d in en.dataframe if "Why rejected" in d.value.columns)
    assert reasons_en.to_numpy().tolist() == [["does not fit in memory", 3]]
    assert reasons.to_numpy().tolist() == [["显存放不下", 3]]  # the engine's rule, translated


SCALE_WORDS = {"million": 1e6, "billion": 1e9, "trillion": 1e12, "万": 1e4, "亿": 1e8}
SCALE_WORDS["万亿"] = 1e12


def amount(text: str) -> float | str:
    """A card's value as a number where it is a count with a scale word ('1.7 million' and
    '170 万' are both 1,700,000); anything else as written."""
    number, _, word = text.partition(" ")
    if word in SCALE_WORDS:
        return float(number.replace(",", "")) * SCALE_WORDS[word]
    return text


def test_the_training_planners_defaults_in_chinese_show_the_english_runs_cards():
    en, zh = both("pages/train.py", {})
    # the same values; a large count in each language's words: 1.7 million USD is 170 万 USD
    # (ui.words.format groups Chinese counts by 万 = 10⁴; until now both said "million")
    assert [amount(m.value) for m in zh.metric] == [amount(m.value) for m in en.metric]
    assert len(zh.metric) == 18  # 12 run cards, 6 reliability cards (MTBF to goodput)
    assert "有效产出率（goodput）" in [m.label for m in zh.metric]
    assert "170 万" in values(zh.metric) and "1.7 million" in values(en.metric)
    assert "步时间" in [m.label for m in zh.metric]
    assert_chinese([zh.success[0].value], "Shown in detail")
    assert_chinese(values(zh.subheader), "Configurations", "Operators")
