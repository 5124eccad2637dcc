"""The Accuracy page (AppTest) and its pure builders: profiles, figure, tables, links."""

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import engine
from ui.accuracy import view as av
from ui.core.profiles import profile_from_query

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "data" / "measurements" / "trtllm-v0.6.1.csv"


@pytest.fixture(autouse=True)
def _fresh_cache():
    import streamlit as st

    st.cache_data.clear()


def page(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("pages/accuracy.py")
    at.query_params.update(query or {})
    return at.run()


def param(at: AppTest, key: str) -> str:
    """The URL's value for `key` after the run (a list when the page wrote it)."""
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_default_page_shows_tutorial_on_the_shipped_measurements():
    at = page()
    assert not at.exception
    assert at.selectbox(key="acc:profile").value == "tutorial"
    # tutorial: 55 of 57 rows predicted (two runs exceed 90 % of memory), MAPE 37.3 %
    # (docs/model.md, "Accuracy": bench/accuracy_report.py's table)
    assert metric(at, "Rows predicted") == "55 of 57"
    assert metric(at, "MAPE") == "37.3 %"
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert fig["layout"]["xaxis"]["type"] == "log" and fig["layout"]["yaxis"]["type"] == "log"
    names = [t.get("name", "") for t in fig["data"]]
    assert "predicted = measured" in names and "±20 %" in names
    assert param(at, "profile") == "tutorial"


def test_link_selects_the_trtllm_profile_and_errors_drop():
    at = page({"profile": "trtllm"})
    assert at.selectbox(key="acc:profile").value == "trtllm"
    assert metric(at, "Rows predicted") == "57 of 57"
    assert float(metric(at, "MAPE").split()[0]) < 15
    per_profile = at.dataframe[0].value
    assert list(per_profile.columns) == ["rows", "tutorial MAPE %", "trtllm MAPE %", "vllm MAPE %"]


def test_custom_profile_from_a_link_is_applied_and_echoed():
    at = page({"profile": "mine", "efficiency": "0.9", "layer_overhead_us": "0"})
    assert not at.exception and at.selectbox(key="acc:profile").value == "mine"
    assert param(at, "efficiency") == "0.9" and param(at, "profile") == "mine"


def test_a_bad_link_warns_and_falls_back_to_tutorial():
    at = page({"profile": "mine", "efficiency": "7"})
    assert at.selectbox(key="acc:profile").value == "tutorial"
    # the message is escaped for markdown (inert), hence the backslashes
    assert "efficiency must be a number from 0.01 to 1, got 7.0" in at.warning[0].value


def test_fit_button_makes_a_team_profile_with_lower_error():
    at = page()
    at.button(key="acc:fit").click().run()
    assert not at.exception
    assert at.selectbox(key="acc:profile").value == "team"
    # fitted on the same rows as the shipped trtllm profile: in sample well under 37.3 %
    assert float(metric(at, "MAPE").split()[0]) < 15
    assert param(at, "profile") == "team" and float(param(at, "efficiency")) > 0


def test_profile_from_query_by_name_and_by_values():
    p, warnings = profile_from_query({"profile": ["trtllm"]})
    assert p is engine.get_profile("trtllm") and warnings == []
    p, warnings = profile_from_query({"profile": ["nope"]})
    assert p.name == "tutorial" and "unknown profile 'nope'" in warnings[0]
    p, _ = profile_from_query({"profile": ["t"], "layer_overhead_us": ["25"]})
    assert p.assumptions.layer_overhead_s == pytest.approx(25e-6)
    p, warnings = profile_from_query({"profile": ["t"], "efficiency": ["nan"]})
    assert p.name == "tutorial" and "finite" in warnings[0]


def _frame() -> pd.DataFrame:
    rows = engine.read_measurements([SHIPPED])[:3]
    df = engine.validate(rows, "tutorial")
    df.loc[0, "model"] = "<b>x</b>"  # user text must stay inert in the hover
    return df


def test_figure_hover_has_the_whole_scenario_escaped():
    fig = av.accuracy_figure(_frame(), "Profile <i>t</i>")
    points = [t for t in fig.data if t.mode == "markers"]
    hover = points[0].hovertext[0]
    assert "&lt;b&gt;x&lt;/b&gt;" in hover and "<b>x</b>" not in hover
    assert "batch 1,024, 128 in / 128 out tokens" in hover and "row 1" in hover
    assert fig.layout.title.text == "Profile &lt;i&gt;t&lt;/i&gt;"


def test_mape_by_metric_by_hand():
    df = pd.DataFrame(
        {"metric": ["a", "a", "b"], "ape_pct": [10.0, 30.0, 5.0], "reason": ["", "", ""]}
    )
    table = av.mape_by({"p": df}, "metric")
    # a: (10 + 30) / 2 = 20; b: 5
    assert table.to_dict("list") == {"metric": ["a", "b"], "p MAPE %": [20.0, 5.0]}


def test_results_table_carries_units_and_reasons():
    table = av.results_table(_frame())
    assert {"unit", "measured_in_unit", "predicted_in_unit", "error_pct"} <= set(table.columns)
    assert table.loc[0, "unit"] == "tokens/s per GPU"


@pytest.mark.parametrize(
    ("query", "warning"),
    [
        ({"profile": ["<script>"]}, "unknown profile '<script>'"),
        ({"profile": ["<script>"], "efficiency": ["0.5"]}, "profile name '<script>'"),
        ({"profile": ["t"], "efficiency": ["1e400"]}, "finite numbers"),
        ({"profile": ["t"], "link_latency_us": ["-1"]}, "link_latency_us must be"),
    ],
)
def test_hostile_links_fall_back_to_tutorial_with_a_warning(query, warning):
    p, warnings = profile_from_query(query)
    assert p.name == "tutorial" and warning in warnings[0]


def test_pct_for_tiles():
    assert av.pct(12.8137) == "12.8 %" and av.pct(float("nan")) == "—"


def test_profile_table_shows_every_assumption_and_what_unset_means():
    table = av.profile_table(engine.get_profile("tutorial")).set_index("assumption")["value"]
    assert table["efficiency"] == "0.5" and table["layer_overhead_us"] == "10"
    assert table["attention_efficiency"] == "the compute efficiency η"  # the registry's words
    assert table["link_latency_us"] == "the interconnect's catalogued figure"
    assert len(table) == len(engine.PROFILE_KEYS) == 14  # every profile assumption, none hidden
