# ruff: noqa: RUF001 (Chinese text: full-width punctuation is right there)
"""AppTest of the single-solve, batch-sweep, hardware-comparison and catalogue pages in Chinese
(`lang=zh` in the link): titles, subheaders and the page's own captions in Chinese, the headline
numbers the same as the English run's (numbers are formatted the same in every language)."""

import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from ui.solve.breakdown import DETAILS_KEY

ROOT = Path(__file__).resolve().parent.parent
CJK = re.compile(r"[\u3400-\u9fff]")


def both(page: str, query: dict[str, str], opened: tuple[str, ...] = ()) -> tuple[AppTest, AppTest]:
    """(the English run, the Chinese run) of `page` at the same link, with the expanders whose
    session-state keys are in `opened` open (those drawn only while open)."""
    runs = []
    for lang in ("en", "zh"):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.switch_page(page)
        at.query_params.update({**query, "lang": lang})
        for key in opened:
            at.session_state[key] = True
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        runs.append(at)
    return runs[0], runs[1]


def chinese(texts: list[str]) -> bool:
    return bool(texts) and all(CJK.search(t) for t in texts)


def numbers(at: AppTest) -> list[str]:
    """The metric values (the word-valued bottleneck card aside)."""
    return [m.value for m in at.metric if not m.value.isalpha() and not CJK.search(m.value)]


def test_solve_in_chinese():
    query = {"model": "ResNet-50", "hardware": "A100", "batch": "8"}
    en, zh = both("pages/solve.py", query, (DETAILS_KEY, "solve:table.open"))
    assert CJK.search(zh.title[0].value) and "on" not in zh.title[0].value.split()
    assert zh.title[0].value.startswith("ResNet-50 在 ") and zh.title[0].value.endswith(" 上")
    assert chinese([s.value for s in zh.subheader])  # the headline
    assert chinese([e.label for e in zh.main.expander])  # the table, layers and share link
    assert zh.subheader[0].value.startswith(("开销受限", "访存受限", "计算受限"))
    assert chinese([c.value for c in zh.caption if "docs/model.md" in c.value])
    labels = [m.label for m in zh.metric]
    assert chinese(labels) and "瓶颈" in labels and "延迟" in labels
    assert numbers(zh) == numbers(en) and len(numbers(en)) == 7
    # the table of every figure: translated quantities, the same values
    table_zh, table_en = zh.dataframe[0].value, en.dataframe[0].value
    assert list(table_zh.columns) == ["量", "值"]
    assert list(table_zh["值"])[7:9] == list(table_en["Value"])[7:9]  # latency, T compute


def test_solve_llm_operators_in_chinese():
    query = {"model": "Llama-3.1-8B", "hardware": "H100", "batch": "4"}
    en, zh = both("pages/solve.py", query, (DETAILS_KEY,))
    assert "算子（推理服务模型，单设备）" in [e.label for e in zh.main.expander]
    binding = next(m.value for m in zh.markdown if "哪个算子起约束作用" in m.value)
    assert "解码步骤" in binding
    serving = next(i.value for i in zh.info if "推理服务模型给出" in i.value)
    en_serving = next(i.value for i in en.info if "serving model gives" in i.value)
    assert re.findall(r"\d[\d.,]* [µm]?s\b", serving) == re.findall(
        r"\d[\d.,]* [µm]?s\b", en_serving
    )  # TPOT and TTFT, the same figures
    assert numbers(zh) == numbers(en)


def test_sweep_in_chinese():
    en, zh = both("pages/sweep.py", {"model": "ResNet-50", "hardware": "H100", "budget_ms": "5"})
    title = zh.title[0].value
    assert CJK.search(title) and "Batch sweep" not in title and title.startswith("批大小扫描")
    assert chinese([c.value for c in zh.caption if "docs/model.md" in c.value or "CSV" in c.value])
    labels = [m.label for m in zh.metric]
    assert chinese(labels) and "Best throughput" not in " ".join(labels)
    assert numbers(zh) == numbers(en) and len(numbers(en)) >= 5
    assert [m.value for m in zh.metric] == [m.value for m in en.metric]  # all numeric here
    assert zh.dataframe[0].value.shape == en.dataframe[0].value.shape
    assert list(zh.dataframe[0].value.iloc[:, 0]) == list(en.dataframe[0].value.iloc[:, 0])


def test_compare_in_chinese():
    en, zh = both("pages/compare.py", {"model": "ResNet-50", "hardware": "A100,H100"})
    title = zh.title[0].value
    assert title == "硬件对比：ResNet-50" and "Hardware comparison" not in title
    heads = [s.value for s in zh.subheader]
    assert chinese(heads) and "各加速器" in heads and "全部场景" in heads
    assert chinese([c.value for c in zh.caption if "docs/model.md" in c.value or "η" in c.value])
    summary_zh, summary_en = zh.dataframe[0].value, en.dataframe[0].value
    assert "交叉点批大小（你的列表中的首个）" in summary_zh.columns
    assert summary_zh.iloc[:, :5].values.tolist() == summary_en.iloc[:, :5].values.tolist()
    speed_zh, speed_en = zh.dataframe[1].value, en.dataframe[1].value
    assert speed_zh.values.tolist() == speed_en.values.tolist()  # the same speedups


def test_catalogue_in_chinese():
    en, zh = both("pages/catalogue.py", {"q": "H100"})
    assert zh.title[0].value == "目录" and en.title[0].value == "Catalogue"
    heads = [s.value for s in zh.subheader]
    assert chinese(heads) and heads[0].startswith("加速器（")
    assert chinese([c.value for c in zh.caption if "10⁹" in c.value])  # the page's own
    hw_zh, hw_en = zh.dataframe[0].value, en.dataframe[0].value
    assert "带宽（GB/s）" in hw_zh.columns and "Bandwidth (GB/s)" in hw_en.columns
    assert hw_zh["带宽（GB/s）"].tolist() == hw_en["Bandwidth (GB/s)"].tolist()
    assert hw_zh["Id"].tolist() == hw_en["Id"].tolist()  # ids and names stay as written
