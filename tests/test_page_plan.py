"""AppTest tests of the planner page (pages/plan.py): every widget and link parameter.

Expected configurations come from `engine.serve_sweep` run here on the same grid and priced by
hand (price × devices ÷ (output tokens/s × 3,600 s/h) × 10⁶), never typed in; the page is
opened from the entry file, as a browser's deep link routes to it.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import ROOT
from ui.core.frame import section_key
from ui.plan import view as pv
from ui.words.format import fmt

PAGE = "pages/plan.py"
MUST_SHOW = {"model": "Llama-3.1-70B", "hardware": "H100,A100,MI300X", "input_tokens": "1024"}
MUST_SHOW |= {"output_tokens": "256", "ttft_ms": "2000", "tpot_ms": "50"}
CAT = engine.load_catalog(use_env=False)
BATCHES = [2**k for k in range(9)]


def open_page(query: dict[str, str] | None = None, opened: bool = True) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.switch_page(PAGE)
    at.query_params.update(query or {})
    for section in pv.SECTIONS if opened else ():  # drawn only while open: the user opened them
        at.session_state[section_key("plan", section)] = True
    at.run()
    assert not at.exception, at.exception
    return at


def text(elements) -> str:
    """The elements' text with markdown escapes removed (user text is backslashed)."""
    return " ".join(e.value for e in elements).replace("\\", "")


def link(at: AppTest, key: str) -> str:
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def figure(at: AppTest) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def prices_table(at: AppTest) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "Kind" in d.value.columns)


def by_hand(hardware=("H100", "A100", "MI300X"), ttft=2000.0, tpot=50.0, **kw) -> pd.DataFrame:
    """The grid swept here, one accelerator at a time at the precisions it lists, priced at
    the catalogue's list prices, SLOs checked; cheapest meeting row first."""
    frames = []
    for h in hardware:
        precisions = [p for p in ("fp16", "fp8") if p in CAT.hardware[h].peak_flop_per_s]
        opts = {"tp": [1, 2, 4, 8], "pp": [1], "batch_sizes": BATCHES, "input_tokens": 1024}
        opts |= {"output_tokens": 256, "precisions": precisions, **kw}
        frames.append(engine.serve_sweep("Llama-3.1-70B", h, **opts))
    df = pd.concat(frames, ignore_index=True)
    price = df["hardware"].astype(str).map(lambda h: CAT.hardware[h].price_per_hour_usd)
    df["cost"] = price * df["devices"] / (df["output_tokens_per_s"] * 3600) * 1e6
    ok = df["fits_in_memory"] & (df["ttft_ms"] <= ttft) & (df["tpot_ms"] <= tpot)
    return df[ok].sort_values("cost", kind="stable").reset_index(drop=True)


def test_must_show_link_draws_one_front_per_accelerator_and_ranks_by_cost():
    at = open_page(MUST_SHOW)
    fig = figure(at)
    fronts = [t["name"] for t in fig["data"] if t["mode"] == "lines+markers"]
    # A100 lists no fp8 peak: it gets an fp16 front only (and a note says so)
    assert fronts == [
        "NVIDIA A100 80GB SXM fp16",
        "NVIDIA H100 SXM fp16",
        "NVIDIA H100 SXM fp8",
        "AMD Instinct MI300X fp16",
        "AMD Instinct MI300X fp8",
    ]
    # fronts SVG (WebGL draws hollow markers as nothing), the few dominated points SVG too (no
    # WebGL context to start), the error band shaded under the fronts as SVG lines
    assert {t["mode"]: t["type"] for t in fig["data"]} == {
        "lines+markers": "scatter",
        "markers": "scatter",
        "lines": "scatter",
    }
    assert [s["x0"] for s in fig["layout"]["shapes"]] == pytest.approx([20.0])  # 1000 / 50 ms
    assert "fp8 on NVIDIA A100 80GB SXM: no fp8 peak in the catalogue" in text(at.caption)
    table = at.dataframe[0].value
    best = by_hand().iloc[0]
    first = table.iloc[0]
    assert first["Cost (USD per 1M output tokens)"] == fmt(best["cost"])
    assert first["Accelerator"] == CAT.hardware[str(best["hardware"])].name
    assert (first["Devices"], first["Batch (sequences)"]) == (best["devices"], best["batch_size"])
    assert first["Precision"] == best["precision"] and first["TTFT"] == fmt(
        best["ttft_ms"] / 1e3, "s"
    )
    costs = [float(c) for c in table["Cost (USD per 1M output tokens)"]]
    assert costs == sorted(costs) and len(table) == min(100, len(by_hand()))
    words = text(at.markdown)
    assert "**Cheapest (lowest USD per 1M output tokens):** " in words
    assert "**Fastest (most tokens/s per user):** " in words and "least headroom" in words
    assert f"batch {int(best['batch_size']):,}, {best['precision']}" in words


