"""AppTest tests of the serving-under-load page (pages/load.py), opened from the entry file as a
browser routes it. Every expected number comes from the engine (`engine.serve_load`,
`engine.max_rate`, `engine.load_grid`, `engine.error_band`), formatted as the page formats it.
"""

from __future__ import annotations

import time
from urllib.parse import parse_qs

import pytest
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import ROOT, chart_spec
from ui.core.frame import section_key
from ui.load import link as ll
from ui.load import run as lr
from ui.widgets import page_links
from ui.words.format import fmt, pct

PAGE = "pages/load.py"
DEFAULT = {"tp": 4, "profile": "trtllm-1.0", "input_tokens": 1500, "output_tokens": 300}
SMALL = {"model": "Llama-3.1-8B", "hardware": "H100", "tp": "1", "profile": "tutorial"}
SMALL |= {"input_tokens": "512", "output_tokens": "128", "requests": "400"}


TABLES = {section_key("load", "tables"): True}  # the tables' lazy expander, opened


def open_page(
    query: dict[str, str] | None = None, page: str = PAGE, state: dict | None = None
) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.switch_page(page)
    at.query_params.update(query or {})
    for key, value in (state or {}).items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def text(elements) -> str:
    return " ".join(str(e.value) for e in elements).replace("\\", "")


