"""The next step from /load, /train and /accuracy (ui/widgets/page_links.py), in AppTest.

Each link is a share-link contract: every name it writes is one its target page declares
(ui/<page>/link.py), and the target opens on it with no warning, showing the scenario it was
given. A profile fitted on /accuracy reaches /load and /plan with its values and its band, and
its numbers there are the engine's for those values (the planner's table equals the one of the
built-in profile whose values it carries).
"""

from __future__ import annotations

from urllib.parse import parse_qs

import pandas as pd
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import ROOT
from ui.accuracy import view as av
from ui.accuracy.link import declare as accuracy_link
from ui.core.frame import section_key
from ui.decode.link import OVERRIDES as DECODE_OVERRIDES
from ui.load.link import declare as load_link
from ui.plan.link import declare as plan_link
from ui.widgets import page_links
from ui.words.format import fmt

CAT = engine.default_catalog()
TEAM = engine.profile_from_values(
    "team", engine.get_profile("trtllm").values(), band_pct=13.6, ground={"hardware": ("H100",)}
)
LOAD = {"model": "Llama-3.1-8B", "hardware": "H100", "tp": "1", "profile": "tutorial"}
LOAD |= {"input_tokens": "512", "output_tokens": "128", "requests": "300"}
LOAD |= {"slo_ttft_ms_p90": "800", "slo_tpot_ms_p99": "40", "target_rate": "7", "price": "3.5"}