def test_link_is_written_back_in_canonical_form_with_every_default():
    at = open_page(MUST_SHOW)
    assert link(at, "tp") == "1,2,4,8" and link(at, "pp") == "1"
    assert link(at, "precisions") == "fp16,fp8" and link(at, "profile") == "trtllm-1.0"
    assert link(at, "batches") == "1,2,4,8,16,32,64,128,256"
    assert link(at, "min_tokens_per_s_per_user") == "none"
    # every chosen accelerator's price is recorded: the catalogue's dated list prices
    chips = [CAT.hardware[h] for h in ("H100", "A100", "MI300X")]
    assert link(at, "prices") == ",".join(f"{h.id}:{h.price_per_hour_usd:g}" for h in chips)
    prices = prices_table(at)
    assert list(prices["Kind"]) == ["list price"] * 3
    assert list(prices["Date"]) == [h.price_date for h in chips]
    assert list(prices["Source"]) == [h.price_source for h in chips]


def test_hostile_values_warn_and_heal_the_link():
    bad = {"ttft_ms": "-5", "tp": "abc", "prices": "H100:abc", "profile": "bogus"}
    at = open_page(MUST_SHOW | bad | {"model": "ResNet-50", "precisions": "fp7"})
    warned = text(at.warning)
    for name in ("ttft_ms", "tp", "prices", "profile", "model", "precisions"):
        assert f"ignored '{name}'" in warned
    assert "ResNet-50 has no shapes" in warned
    assert link(at, "ttft_ms") == "2000" and link(at, "tp") == "1,2,4,8"
    assert link(at, "model") == "Llama-3.1-70B" and link(at, "profile") == "trtllm-1.0"


def test_slo_widgets_move_the_lines_and_the_link():
    at = open_page(MUST_SHOW)
    at.number_input(key="plan:tpot_ms").set_value(None).run()
    at.number_input(key="plan:min_tokens_per_s_per_user").set_value(40.0).run()
    assert link(at, "tpot_ms") == "none" and link(at, "min_tokens_per_s_per_user") == "40"
    assert [s["x0"] for s in figure(at)["layout"]["shapes"]] == pytest.approx([40.0])
    at.number_input(key="plan:ttft_ms").set_value(500.0).run()
    table = at.dataframe[0].value
    expected = by_hand(ttft=500.0, tpot=np.inf)
    expected = expected[expected["tokens_per_s_per_user"] >= 40.0]
    assert table.iloc[0]["Cost (USD per 1M output tokens)"] == fmt(expected.iloc[0]["cost"])


def test_impossible_tpot_says_by_how_much_it_is_missed():
    at = open_page(MUST_SHOW | {"tpot_ms": "1"})
    fastest = by_hand(ttft=np.inf, tpot=np.inf)["tpot_ms"].min()
    # e.g. best TPOT 4.26 ms against 1 ms: every configuration misses it by at least 3.26 ms
    assert f"misses TPOT ≤ 1 ms by at least {fmt((fastest - 1) / 1e3, 's')}" in text(at.warning)
    assert "Cheapest" not in text(at.markdown)


def test_nothing_fits_says_so():
    query = {"model": "Llama-3.1-405B", "hardware": "L4", "tp": "1", "precisions": "fp16"}
    at = open_page(query)
    assert "Nothing fits" in text(at.warning)


def test_grid_inputs_tp_pp_precisions_batches_and_hardware():
    at = open_page(MUST_SHOW)
    at.text_input(key="plan:tp").input("3,8").run()
    assert "TP 3: does not divide Llama-3.1-70B's 64 attention heads" in text(at.caption)
    at.text_input(key="plan:pp").input("1,2").run()
    at.multiselect(key="plan:precisions").set_value(["fp16"]).run()
    at.text_input(key="plan:batches").input("1..4").run()
    at.multiselect(key="plan:hardware").set_value(["H100"]).run()
    assert not at.exception
    # 1 accelerator × TP {8} × PP {1, 2} × fp16 × batches 1..4 = 8 configurations
    assert "8 configurations" in text(at.caption)
    assert link(at, "tp") == "3,8" and link(at, "pp") == "1,2" and link(at, "batches") == "1..4"
    price = CAT.hardware["H100"].price_per_hour_usd
    assert link(at, "hardware") == "H100" and link(at, "prices") == f"H100:{price:g}"
    at.text_input(key="plan:tp").input("x").run()
    assert "Tensor-parallel degrees (TP) not used" in text(at.error)


def test_editing_a_price_changes_the_cost_and_the_link():
    at = open_page(MUST_SHOW | {"hardware": "H100", "precisions": "fp16"})
    before = at.dataframe[0].value.iloc[0]
    doubled = 2 * CAT.hardware["H100"].price_per_hour_usd
    at.number_input(key="plan:price.H100").set_value(doubled).run()
    after = at.dataframe[0].value.iloc[0]
    assert float(after["Cost (USD per 1M output tokens)"]) == pytest.approx(
        2 * float(before["Cost (USD per 1M output tokens)"]), rel=0.01
    )
    assert link(at, "prices") == f"H100:{doubled:g}"
    assert prices_table(at).iloc[0]["Kind"] == "set on this page"
    at.number_input(key="plan:price.H100").set_value(None).run()
    assert link(at, "prices") == "H100:none"
    assert "No chosen accelerator has a price" in text(at.info)


