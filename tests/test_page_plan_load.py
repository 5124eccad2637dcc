"""AppTest tests of the planner's "Under load" section (ui/plan/under_load.py on pages/plan.py).

Expected figures come from `engine.load_plan` run here on the planner's deployments (each
accelerator at the precisions it lists), never typed in: a row per deployment, the best one's
max rate, replicas and cost, `target_rate` from a link reaching its field and the link, the
simulator's check beside the fast path's figure, the link to /load and the CSV's columns.
"""

from __future__ import annotations

import io
import math
from urllib.parse import parse_qs

import pandas as pd
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import ROOT
from ui.core.frame import section_key
from ui.plan import grid as pg
from ui.plan import under_load as pl
from ui.plan import view as pv
from ui.widgets import fleets as uw_fleets
from ui.words.format import fmt

PAGE = "pages/plan.py"
DEFAULT = {"model": "Llama-3.1-70B", "hardware": "H100,A100,MI300X", "input_tokens": "1024"}
DEFAULT |= {"output_tokens": "256", "ttft_ms": "2000", "tpot_ms": "50"}
CAT = engine.load_catalog(use_env=False)


def open_page(query: dict[str, str], opened: bool = True) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(PAGE)
    at.query_params.update(query)
    for section in pv.SECTIONS if opened else ():  # drawn only while open: the user opened them
        at.session_state[section_key("plan", section)] = True
    at.run()
    assert not at.exception, at.exception
    return at


def section_table(at: AppTest) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "Replicas" in d.value.columns)


def text(elements) -> str:
    return " ".join(e.value for e in elements).replace("\\", "")


def by_hand(target: float = 10.0, hardware=("H100", "A100", "MI300X")) -> pd.DataFrame:
    """The planner's deployments, each accelerator at the precisions it lists, at the
    catalogue's list prices; ranked by cost at the target, then GPUs."""
    frames = []
    for h in hardware:
        precisions = [p for p in ("fp16", "fp8") if p in CAT.hardware[h].peak_flop_per_s]
        frames.append(
            engine.load_plan(
                "Llama-3.1-70B",
                h,
                tp=[1, 2, 4, 8],
                precisions=precisions,
                input_tokens=1024,
                output_tokens=256,
                slo_ttft_ms_p90=2000.0,
                slo_tpot_ms_p99=50.0,
                target_rate=target,
            )
        )
    return pl.ranked(pd.concat(frames, ignore_index=True))


def test_the_default_scenario_has_a_row_per_deployment_and_a_finite_max_rate():
    at = open_page(DEFAULT)
    assert "Under load: replicas and cost for your traffic" in [e.label for e in at.expander]
    table, expected = section_table(at), by_hand()
    # 3 accelerators × TP {1, 2, 4, 8}: H100 and MI300X at fp16 and fp8, A100 at fp16 only
    assert len(table) == len(expected) == 20
    best = expected.iloc[0]
    assert 0 < best["max_rate_per_s"] < math.inf
    first = table.iloc[0]
    assert first["Max rate per replica (requests/s)"] == fmt(best["max_rate_per_s"])
    assert first["Replicas"] == fmt(best["replicas"]) and first["GPUs"] == fmt(best["gpus"])
    # cost at the target: GPUs × $/h ÷ (3,600 s/h × 10 requests/s × 256 tokens) × 10⁶
    price = CAT.hardware[best["hardware"]].price_per_hour_usd
    cost = best["gpus"] * price / (3600 * 10.0 * 256) * 1e6
    assert first["Cost at the target (USD per 1M output tokens)"] == fmt(cost)
    band = engine.error_band(engine.get_profile(engine.DEFAULT_PROFILE))
    assert set(table["Typical error"]) == {f"±{fmt(band.pct, '%')}"}
    # TP 1 at fp16 holds no KV cache on an 80 GB device: last, with why
    assert "does not fit: the weights leave no room for a KV cache" in set(table["Why no max rate"])
    words = text(at.markdown)
    assert "Best under load:" in words and f"for {fmt(10.0, 'requests/s')}" in words
    captions = text(at.caption)
    assert "p90 TTFT (2 s)" in captions and "p99 TPOT (50 ms)" in captions