def cards(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def charts(at: AppTest) -> dict[str, dict]:
    return {c.proto.id.split("-")[-1]: chart_spec(c) for c in at.get("plotly_chart")}


def url(at: AppTest, key: str) -> str:
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def names(fig: dict) -> list[str]:
    return [t.get("name", "") for t in fig["data"]]


def test_defaults_show_the_engines_run_search_and_curves():
    at = open_page(state=TABLES)
    r = engine.serve_load("Llama-3.1-70B", "H100", rate=3.0, requests=2000, **DEFAULT)
    m = engine.max_rate("Llama-3.1-70B", "H100", target_rate=20.0, **DEFAULT)
    got = cards(at)
    assert got["TTFT p90"] == fmt(r["ttft_ms_p90"] * 1e-3, "s")
    assert got["TPOT p99"] == fmt(r["tpot_ms_p99"] * 1e-3, "s")
    assert got["Served (requests/s)"] == fmt(r["requests_per_s"])
    assert got["Max rate within SLOs (requests/s)"] == fmt(m.max_rate_per_s)
    plan = m.as_dict()
    assert got["Replicas for 20 requests/s"] == f"{plan['replicas']:,}"
    assert got["Cost per 1M output tokens (USD)"] == fmt(plan["cost_per_million_output_tokens_usd"])
    assert not at.error and not at.warning
    shown = text(at.caption)
    assert "TensorRT-LLM" in shown and "max_batched_tokens 8,192" in shown
    # trtllm-1.0.toml: the larger of LOMO 20.80 % and LOAO 23.37 % on its 112 rows
    assert "Error band of profile trtllm-1.0: ±21.7%" in shown
    assert url(at, "mode") == "open" and url(at, "profile") == "trtllm-1.0" and url(at, "tp") == "4"
    for key in ("load_curve_csv", "load_points_csv", "load_search_csv", "load_requests_csv"):
        assert at.download_button(key=key).label.startswith("Download")
    assert "Chrome trace" in at.download_button(key="load_chrome_trace").label


def test_the_charts_mark_the_slo_the_knee_and_saturation_and_draw_no_unstable_rate():
    at = open_page()
    # the tables wait in their expander, closed: no data grid before the first chart paints
    assert not at.dataframe
    title = "Tables: the curve, the simulated rates and the search, with their CSVs"
    assert title in [e.label for e in at.expander]
    figs = charts(at)
    assert {"load_ttft", "load_tpot", "load_throughput", "load_timeline"} <= set(figs)
    grid = engine.load_grid(
        ["Llama-3.1-70B"],
        ["H100"],
        rates=[1.0],
        input_tokens=1500,
        output_tokens=300,
        tp=4,
        profile="trtllm",
    )
    top = float(grid["saturation_rate_per_s"].iloc[0])
    ttft = figs["load_ttft"]
    legend = names(ttft)
    assert "SLO p90 ≤ 2 s" in legend and "p50 ± 21.7% (error)" in legend
    assert f"saturation {fmt(top)}/s" in legend
    assert any(n.startswith("max rate ") for n in legend)
    p50 = next(t for t in ttft["data"] if t["name"] == "p50")
    assert max(p50["x"]) <= top  # nothing past saturation drawn as a steady state
    assert all(v < 1e9 for v in p50["y"])
    served = next(t for t in figs["load_throughput"]["data"] if t["name"] == "goodput (simulated)")
    assert len(served["x"]) == len(lr.CHECK_FRACTIONS)
    # the checks run the page's 2,000 requests (at most CHECK_REQUESTS), the search 1,000 a run:
    # at 0.85 of saturation (6.02 requests/s) 2,000 requests serve 5.80 with a steady queue,
    # where 1,000 read 5.32 and a growing one (the window opens before the server has filled)
    w = engine.Workload(input_tokens=1500, output_tokens=300, arrivals=engine.OpenLoop(1.0))
    assert lr.sim_requests(w) == 2000 and lr.search_workload(w).requests == 1000
    simulated = next(
        t for t in figs["load_throughput"]["data"] if t["name"] == "served (simulated)"
    )
    x, y = simulated["x"][3], simulated["y"][3]
    assert x == pytest.approx(0.85 * top) and y == pytest.approx(x, rel=0.05)
    p90 = next(t for t in ttft["data"] if t["name"] == "simulated p90")
    assert any(v == pytest.approx(x) for v in p90["x"])  # its latencies drawn: a steady run
    timeline = figs["load_timeline"]
    assert {"running", "queued", "KV cache in use"} <= set(names(timeline))


def test_a_link_reproduces_a_closed_loop_with_an_edited_scheduler():
    query = SMALL | {"mode": "closed", "concurrency": "16", "max_num_seqs": "64"}
    query |= {"chunked_prefill": "off", "slo_ttft_ms_p90": "500", "price": "3.5"}
    at = open_page(query)
    for name, value in query.items():
        assert url(at, name) == value, name
    assert at.session_state["load:max_num_seqs"] == 64
    assert at.selectbox(key="load:chunked_prefill").value == "off"
    shown = text(at.caption)
    assert "16 closed-loop clients" in shown and "max_num_seqs 64" in shown
    assert "chunked prefill off" in shown
    r = engine.serve_load(
        "Llama-3.1-8B",
        "H100",
        input_tokens=512,
        output_tokens=128,
        concurrency=16,
        profile="tutorial",  # SMALL's profile
        requests=400,
        max_num_seqs=64,
        chunked_prefill=False,
        slo_ttft_ms=500.0,
    )
    assert cards(at)["TTFT p90"] == fmt(r["ttft_ms_p90"] * 1e-3, "s")
    assert r["mean_running_requests"] == pytest.approx(16, rel=0.05)  # N clients, N in system
    hw = lr.priced(engine.default_catalog().hardware["H100"], 3.5)
    m = engine.max_rate(
        "Llama-3.1-8B",
        hw,
        profile="tutorial",  # SMALL's profile
        input_tokens=512,
        output_tokens=128,
        slo_ttft_ms_p90=500.0,
        max_num_seqs=64,
        chunked_prefill=False,
        target_rate=20.0,
        requests=400,
    )
    cost = m.as_dict()["cost_per_million_output_tokens_usd"]
    assert cards(at)["Cost per 1M output tokens (USD)"] == fmt(cost)  # at the page's price


def test_bad_link_values_are_named_and_defaults_used():
    at = open_page({"model": "No-Such-LLM", "tp": "0", "mode": "sideways", "rate": "-3"})
    warned = text(at.warning)
    for name in ("model", "tp", "mode", "rate"):
        assert f"ignored '{name}'" in warned
    assert url(at, "model") == "Llama-3.1-70B" and url(at, "mode") == "open"


def test_the_budget_refuses_a_run_too_long_and_says_how_to_narrow_it():
    at = open_page(SMALL | {"requests": "100000", "input_tokens": "4000"})
    refusal = text(at.error)
    assert "more than this page's budget of 1,000,000" in refusal
    assert (
        "Lower the requests (now 100,000;" in refusal
        and "or the input tokens (now 4,000)" in refusal
    )
    figs = charts(at)
    assert "load_timeline" not in figs and {"load_ttft", "load_throughput"} <= set(figs)
    assert "TTFT p90" not in cards(at)  # nothing simulated


HEAVY = {"model": "Llama-3.1-8B", "hardware": "H100", "tp": "1", "mode": "max"}
HEAVY |= {"input_tokens": "1", "output_tokens": "99999", "requests": "54000", "profile": "tutorial"}


def test_the_heavy_link_is_refused_quickly_with_its_figures_and_nothing_simulated(monkeypatch):
    # 54,000 requests of 99,999 output tokens at once: the older estimate (296,042 events)
    # let it through and it took 44-46 s of CPU; its bound is hundreds of millions of events
    calls = []
    for name in ("serve_load", "max_rate"):
        monkeypatch.setattr(engine, name, lambda *a, _name=name, **kw: calls.append(_name))
    start = time.process_time()
    at = open_page(HEAVY)
    took = time.process_time() - start
    d = engine.Deployment("Llama-3.1-8B", "H100", tp=1, profile="tutorial")
    w = engine.Workload(
        input_tokens=1, output_tokens=99_999, arrivals=engine.MaxThroughput(), requests=54_000
    )
    grid = lr.curve(d=d, sched=engine.Scheduler(), w=w, slo=engine.SLO())
    counts = lr.events(d=d, sched=engine.Scheduler(), w=w, top=lr.saturation(grid))
    total = sum(counts.values())
    refusal = text(at.error)
    assert f"The simulations would take up to {total:,} events" in refusal
    assert f"run {counts['run']:,}, checks {counts['checks']:,}" in refusal
    assert f"up to {lr.seconds(total)} of CPU" in refusal
    assert "more than this page's budget of 1,000,000" in refusal
    assert "or the output tokens (now 99,999)" in refusal
    assert not calls  # nothing simulated: no run, no check, no search
    assert {"load_ttft", "load_tpot", "load_throughput"} <= set(charts(at))  # the fast path
    assert took < 15


def test_tables_read_true_and_false_in_the_readers_language_and_show_no_figure_past_saturation():
    at = open_page(SMALL | {"requests": "200", "lang": "zh"}, state=TABLES)
    tables = [t.value for t in at.dataframe]
    curve = next(t for t in tables if "稳态" in t)
    assert set(curve["稳态"]) == {"是", "否"}  # not 1 and 0
    past = curve["稳态"] == "否"
    assert set(curve.loc[past, "TTFT p50"]) == {"—"} and set(curve.loc[past, "TPOT p99"]) == {"—"}
    assert "—" not in set(curve.loc[~past, "TTFT p50"])
    points = next(t for t in tables if "队列增长" in t)
    assert set(points["队列增长"]) <= {"是", "否"}


def test_a_run_whose_requests_all_finish_at_once_shows_its_throughput():
    # 300 requests of 16 + 2 tokens at once on TensorRT-LLM's scheduler (2,048 a step): the
    # measured requests complete in one step; requests/s and tokens/s were NaN, shown "—"
    query = SMALL | {"profile": "trtllm", "mode": "max", "requests": "300"}
    at = open_page(query | {"input_tokens": "16", "output_tokens": "2"})
    r = engine.serve_load(
        "Llama-3.1-8B",
        "H100",
        input_tokens=16,
        output_tokens=2,
        concurrency="max",
        requests=300,
        profile="trtllm",
    )
    got = cards(at)
    assert got["Served (requests/s)"] == fmt(r["requests_per_s"]) != "—"
    assert got["Goodput (requests/s)"] == fmt(r["goodput_requests_per_s"]) != "—"
    assert got["Output tokens/s per GPU"] == fmt(r["output_tokens_per_s_per_gpu"]) != "—"
    assert got["KV pool in use"] != "—"


def test_a_deployment_that_does_not_fit_or_splits_badly_says_why():
    at = open_page({"tp": "1", "hardware": "A100"})
    assert text(at.error).startswith("Does not fit: the weights leave no room for a KV cache")
    assert not at.metric
    at = open_page({"tp": "3"})
    assert "tp 3 does not divide Llama-3.1-70B's 64 attention heads" in text(at.error)


def test_an_unmeasured_band_and_off_ground_scenarios_say_so():
    at = open_page(SMALL | {"profile": "vllm", "requests": "200"})
    assert "Error band of profile vllm: not measured" in text(at.caption)
    assert "error not measured" in charts(at)["load_ttft"]["layout"]["title"]["text"]
    assert "p50 ±" not in " ".join(names(charts(at)["load_ttft"]))
    why = engine.off_ground(
        profile=engine.get_profile("vllm"),
        arch=engine.default_catalog().models["Llama-3.1-8B"].arch,
        hardware="H100",
        precision="fp16",
    )
    assert why and all(str(w).replace("\\", "") in text(at.info) for w in why)
    assert pct(0.136) == "13.6%"


def test_decode_and_plan_link_here_with_their_scenario():
    declared = ll.declare(engine.default_catalog())
    assert set(page_links.LOAD_NAMES) <= {p.name for p in declared}
    at = open_page({"model": "Llama-3.1-70B", "hardware": "H100", "tp": "2"}, "pages/decode.py")
    link = next(e for e in at.get("page_link") if e.proto.page == "load" and e.proto.query_string)
    query = {k: v[-1] for k, v in parse_qs(link.proto.query_string).items()}
    assert query["model"] == "Llama-3.1-70B" and query["hardware"] == "H100"
    assert query["tp"] == "2" and query["profile"] == "trtllm-1.0"  # /decode's default
    assert query["input_tokens"] == "1024" and query["output_tokens"] == "256"
    for name, text_value in query.items():
        declared[name].read(text_value)  # /load reads every value
    at = open_page({"model": "Llama-3.1-8B", "hardware": "H100,A100"}, "pages/plan.py")
    link = next(e for e in at.get("page_link") if e.proto.page == "load" and e.proto.query_string)
    query = {k: v[-1] for k, v in parse_qs(link.proto.query_string).items()}
    assert query["model"] == "Llama-3.1-8B" and query["hardware"] in ("H100", "A100")
    assert {"tp", "pp", "precision", "input_tokens"} <= set(query)


def test_an_old_link_with_int4_runs_w4a16_with_the_note_and_an_nvfp4_cache_on_b200():
    at = open_page(SMALL | {"precision": "int4", "kv_precision": "FP4", "hardware": "B200"})
    assert at.selectbox(key="load:precision").value == "w4a16"
    assert at.selectbox(key="load:kv_precision").value == "nvfp4"
    assert "int4 is read as w4a16" in text(at.warning) and "fp4 is read as nvfp4" in text(
        at.warning
    )
    assert url(at, "precision") == "w4a16" and url(at, "kv_precision") == "nvfp4"
    r = engine.serve_load(
        "Llama-3.1-8B",
        "B200",
        profile="tutorial",  # SMALL's profile
        precision="w4a16",
        kv_precision="nvfp4",
        input_tokens=512,
        output_tokens=128,
        rate=3.0,
        requests=400,
    )
    assert cards(at)["TTFT p90"] == fmt(r["ttft_ms_p90"] * 1e-3, "s")
    refused = open_page(SMALL | {"kv_precision": "nvfp4"})  # H100: no FP4 tensor cores
    assert "nvfp4 KV cache needs FP4 tensor cores" in text(refused.error)