def test_profile_and_assumption_overrides_reach_the_engine_and_the_link():
    at = open_page(MUST_SHOW | {"hardware": "H100"})
    at.selectbox(key="plan:profile").set_value("trtllm").run()
    assert "profile trtllm" in text(at.caption) and link(at, "profile") == "trtllm"
    at.number_input(key="plan:efficiency").set_value(0.3).run()
    assert link(at, "efficiency") == "0.3"
    expected = by_hand(hardware=("H100",), profile="trtllm", efficiency=0.3)
    first = at.dataframe[0].value.iloc[0]
    assert first["Cost (USD per 1M output tokens)"] == fmt(expected.iloc[0]["cost"])


def test_too_big_a_grid_is_refused_before_any_work():
    big = {"batches": "1..4096", "tp": "1,2,4,8", "pp": "1,2,4", "precisions": "fp16,fp8"}
    at = open_page(MUST_SHOW | big)
    # 3 accelerators: (2 + 1 + 2) precisions × 4 TP × 3 PP × 4,096 batches = 245,760 rows
    assert "The grid has 245,760 configurations" in text(at.error)


def test_an_empty_grid_explains_itself():
    at = open_page(MUST_SHOW | {"hardware": "A100", "precisions": "fp8"})
    assert "The grid is empty" in text(at.warning)


def test_model_and_token_widgets_reach_the_sweep_and_the_link():
    at = open_page(MUST_SHOW | {"hardware": "H100", "precisions": "fp16"})
    at.selectbox(key="plan:model").set_value("Llama-3.1-8B").run()
    at.number_input(key="plan:input_tokens").set_value(4096).run()
    at.number_input(key="plan:output_tokens").set_value(512).run()
    assert link(at, "model") == "Llama-3.1-8B"
    assert (link(at, "input_tokens"), link(at, "output_tokens")) == ("4096", "512")
    assert "4,096 input + 512 output tokens per request" in text(at.caption)
    opts = {"tp": [1, 2, 4, 8], "batch_sizes": BATCHES, "input_tokens": 4096}
    df = engine.serve_sweep("Llama-3.1-8B", "H100", output_tokens=512, **opts)
    ok = df[df["fits_in_memory"] & (df["ttft_ms"] <= 2000) & (df["tpot_ms"] <= 50)]
    price = CAT.hardware["H100"].price_per_hour_usd
    cost = price * ok["devices"] / (ok["output_tokens_per_s"] * 3600) * 1e6
    assert at.dataframe[0].value.iloc[0]["Cost (USD per 1M output tokens)"] == fmt(cost.min())


def test_the_first_render_holds_the_chart_and_no_table_until_a_section_is_opened():
    # a table in the first render delays a fresh browser's first chart; the
    # ranking, the under-load section and the prices wait for a click, the CSV does not
    at = open_page(MUST_SHOW, opened=False)
    assert len(at.get("plotly_chart")) == 1 and not at.dataframe
    assert [e.label for e in at.main.expander] == [
        "Configurations that meet the SLOs, cheapest first",
        "Under load: replicas and cost for your traffic",
        "Cost against latency: the Pareto front",
        "Prices",
        "🔗 Share this scenario",
    ]
    assert "configurations meet the SLOs" in text(at.caption)  # the count, outside
    assert at.get("download_button")  # the CSV of every configuration, outside
    at.session_state[section_key("plan", "table")] = True
    at.run()
    assert len(at.dataframe) == 1  # the ranking alone: the others stay closed
    assert at.dataframe[0].value.iloc[0]["Cost (USD per 1M output tokens)"] == fmt(
        by_hand().iloc[0]["cost"]
    )


def test_an_old_link_with_int4_plans_w4a16_with_the_note():
    at = open_page(MUST_SHOW | {"hardware": "H100", "precisions": "fp16,int4"})
    assert at.multiselect(key="plan:precisions").value == ["fp16", "w4a16"]
    assert "int4 is read as w4a16" in text(at.warning)
    assert link(at, "precisions") == "fp16,w4a16"


def test_a_format_a_chip_lacks_is_left_out_and_said():
    at = open_page(MUST_SHOW | {"hardware": "H100,B200", "precisions": "nvfp4"})
    assert "nvfp4 on NVIDIA H100 SXM: no nvfp4 peak in the catalogue" in text(at.caption)
    assert not at.exception


def test_the_dequantisation_cost_of_w4a16_is_an_override_on_the_page():
    query = {"hardware": "H100", "precisions": "w4a16", "dequant_overhead": "1"}
    at = open_page(MUST_SHOW | query)
    assert at.number_input(key="plan:dequant_overhead").value == 1.0
    assert float(link(at, "dequant_overhead")) == 1.0
    expected = by_hand(hardware=("H100",), precisions=["w4a16"], dequant_overhead=1.0)
    first = at.dataframe[0].value.iloc[0]
    assert first["Cost (USD per 1M output tokens)"] == fmt(expected.iloc[0]["cost"])
    # the cheapest rows run large, compute-bound batches: a dearer dequantisation costs more
    assert (
        expected.iloc[0]["cost"] > by_hand(hardware=("H100",), precisions=["w4a16"]).iloc[0]["cost"]
    )