def test_target_rate_from_a_link_reaches_the_field_the_replicas_and_the_link():
    at = open_page(DEFAULT | {"hardware": "H100", "precisions": "fp8", "target_rate": "25"})
    assert at.number_input(key="plan:target_rate").value == 25.0
    assert at.query_params["target_rate"] in ("25", ["25"])
    expected = by_hand(25.0, ("H100",))
    expected = expected[expected["precision"] == "fp8"].reset_index(drop=True)
    first = section_table(at).iloc[0]
    assert first["Replicas"] == fmt(expected.iloc[0]["replicas"])
    assert expected.iloc[0]["replicas"] == math.ceil(25.0 / expected.iloc[0]["max_rate_per_s"])
    at.number_input(key="plan:target_rate").set_value(50.0).run()
    assert at.query_params["target_rate"] in ("50", ["50"])
    assert f"at {fmt(50.0, 'requests/s')}" in text(at.caption)
    # the link to /load carries the best deployment, the percentile SLOs, price and target
    link = next(e for e in at.get("page_link") if e.proto.label.startswith("Serve the best"))
    query = {k: v[-1] for k, v in parse_qs(link.proto.query_string).items()}
    assert query["target_rate"] == "50" and query["slo_ttft_ms_p90"] == "2000"
    assert query["slo_tpot_ms_p99"] == "50" and query["hardware"] == "H100"
    assert (
        query["precision"] == "fp8"
        and query["price"] == f"{CAT.hardware['H100'].price_per_hour_usd:g}"
    )


def test_the_simulator_checks_the_best_deployment_beside_the_fast_path():
    at = open_page(DEFAULT | {"hardware": "H100", "precisions": "fp8", "tp": "2"})
    assert not [d for d in at.dataframe if "Simulator (engine.max_rate)" in d.value.columns]
    at.button(key="plan_load_check").click().run()
    assert not at.exception
    check = next(d.value for d in at.dataframe if "Simulator (engine.max_rate)" in d.value.columns)
    m = engine.max_rate(
        "Llama-3.1-70B",
        "H100",
        tp=2,
        precision="fp8",
        input_tokens=1024,
        output_tokens=256,
        slo_ttft_ms_p90=2000.0,
        slo_tpot_ms_p99=50.0,
        target_rate=10.0,
        requests=pl.SIM_REQUESTS,
    )
    rows = dict(zip(check["Figure"], check["Simulator (engine.max_rate)"], strict=True))
    assert rows["Max rate per replica (requests/s)"] == fmt(m.max_rate_per_s)
    assert rows["Replicas for the target"] == fmt(m.plan["replicas"])
    fast = dict(zip(check["Figure"], check["Fast path (analytic)"], strict=True))
    assert fast["Max rate per replica (requests/s)"] == fmt(m.analytic_max_rate_per_s)
    # beside it, the same 4 GPUs as 2 aggregated TP2 replicas and as 1 prefill + 1 decode TP2
    # worker, both at twice the simulator's max rate: engine.serve_load's figures on each
    side = next(d.value for d in at.dataframe if "Picked" in d.value.columns)
    d = engine.Deployment("Llama-3.1-70B", "H100", tp=2, precision="fp8")
    fleets = [
        engine.Replicas(d, 2, "least-outstanding"),
        engine.Disaggregated(prefill=d, decode=d, router="least-outstanding"),
    ]
    w = engine.Workload(
        input_tokens=1024,
        output_tokens=256,
        arrivals=engine.OpenLoop(2.0 * m.max_rate_per_s),
        requests=pl.SIM_REQUESTS,
    )
    slo = engine.SLO(ttft_ms=2000.0, tpot_ms=50.0)
    runs = [engine.serve_load(f, w, slo=slo) for f in fleets]
    assert list(side["GPUs"]) == [4, 4]
    assert list(side["TTFT p90"]) == [fmt(r["ttft_ms_p90"] * 1e-3, "s") for r in runs]
    assert list(side["TPOT p99"]) == [fmt(r["tpot_ms_p99"] * 1e-3, "s") for r in runs]
    assert runs[0]["kv_transfer_ms_mean"] in (None, 0.0) and runs[1]["kv_transfer_ms_mean"] > 0
    meets = [r["ttft_ms_p90"] <= 2000.0 and r["tpot_ms_p99"] <= 50.0 for r in runs]
    assert list(side["Meets the SLOs"]) == ["yes" if x else "no" for x in meets]
    goodput = [r["goodput_requests_per_s"] if x else -1.0 for r, x in zip(runs, meets, strict=True)]
    picked = [x and g == max(goodput) for x, g in zip(meets, goodput, strict=True)]
    assert list(side["Picked"]) == ["yes" if x else "no" for x in picked]
    assert f"Both at twice the simulator's max rate, {fmt(2.0 * m.max_rate_per_s)}" in text(
        at.caption
    )
    assert at.download_button(key="plan_fleet_csv").label == "Download CSV"
    profile = engine.get_profile(engine.DEFAULT_PROFILE)
    arch = CAT.models["Llama-3.1-70B"].arch
    band = pg.Band(profile=profile, arch=arch, hardware=("H100",), precisions=("fp8",))
    named = [("aggregated", runs[0]), ("disaggregated", runs[1])]
    frame = pl.fleet_csv_frame(uw_fleets.rows(named, slo), band=band, profile=profile.name)
    csv = pd.read_csv(io.StringIO(engine.to_csv(frame)))
    assert list(csv["deployment"]) == ["aggregated", "disaggregated"]
    assert list(csv["devices_count"]) == [4, 4] and list(csv["picked"]) == picked
    assert {"ttft_ms_p90", "tpot_ms_p99", "kv_transfer_ms_mean", "error_band_pct"} <= set(csv)
    assert set(csv["profile"]) == {profile.name}


