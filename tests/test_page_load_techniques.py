"""AppTest tests of /load's serving techniques (pages/load.py, ui/load/inputs.py): speculative
decoding and a shared prefix from the link, the cards and summary rows they add, the chart of
tokens/s per user with and without speculation, and refusals beside the fields. Every number
comes from the engine."""

from __future__ import annotations

import pytest

import engine
from tests.test_page_load import SMALL, TABLES, cards, charts, open_page, text, url
from ui.load import view as lv
from ui.words.format import fmt, pct

SPEC = SMALL | {"mode": "closed", "concurrency": "1", "requests": "100", "spec_method": "eagle"}


def test_speculation_from_the_link_shows_its_accepted_tokens_and_where_it_stops_helping():
    at = open_page(SPEC | {"spec_tokens": "3", "spec_acceptance": "0.7"})
    r = engine.serve_load(
        "Llama-3.1-8B",
        "H100",
        profile="tutorial",
        input_tokens=512,
        output_tokens=128,
        concurrency=1,
        requests=100,
        spec_method="eagle",
        spec_tokens=3,
        spec_acceptance=0.7,
    )
    shown = cards(at)
    assert shown["Mean accepted tokens"] == fmt(r["spec_accepted_tokens_mean"]) == fmt(2.533)
    assert shown["TPOT p99"] == fmt(r["tpot_ms_p99"] * 1e-3, "s")
    assert "Speculative decoding against the load" in text(at.subheader)
    fig = charts(at)["load_spec_chart"]
    with_spec, without = fig["data"][0]["y"], fig["data"][1]["y"]
    assert with_spec[0] > 1.33 * without[0]  # one user at the lowest rate: EAGLE helps
    assert "Speculative decoding" in text(at.caption)
    assert "speculative decoding eagle: 3 drafted, 2.53 accepted per pass" in text(at.caption)
    assert url(at, "spec_method") == "eagle"


def test_a_shared_prefix_shows_its_hit_rate():
    query = SMALL | {"mode": "open", "rate": "2", "requests": "200", "input_tokens": "2000"}
    at = open_page(query | {"prefix_tokens": "1500", "prefix_share": "1"}, state=TABLES)
    r = engine.serve_load(
        "Llama-3.1-8B",
        "H100",
        profile="tutorial",
        input_tokens=2000,
        output_tokens=128,
        rate=2.0,
        requests=200,
        prefix_tokens=1500,
    )
    assert cards(at)["Prefix-cache hit rate"] == pct(r["prefix_hit_rate"])
    assert r["prefix_hit_rate"] == pytest.approx(1488 / 2000)
    rows = at.dataframe[-1].value if at.dataframe else None
    assert rows is not None
    assert "load_spec_chart" not in charts(at)  # no speculation: no comparison


def test_bad_settings_are_said_beside_the_fields():
    at = open_page(SPEC | {"spec_method": "eagle", "spec_acceptance": "9"})
    errors = text(at.error)
    assert "spec_acceptance" in errors
    assert "Mean accepted tokens" not in cards(at)  # the setting is left off, said so


def test_the_comparison_frame_by_hand():
    import pandas as pd

    on = pd.DataFrame({"rate_per_s": [1.0, 2.0], "stable": [True, True], "tpot_ms_mean": [2, 8]})
    off = pd.DataFrame({"rate_per_s": [1.0, 2.0], "stable": [True, True], "tpot_ms_mean": [4, 5]})
    frame = lv.speculation_frame(on, off)
    # 1000/2 = 500 against 1000/4 = 250 tokens/s: ×2; then 125 against 200: ×0.625
    assert list(frame["speedup"]) == [2.0, 0.625]
    assert fmt(2.0, "requests/s") in lv.crossing_text(frame)


def test_sessions_from_the_link():
    query = SMALL | {"mode": "open", "rate": "1", "requests": "200", "session_turns": "3"}
    at = open_page(query)
    r = engine.serve_load(
        "Llama-3.1-8B",
        "H100",
        profile="tutorial",
        input_tokens=512,
        output_tokens=128,
        rate=1.0,
        requests=200,
        session_turns=3,
    )
    assert cards(at)["Prefix-cache hit rate"] == pct(r["prefix_hit_rate"])
    assert r["prefix_hit_rate"] > 0.3
    assert url(at, "session_turns") == "3"
