# ruff: noqa: RUF001 (Chinese text: full-width brackets are right there)
"""Pages in Chinese (AppTest): /accuracy's title, sections and captions with the same
MAPE figures as in English; a share link's bad value warned about in Chinese; the shared sidebar
widgets (ui/widgets) labelled in Chinese. The English pages are tested elsewhere."""

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import chart_spec

ROOT = Path(__file__).resolve().parent.parent


def run(page: str, query: dict) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(page)
    at.query_params.update(query)
    return at.run()


def test_accuracy_in_chinese_has_the_same_mape_figures_as_in_english():
    query = {"profile": "trtllm"}
    en, zh = run("pages/accuracy.py", query), run("pages/accuracy.py", query | {"lang": "zh"})
    assert not en.exception and not zh.exception
    assert zh.title[0].value == "准确度：实测与预测"
    subheaders = [s.value for s in zh.subheader]
    assert "配置档 trtllm：误差、拟合与校准范围" in subheaders
    assert "全部推理服务配置档" in subheaders and "配置档 trtllm 下的每一行" in subheaders
    captions = " ".join(c.value for c in zh.caption)
    assert "误差 = 预测值 / 实测值 − 1" in captions and "误差带：" in captions
    assert "内置实测数据：NVIDIA TensorRT-LLM 0.6.1 性能表" in captions
    # The same figures under translated labels (English label -> Chinese label).
    same = {
        "MAPE": "MAPE（平均绝对百分比误差）",
        "Median APE": "绝对百分比误差中位数",
        "Out of sample (band)": "样本外（误差带）",
        "In sample (MAPE)": "样本内（MAPE）",
        "Leave one model out (MAPE)": "留一模型（MAPE）",
        "Leave one accelerator out (MAPE)": "留一加速器（MAPE）",
        "Error band": "误差带",
    }
    english = {m.label: m.value for m in en.metric}
    chinese = {m.label: m.value for m in zh.metric}
    for label, translated in same.items():
        assert chinese[translated] == english[label], label
    assert english["In sample (MAPE)"] == "15.1%" and english["Error band"] == "±21.7%"
    assert chinese["已预测行数"] == english["Rows predicted"].replace(" of ", " / ")
    # The tables' headers and the charts' titles and axes are Chinese; the CSV stays English.
    profiles = zh.dataframe[-2].value
    assert {"配置档", "软件栈与版本", "调度器", "误差带"} <= set(profiles.columns)
    assert "measured_in_unit" in zh.dataframe[-1].value.columns  # the download's columns
    titles = [chart_spec(c)["layout"]["title"]["text"] for c in zh.get("plotly_chart")]
    assert titles and all("配置档 trtllm" in t for t in titles)
    assert zh.selectbox(key="accuracy:profile").label == "配置档（推理服务软件栈、版本、调度器）"
    assert zh.query_params["lang"] in ("zh", ["zh"])


def test_accuracy_training_section_in_chinese():
    zh = run("pages/accuracy.py", {"section": "training", "lang": "zh"})
    assert not zh.exception
    assert "训练配置档 megatron" in [s.value for s in zh.subheader]
    assert {m.label for m in zh.metric} == {"样本内（MAPE）", "留一行（MAPE）", "留一表（MAPE）"}
    hover = json.loads(zh.get("plotly_chart")[0].proto.spec)["data"][-1]["hovertext"][0]
    assert "实测" in hover and "预测" in hover


@pytest.mark.parametrize(
    ("value", "said"),
    [("0", "忽略了 'batch'："), ("abc", "忽略了 'batch'：'abc' 不是数字")],
)
def test_a_bad_link_value_is_warned_about_in_chinese(value, said):
    at = run("pages/solve.py", {"batch": value, "lang": "zh", "nonsense": "1"})
    assert not at.exception
    text = "\n".join(w.value for w in at.warning)
    assert "部分分享链接参数被忽略" in text and said in text
    assert "忽略了未知参数 'nonsense'" in text


def test_the_shared_sidebar_widgets_are_labelled_in_chinese():
    at = run("pages/solve.py", {"lang": "zh"})
    assert not at.exception
    selects = [s.label for s in at.sidebar.selectbox]
    assert "精度" in selects and "配置档（假设）" in selects
    numbers = [n.label for n in at.sidebar.number_input]
    assert "批大小（样本数）" in numbers and "计算效率 η（占峰值的比例）" in numbers
    expanders = [e.label for e in at.sidebar.expander]
    assert {"假设", "自定义加速器", "自定义模型"} <= set(expanders)
    # the editor is lazy: open it before the first run (a rerun would make AppTest map the
    # translated radio options outside the session's language)
    opened = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    opened.switch_page("pages/solve.py")
    opened.query_params.update({"lang": "zh"})
    opened.session_state["solve:custom_hw.open"] = True
    assert "启用" in [t.label for t in opened.run().sidebar.toggle]
    assert any("配置档 tutorial：使用其假设，未修改。" in c.value for c in at.caption)
