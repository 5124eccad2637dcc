"""AppTest of the serving page's "Sensitivity" section (ui/widgets/sensitivity.py): the tornado,
the elasticity table and its CSV, and the synthesis of the ITL target, all from engine calls.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import ROOT, chart_spec
from ui.core.frame import section_key
from ui.widgets import sensitivity as ds
from ui.words.format import fmt, sig

PAGE = "pages/decode.py"
NEEDED = "Needed, the rest as given"


def open_page(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def open_section(query: dict[str, str] | None = None) -> AppTest:
    at = open_page(query)
    at.session_state[section_key("decode", "sensitivity")] = True
    at.run()
    assert not at.exception, at.exception
    return at


def url(at: AppTest, key: str) -> str:
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def test_the_section_shows_the_engines_elasticities_and_synthesis():
    at = open_section({"model": "Llama-3.1-70B", "hardware": "H200", "input_tokens": "1024"})
    d = engine.Deployment("Llama-3.1-70B", "H200")  # the page's default profile
    req = engine.Batch(input_tokens=1024, output_tokens=256)
    sens = engine.sensitivity(d, req)
    tornado = next(
        chart_spec(c)
        for c in at.get("plotly_chart")
        if "change when each figure moves" in chart_spec(c)["layout"]["title"]["text"]
    )
    # the largest bar is on top (plotly draws the last category highest): memory bandwidth
    assert tornado["data"][0]["y"][-1] == "Memory bandwidth"
    table = next(df.value for df in at.dataframe if "Elasticity" in df.value.columns)
    row = table[table["Parameter"] == "Memory bandwidth"].iloc[0]
    assert row["Elasticity"] == sig(sens.elasticity("memory_bandwidth", "tpot_ms"))
    assert table[table["Parameter"] == "Peak FLOP/s"].iloc[0]["Elasticity"] == "0"
    assert "**Memory bandwidth** binds" in " ".join(m.value for m in at.markdown)
    syn = engine.synthesis(d, req)
    needed = next(
        df.value for df in at.dataframe if "Needed, the rest as given" in df.value.columns
    )
    bw = needed[needed["Parameter"] == "Memory bandwidth"].iloc[0]
    assert bw["Needed, the rest as given"] == fmt(syn.required("memory_bandwidth"), "B/s")
    assert at.download_button(key="sens_csv") is not None
    assert at.download_button(key="synth_csv") is not None
    assert url(at, "target_tpot_ms") == "50"


def test_the_target_is_in_the_link_and_moves_the_synthesis():
    at = open_section({"model": "Llama-3.1-8B", "hardware": "A100", "target_tpot_ms": "5"})
    assert at.number_input(key="decode:target_tpot_ms").value == pytest.approx(5.0)
    d = engine.Deployment("Llama-3.1-8B", "A100")  # the page's default profile
    syn = engine.synthesis(d, engine.Batch(1024, 256), engine.Target(value=5.0))
    needed = next(
        df.value for df in at.dataframe if "Needed, the rest as given" in df.value.columns
    )
    bw = needed[needed["Parameter"] == "Memory bandwidth"].iloc[0]["Needed, the rest as given"]
    assert bw == fmt(syn.required("memory_bandwidth"), "B/s")
    at.number_input(key="decode:sensitivity_step_pct").set_value(5.0).run()
    assert url(at, "sensitivity_step_pct") == "5"
    assert not at.exception


def test_a_bad_target_in_the_link_is_named_and_the_default_used():
    at = open_page({"target_tpot_ms": "-3"})
    assert any("'target_tpot_ms'" in w.value.replace("\\", "") for w in at.warning)
    assert at.number_input(key="decode:target_tpot_ms").value == pytest.approx(50.0)


def test_labels_cover_every_engine_parameter_and_metric():
    assert set(ds.PARAMETER_LABELS) == set(engine.SENSITIVITY_PARAMETERS)
    assert set(ds.METRIC_LABELS) == set(engine.SENSITIVITY_METRICS)


def test_the_section_in_chinese_has_no_english_left(monkeypatch):
    from tests.english_scan import catalogue_names, english_words, shown_texts
    from ui.decode.view import SECTIONS
    from ui.words import i18n

    monkeypatch.setattr(i18n, "language", lambda: "zh")
    at = open_section({"model": "Llama-3.1-70B", "hardware": "H200", "lang": "zh"})
    title = i18n.catalogue("zh").gettext(SECTIONS["sensitivity"])
    box = next(e for e in at.main.expander if e.label == title)
    names = catalogue_names()
    left = [(w, t) for w, t in shown_texts(box) if english_words(t, names)]
    assert box.get("plotly_chart") and box.dataframe and not left, left