def open_page(page: str, query: dict[str, str], state: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.switch_page(f"pages/{page}.py")
    at.query_params.update(query)
    for key, value in (state or {}).items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def links(at: AppTest, page: str) -> list[dict[str, str]]:
    """The queries of the page links to `page` (last value of each name)."""
    found = [e for e in at.get("page_link") if e.proto.page == page and e.proto.query_string]
    return [{k: v[-1] for k, v in parse_qs(e.proto.query_string).items()} for e in found]


def opened_without_warnings(page: str, query: dict[str, str], state=None) -> AppTest:
    """`page` opened on `query`: no exception, no warning, no link value dropped."""
    at = open_page(page, query, state)
    assert not [w.value for w in at.warning], [w.value for w in at.warning]
    return at


def team_query() -> dict[str, str]:
    """TEAM as /accuracy's link carries it."""
    return page_links.load_query(
        {"profile": "team"} | TEAM.values() | {"error_band_pct": 13.6, "fitted_hardware": "H100"}
    )


def test_every_name_a_link_writes_is_declared_by_its_target():
    names = {
        "load": {p.name for p in load_link(CAT, TEAM)},
        "plan": {p.name for p in plan_link(CAT, TEAM)},
        "accuracy": {p.name for p in accuracy_link()},
    }
    assert set(page_links.LOAD_NAMES) | set(page_links.PROFILE_NAMES) <= names["load"]
    assert set(page_links.PLAN_NAMES) | set(page_links.PROFILE_NAMES) <= names["plan"]
    assert "section" in names["accuracy"]


def test_load_links_to_the_planner_with_its_model_hardware_slos_and_plan():
    at = open_page("load", LOAD)
    (query,) = links(at, "plan")
    # /load's p90 TTFT and p99 TPOT are the planner's limits; its price the accelerator's
    assert query == {
        "model": "Llama-3.1-8B",
        "hardware": "H100",
        "input_tokens": "512",
        "output_tokens": "128",
        "ttft_ms": "800",
        "tpot_ms": "40",
        "profile": "tutorial",
        "prices": "H100:3.5",
        "target_rate": "7",
    }
    plan = opened_without_warnings("plan", query)
    assert plan.selectbox(key="plan:model").value == "Llama-3.1-8B"
    assert plan.multiselect(key="plan:hardware").value == ["H100"]
    assert plan.number_input(key="plan:ttft_ms").value == 800
    assert plan.number_input(key="plan:tpot_ms").value == 40
    assert plan.number_input(key="plan:target_rate").value == 7
    assert plan.query_params["prices"] in ("H100:3.5", ["H100:3.5"])


def test_a_custom_profile_link_reaches_load_with_its_values_and_band():
    at = opened_without_warnings("load", LOAD | team_query())
    assert at.selectbox(key="load:profile").value == "team"
    shown = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "Error band of profile team: ±13.6%" in shown
    # the page's run is the engine's with the profile its link carries
    r = engine.serve_load(
        "Llama-3.1-8B",
        "H100",
        tp=1,
        profile=TEAM,
        rate=3.0,
        requests=300,
        input_tokens=512,
        output_tokens=128,
    )
    got = {m.label: m.value for m in at.metric}
    assert got["TTFT p90"] == fmt(r["ttft_ms_p90"] * 1e-3, "s")
    assert got["TPOT p99"] == fmt(r["tpot_ms_p99"] * 1e-3, "s")
    for name, value in team_query().items():  # the link it writes back carries them all
        assert at.query_params[name] in (value, [value]), name


def test_a_custom_profile_link_reaches_the_planner_with_the_numbers_of_its_values():
    base = {"model": "Llama-3.1-8B", "hardware": "H100"}
    table_open = {section_key("plan", "table"): True}  # drawn only while open
    team = opened_without_warnings("plan", base | team_query(), table_open)
    assert team.selectbox(key="plan:profile").value == "team"
    trtllm = opened_without_warnings("plan", base | {"profile": "trtllm"}, table_open)
    # the same values as trtllm's: the same ranked table, cell for cell
    tables = [next(d.value for d in at.dataframe if len(d.value) > 10) for at in (team, trtllm)]
    # 67 of the 72 (TP 1, 2, 4, 8 × fp16, fp8 × batch 1 … 256) meet TTFT ≤ 2 s and TPOT ≤ 50 ms:
    # batch 256 on TP 1 and 2 and fp16 batch 128 on TP 1 miss the TTFT; fp16 batch 256 on TP 4
    # meets it (1.85 s) since trtllm stands for trtllm-1.0
    assert len(tables[0]) == 67 and tables[0].equals(tables[1])
    said = " ".join(c.value for c in team.caption).replace("\\", "")
    assert "profile team" in said and "±13.6%" in said and "edited" not in said


def test_the_accuracy_page_links_its_profile_to_load_and_plan():
    query = {
        "profile": "team",
        **{k: v if isinstance(v, str) else f"{v:.6g}" for k, v in TEAM.values().items()},
    }
    at = open_page("accuracy", query | {"error_band_pct": "13.6", "fitted_hardware": "H100"})
    (to_load,) = links(at, "load")
    (to_plan,) = links(at, "plan")
    assert to_load == to_plan == team_query()
    opened_without_warnings("load", to_load)
    opened_without_warnings("plan", to_plan)
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download its parameters (CSV)" in labels


def test_a_fitted_profiles_parameters_as_csv():
    table = av.parameters_csv(TEAM)
    assert list(table["parameter"]) == list(engine.PROFILE_KEYS)
    row = table.set_index("parameter").loc["layer_overhead_us"]
    assert row["value"] == TEAM.values()["layer_overhead_us"] and row["unit"] == "µs"
    unset = table.set_index("parameter").loc["dispatch_overhead_ms"]
    assert pd.isna(unset["value"]) and unset["unset_means"] == "the accelerator's catalogued figure"
    csv = engine.to_csv(table)
    assert csv.splitlines()[0] == "profile,parameter,value,unit,fitted,unset_means,meaning"


def test_train_links_to_load_with_its_model_and_to_the_training_accuracy():
    at = open_page("train", {"model": "Llama-3.1-8B", "hardware": "A100", "gpus": "16"})
    (to_load,) = links(at, "load")
    assert to_load == {"model": "Llama-3.1-8B", "hardware": "A100", "precision": "bf16"}
    load = opened_without_warnings("load", to_load)
    assert load.selectbox(key="load:model").value == "Llama-3.1-8B"
    (to_accuracy,) = links(at, "accuracy")
    accuracy = opened_without_warnings("accuracy", to_accuracy)
    assert accuracy.radio(key="accuracy:section").value == "training"


def test_a_profile_edited_on_decode_or_plan_is_served_under_load_with_the_same_edits():
    """/decode's and /plan's overrides of a built-in profile travel to /load, which runs the
    profile with them (its fields show them), says its band is the profile's as fitted and
    passes them on to the planner."""
    decode = open_page("decode", {"model": "Llama-3.1-8B", "hardware": "H100", "efficiency": "0.6"})
    (to_load,) = links(decode, "load")
    assert to_load["efficiency"] == "0.6" and to_load["profile"] == "trtllm-1.0"
    load = opened_without_warnings("load", to_load | {"requests": "300"})
    assert load.number_input(key="load:efficiency").value == 0.6
    assert load.query_params["efficiency"] == "0.6"  # its own link keeps the edit
    edited = "your edits of its assumptions are not measured"
    assert any(edited in c.value for c in load.caption)
    assert links(load, "plan")[0]["efficiency"] == "0.6"
    plan = open_page("plan", {"model": "Llama-3.1-8B", "bandwidth_efficiency": "0.5"})
    assert links(plan, "load")[0]["bandwidth_efficiency"] == "0.5"
    # the edit is run, not only shown: the same deployment unedited saturates at a higher rate
    # (8B fp16 at 1500/300 tokens on one H100: a lower compute efficiency, 0.6 against the
    # profile's 0.867, slows the prefill that takes most of each request's GPU time)
    unedited = open_page("load", {k: v for k, v in to_load.items() if k != "efficiency"})
    assert not any(edited in c.value for c in unedited.caption)
    label = "Saturation, fast path (requests/s)"
    rates = [float(next(m.value for m in at.metric if m.label == label)) for at in (load, unedited)]
    assert rates[0] < rates[1], rates


def test_every_override_of_decode_and_plan_is_a_field_on_load():
    """No edit is left behind on the way to /load: each assumption /decode or the planner lets
    the user override is one of /load's fields (and the planner's, for /load's link to it)."""
    load, plan = load_link(CAT, None), plan_link(CAT, None)
    for name in (*DECODE_OVERRIDES, *page_links.SERVING_OVERRIDES):
        assert name in load and load[name].widget != "link", name
        assert name in plan and plan[name].widget != "link", name


def test_a_built_in_profiles_values_that_load_cannot_use_are_said_not_dropped():
    # /load has no field for a profile's assumptions: a built-in profile runs as fitted there
    query = {"model": "Llama-3.1-8B", "tp": "1", "profile": "trtllm-1.0"}
    at = open_page("load", query | {"requests": "300", "sequence_overhead_us": "30"})
    text = " ".join(w.value.replace("\\", "") for w in at.warning)
    assert "sequence_overhead_us=30: not used: profile trtllm-1.0 is built in" in text
    assert "sequence_overhead_us" not in at.query_params  # the link is what the page ran
    # a custom profile's link carries the same names as its own values: used, nothing said
    at = open_page("load", team_query() | {"model": "Llama-3.1-8B", "tp": "1", "requests": "300"})
    assert not [w.value for w in at.warning if "not used" in w.value]


def test_decode_says_a_pipelines_static_batch_idles_and_links_to_load_with_its_stages():
    """/decode prices a static batch: with pp 4 each device idles 3/4 of the time, which
    /load's continuous batching does not (a batch on every stage); the page says so beside
    the bounds, and its link to /load carries the stages."""
    at = open_page(
        "decode", {"model": "Llama-3.3-70B", "hardware": "H100", "pp": "4", "precision": "fp8"}
    )
    said = [c.value for c in at.caption if c.value.startswith("PP 4:")]
    assert said and "idles 75% of the time" in said[0]
    assert links(at, "load")[0]["pp"] == "4"
    one = open_page("decode", {"model": "Llama-3.1-8B", "hardware": "H100"})
    assert not [c.value for c in one.caption if c.value.startswith("PP ")]


def test_the_planner_says_its_pp_rows_are_static_batches_and_where_pp_is_priced_under_load():
    """The planner's table prices a static batch: with PP 4 in its grid, each device idles up
    to 3/4 of the time there, which its section under load does not (a batch on every stage);
    the page says so, and says nothing without PP."""
    at = open_page("plan", {"model": "Llama-3.1-70B", "hardware": "H100", "pp": "1,2,4"})
    said = [c.value for c in at.caption if c.value.startswith("PP rows here are static")]
    assert said and "up to 75% at PP 4" in said[0] and "Under load: replicas" in said[0]
    one = open_page("plan", {"model": "Llama-3.1-70B", "hardware": "H100"})
    assert not [c.value for c in one.caption if c.value.startswith("PP rows")]


def test_load_says_how_a_pipeline_runs_its_batches_as_a_note_not_a_warning():
    """A pipeline's batches in flight are how the replica runs, not a problem: /load shows the
    engine's note as information, with the replica's limits, and warns of nothing about it."""
    query = {"model": "Llama-3.3-70B", "tp": "1", "pp": "4", "precision": "fp8", "requests": "300"}
    at = open_page("load", query)
    notes = [i.value for i in at.info if "batches are in flight" in i.value]
    assert notes and "up to 8,192 sequences and 32,768 tokens a step" in notes[0]
    assert not [w.value for w in at.warning if "in flight" in w.value]
