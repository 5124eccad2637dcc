"""AppTest of the "Footprint and cost of ownership" section (ui/widgets/footprint.py) on /train
and /plan: its table follows engine.footprint and engine.tco, its fields are link parameters,
a bad link value is refused beside its field; lessons 07 and 08 in Chinese without English
words (tests/english_scan.py); the grid names shipped are marked for translation."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import ROOT
from tests.english_scan import catalogue_names, english_on, operator_ids
from ui.core.frame import section_key
from ui.plan import view as pv
from ui.words import data_text, i18n
from ui.words.format import fmt

SMALL_TRAIN = {"model": "Llama-3.1-8B", "gpus": "8", "tp": "1", "pp": "1", "vp": "1"}
SMALL_TRAIN |= {"micro_batch_size": "1", "zero": "1", "recompute": "none"}
SMALL_TRAIN |= {"global_batch_size": "64", "seq_len": "2048"}


def run(page: str, query: dict, state: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.switch_page(page)
    at.query_params.update(query)
    for key, value in (state or {}).items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def table(at: AppTest, key: str) -> dict[str, str]:
    df = next(d.value for d in at.dataframe if list(d.value.columns) == ["Quantity", "Value"])
    assert key
    return dict(zip(df["Quantity"], df["Value"], strict=True))


def test_train_section_follows_the_engine_and_the_link():
    at = run("pages/train.py", SMALL_TRAIN | {"grid": "Poland", "carbon_price": "100"})
    result = engine.train(
        "Llama-3.1-8B", "H100", gpus=8, global_batch_size=64, seq_len=2048, zero=1
    )
    usage = engine.train_usage(result)
    fp = engine.footprint(usage, "Poland", carbon_usd_per_tco2e=100.0)
    rows = table(at, "train")
    assert rows["Carbon"] == fmt(fp["carbon_tco2e"], "tCO2e")
    assert rows["Energy at the meter (× PUE)"] == fmt(fp["energy_mwh"], "MWh")
    assert rows["Carbon cost at the price given"] == fmt(fp["carbon_cost_usd"], "USD")
    # a PUE typed in overrides the grid's 1.58: the energy follows, and the link carries it
    at.number_input(key="train:pue").set_value(1.2).run()
    pue = engine.footprint(usage, engine.Grid(carbon_g_per_kwh=820, pue=1.2, wue_l_per_kwh=1.8))
    assert table(at, "train")["Energy at the meter (× PUE)"] == fmt(pue["energy_mwh"], "MWh")
    assert at.query_params["pue"] in ("1.2", ["1.2"])
    assert len(at.get("download_button")) >= 2  # the search's CSV and the section's


def test_a_bad_link_value_is_refused_beside_its_field():
    at = run("pages/train.py", SMALL_TRAIN | {"pue": "0.5", "years": "-1"})
    warned = " ".join(w.value for w in at.warning)
    assert "pue" in warned and "years" in warned


def test_plan_section_counts_the_best_deployment_for_a_year():
    query = {"model": "Llama-3.1-8B", "hardware": "H100", "precisions": "fp16", "tp": "1"}
    query |= {"target_rate": "10", "grid": "Quebec", "prices": "H100:5"}
    state = {section_key("plan", s): True for s in pv.SECTIONS}
    at = run("pages/plan.py", query, state)
    rows = table(at, "plan")
    assert rows["Hours"] == fmt(8760, "h")
    assert rows["Site water"] == fmt(0, "m³")  # Quebec: closed loop, no site water
    assert rows["Rented: per GPU-hour"] == fmt(5, "USD")  # the planner's price, from its link


@pytest.mark.parametrize("number", ["7", "8"])
def test_lessons_in_chinese_have_no_english_words(number, monkeypatch):
    monkeypatch.setattr(i18n, "language", lambda: "zh")
    at = run("pages/learn.py", {"lesson": number, "lang": "zh"})
    names = catalogue_names() | {
        "im",
        "mlsys",
    }  # "MLSys·im", the tutorial's name, as every lesson says it
    assert english_on(at, names, operator_ids()) == []


def test_every_shipped_grid_name_is_marked_for_translation():
    assert {g.name for g in engine.grids().values()} <= set(data_text.GRIDS)
