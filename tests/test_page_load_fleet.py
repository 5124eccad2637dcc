"""AppTest of /load's side-by-side aggregated and disaggregated deployments (ui/load/fleet.py):
the table's figures are engine.serve_load's on the same fleets, and bad combinations get a
message, not a stack trace."""

from __future__ import annotations

import dataclasses

import engine
from tests.test_page_load import SMALL, open_page
from ui.widgets import fleets
from ui.words.format import fmt

FLEET = SMALL | {"fleet": "on", "prefill_workers": "1", "decode_workers": "1", "rate": "8"}


def test_the_table_puts_both_fleets_on_the_same_gpus_with_the_engines_figures():
    at = open_page(FLEET)
    table = at.dataframe[-1].value  # the last table on the page
    assert "Aggregated or disaggregated, same GPUs" in [h.value for h in at.subheader]
    assert len(table) == 2
    d = engine.Deployment("Llama-3.1-8B", "H100", tp=1, profile="tutorial")
    w = engine.Workload(input_tokens=512, output_tokens=128, arrivals=engine.OpenLoop(8.0))
    w = dataclasses.replace(w, requests=400)
    chosen = {"prefill_workers": 1, "decode_workers": 1, "prefill_tp": 1, "decode_tp": 1}
    agg, dis = fleets.pair(d, chosen | {"router": "least-outstanding"})
    assert agg.replicas == 2 and dis.devices == 2
    slo = engine.SLO(2000.0, 100.0)
    split = engine.serve_load(dis, w, slo=slo)
    tpot = table.iloc[1][table.columns[4]]
    assert tpot == fmt(split["tpot_ms_p99"] * 1e-3, "s")
    assert table.iloc[1][table.columns[5]] == fmt(split["kv_transfer_ms_mean"] * 1e-3, "s")
    assert table.iloc[0][table.columns[1]] == 2 and table.iloc[1][table.columns[1]] == 2


def test_workers_that_do_not_match_whole_replicas_get_a_message():
    at = open_page(SMALL | {"fleet": "on", "tp": "2", "prefill_tp": "1", "decode_tp": "2"})
    assert not at.exception
    assert any("whole number" in e.value for e in at.error)


def test_the_planner_links_its_best_deployment_to_the_side_by_side_at_twice_its_max_rate():
    from urllib.parse import parse_qs

    from tests.test_page_plan_load import DEFAULT, by_hand
    from tests.test_page_plan_load import open_page as open_plan

    at = open_plan(DEFAULT | {"hardware": "H100", "precisions": "fp8"})
    link = next(e for e in at.get("page_link") if e.proto.label.startswith("Compare it with"))
    query = {k: v[-1] for k, v in parse_qs(link.proto.query_string).items()}
    expected = by_hand(10.0, ("H100",))
    best = expected[expected["precision"] == "fp8"].iloc[0]
    assert query["fleet"] == "on" and query["hardware"] == "H100"
    assert query["prefill_tp"] == query["decode_tp"] == query["tp"] == str(int(best["tp"]))
    assert float(query["rate"]) == float(f"{2 * best['max_rate_per_s']:.6g}")


def test_more_aggregated_replicas_than_the_engine_simulates_are_refused_beside_the_table():
    at = open_page(FLEET | {"prefill_workers": "64", "decode_workers": "64"})
    assert any("The same GPUs as aggregated replicas" in e.value for e in at.error)