def test_the_check_reports_its_progress_from_this_process(monkeypatch):
    heard, real = [], engine.max_rate

    def spy(*args, execution=None, **kw):
        heard.append(execution)
        return real(*args, execution=execution, **kw)

    monkeypatch.setattr(engine, "max_rate", spy)
    at = open_page(DEFAULT | {"hardware": "H100", "precisions": "fp8", "tp": "4"})
    at.button(key="plan_load_check").click().run()
    assert not at.exception
    (execution,) = heard
    assert execution.workers == 1 and callable(execution.progress)  # a bar fed by a callable
    assert not at.get("progress")  # emptied once the search is done


def test_the_csv_has_every_deployment_with_units_and_the_error_band():
    table = by_hand()
    profile = engine.get_profile(engine.DEFAULT_PROFILE)
    arch = CAT.models["Llama-3.1-70B"].arch
    band = pg.Band(
        profile=profile, arch=arch, hardware=("H100", "A100", "MI300X"), precisions=("fp16", "fp8")
    )
    csv = pd.read_csv(io.StringIO(pl.csv_text(table, band)))
    assert len(csv) == 20 and list(csv.columns[:4]) == [
        "cost_per_million_output_tokens_usd",
        "hardware",
        "precision",
        "tp_degree",
    ]
    for column in (
        "replicas_count",
        "gpus_count",
        "devices_count",
        "max_rate_per_s",
        "saturation_rate_per_s",
        "target_rate_per_s",
        "price_per_hour_usd",
        "output_tokens_per_s_per_replica",
        "ttft_ms_p90",
        "tpot_ms_p99",
        "slo_ttft_ms_p90",
        "slo_tpot_ms_p99",
        "fits_in_memory",
        "reason",
        "error_band_pct",
        "error_band_basis",
        "off_calibrated_ground",
        "profile",
    ):
        assert column in csv.columns, column
    assert (csv["profile"] == engine.DEFAULT_PROFILE).all()
    assert csv["error_band_pct"].iloc[0] == engine.error_band(profile).pct


def test_no_deployment_within_the_slos_says_so():
    at = open_page(DEFAULT | {"hardware": "H100", "precisions": "fp8", "ttft_ms": "1"})
    assert "No deployment sustains any rate within these SLOs" in text(at.warning)
    assert not [b for b in at.button if b.key == "plan_load_check"]
